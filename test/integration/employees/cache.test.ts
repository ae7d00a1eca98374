import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { AgentCore } from '../../../src/core';
import { locationDescription } from '../../../src/employees/locations';
import { StaffService } from '../../../src/employees/service';
import { silentLogger } from '../../../src/log';
import { storeFilePath } from '../../../src/store/database';
import { startTestAgent } from '../../helpers/agent';
import { tempDir } from '../../helpers/fixtures';
import { SIM_TODAY, startSimulator, staffConfig } from './sim';

const simNow = () => new Date(`${SIM_TODAY}T10:00:00Z`);

async function syncedService(options: Parameters<typeof startSimulator>[0] = {}, employees: Record<string, unknown> = {}) {
  const { sim, running } = await startSimulator(options);
  const config = staffConfig(running.url, employees, { dataDir: tempDir() });
  const core = new AgentCore(config, silentLogger);
  const staff = new StaffService(config, silentLogger, { db: core.staffDb, now: simNow });
  return { sim, running, config, core, staff };
}

describe('staff cache: sync, then lookups offline', async () => {
  const { sim, running, core, staff } = await syncedService({ employees: 60 });

  it('a full sync stores everything and records freshness', async () => {
    const report = await staff.sync();
    assert.deepEqual(report.errors, []);
    assert.equal(report.mode, 'full');
    assert.equal(report.counts.employees, sim.data.employees.length);
    assert.equal(report.counts.employments, sim.data.employments.length);
    assert.deepEqual([report.counts.divisions, report.counts.sources, report.counts.locations], [4, 5, 4]);
    for (const f of staff.freshness()) {
      assert.equal(f.refreshedAt !== null, true, f.resource);
      assert.equal(f.stale, false);
      assert.equal(f.lastMode, 'full');
    }
    const raw = core.staffDb.prepare('SELECT raw FROM staff_employees WHERE employee_id = 1002').get() as { raw: string };
    assert.equal(JSON.parse(raw.raw).EmailAddress, '1002@staff.example', 'the raw record is stored whole');
  });

  it('lookups work with the simulator stopped', async () => {
    await running.close();
    const hit = staff.search('zoe', 5);
    assert.deepEqual(hit.results.map((r) => r.name), ['Zoë Müller']);
    assert.equal(hit.freshness.resource, 'employees');
    assert.notEqual(hit.freshness.refreshedAt, null);

    const zoe = staff.show(1002)!;
    assert.equal(zoe.furloughed, true);
    assert.equal(zoe.contractHours, 18.5);
    assert.deepEqual(zoe.manager, { name: 'Siobhán Ó Súilleabháin', employeeNumber: 'E1001', employeeId: 1001 });
    assert.equal(zoe.residency.status, 'pre-settled');
    assert.equal(zoe.residency.daysToExpiry, 30);
    assert.match(zoe.residency.warning!, /in 30 days/);

    const lukasz = staff.show(1003)!;
    assert.equal(lukasz.ir35, true);
    assert.equal(lukasz.residency.warning, null, 'TLR expiring in 90 days is outside the 60-day window');
    assert.equal(lukasz.manager!.name, 'François Dvořák');

    const jose = staff.show(1004)!;
    assert.equal(jose.former, true, 'former employees are kept but marked');
    assert.notEqual(jose.formerSince, null);
    assert.equal(staff.show(999_999), null);

    const warned = staff.residencyWarnings().map((w) => w.employee.employeeId);
    assert.ok(warned.includes(1002) && warned.includes(1006) && warned.includes(1007));
    assert.ok(!warned.includes(1003));
    assert.equal(staff.residencyWarnings()[0]!.residency.daysToExpiry! <= staff.residencyWarnings().at(-1)!.residency.daysToExpiry!, true);

    assert.equal(staff.locationName(102), 'Temple Bar');
    assert.deepEqual(staff.locationTimezone(103), { timezone: 'Europe/Jersey', source: 'country', note: null });
    assert.equal(core.timezoneFor(102), 'Europe/Dublin', 'the core defaults a location timezone from its Country');
    assert.equal(locationDescription(core.staffDb, 104), 'Blackrock');
  });

  it('a sync while offline fails per resource, keeps the cache and records the error', async () => {
    const report = await staff.sync();
    assert.equal(report.errors.length, 5);
    assert.equal(staff.search('müller').results.length, 1);
    const f = staff.freshness().find((x) => x.resource === 'employees')!;
    assert.match(f.lastError!, /could not be reached/);
    assert.notEqual(f.refreshedAt, null);
  });
});

describe('staff cache: search quality', async () => {
  const { staff } = await syncedService({ employees: 300 });
  await staff.sync();

  it('partial, case-insensitive and accent-insensitive, in both directions', () => {
    const names = (q: string) => staff.search(q, 50).results.map((r) => r.name);
    assert.ok(names('ZOË').includes('Zoë Müller'));
    assert.ok(names('mull').includes('Zoë Müller'));
    assert.ok(names('Muller').includes('Zoë Müller'));
    assert.ok(names('łukasz').includes('Łukasz Wiśniewski'));
    assert.ok(names('lukasz wisn').includes('Łukasz Wiśniewski'));
    assert.ok(names('wisniewski lukasz').includes('Łukasz Wiśniewski'), 'terms in any order');
    assert.ok(names('odegaard').includes('Björn Ødegaard'));
    assert.ok(names('huong').some((n) => n.startsWith('Nguyễn')), 'preferred name is searchable');
    assert.ok(names("o'sullivan").includes("Renée O'Sullivan"));
    assert.ok(names('osullivan').includes("Renée O'Sullivan"));
    assert.ok(names('suilleabhain').includes('Siobhán Ó Súilleabháin'));
    assert.deepEqual(names('no such person'), []);
    assert.deepEqual(names('%'), [], 'LIKE wildcards are literal');
  });

  it('finds by employee number, exact number first', () => {
    const r = staff.search('e1002').results;
    assert.equal(r[0]!.employeeId, 1002);
    const partial = staff.search('E100').results.map((x) => x.employeeId);
    assert.ok([1001, 1002, 1003, 1005].every((id) => partial.includes(id)));
  });

  it('current staff before former, limit and truncation', () => {
    const all = staff.search('e', 500).results;
    const firstFormer = all.findIndex((r) => r.former);
    assert.ok(firstFormer > 0);
    assert.ok(all.slice(firstFormer).every((r) => r.former), 'former staff listed last');
    const limited = staff.search('e', 5);
    assert.equal(limited.results.length, 5);
    assert.equal(limited.truncated, true);
  });
});

describe('staff cache: incremental pulls, former staff, malformed answers', async () => {
  const { sim, core, staff } = await syncedService({ employees: 20 });

  it('a second sync is a delta that picks up changes and newly former staff', async () => {
    await staff.sync();
    sim.updateEmployee(1005, { FirstName: 'Bjørn', LeaveDate: '2026-02-01' });
    sim.requests.length = 0;
    const report = await staff.sync();
    assert.equal(report.mode, 'delta');
    assert.equal(report.counts.employees, 1);
    const q = sim.requests.find((r) => r.path === '/organisations/42/Employees')!.query;
    assert.deepEqual([q.delta, q.dateFrom], ['true', '2026-03-01']);
    const bjorn = staff.show(1005)!;
    assert.equal(bjorn.name, 'Bjørn Ødegaard');
    assert.equal(bjorn.former, true);
    assert.equal(staff.search('zoe').results.length, 1, 'others untouched by the delta');
  });

  it("keeps a person's other jobs when one of them changes (employments are pulled in full)", async () => {
    const first = sim.data.employments.find((m) => m.EmployeeID === 1002)!;
    sim.data.employments.push({ ...first, JobTitle: 'Barista (Sundays)', LastModified: '2026-01-10T09:00:00' });
    await staff.sync();
    assert.equal(staff.show(1002)!.employments.length, 2);
    Object.assign(first, { JobTitle: 'Head Server', LastModified: `${sim.today()}T12:00:00` });
    sim.requests.length = 0;
    const report = await staff.sync();
    assert.equal(report.mode, 'delta', 'employees by delta');
    const q = sim.requests.find((r) => r.path === '/organisations/42/Employees/Employments')!.query;
    assert.equal(q.delta, undefined, 'employments in full');
    assert.deepEqual(staff.show(1002)!.employments.map((e) => e.raw.JobTitle).sort(), ['Barista (Sundays)', 'Head Server']);
  });

  it('a malformed answer gives a typed error and leaves the cache intact', async () => {
    const before = core.staffDb.prepare('SELECT count(*) AS n, group_concat(display_name) AS names FROM staff_employees').get();
    sim.fail({ kind: 'malformed', match: '/Employees', times: 5 });
    const report = await staff.sync({ full: true });
    sim.clearFaults();
    assert.deepEqual(report.errors.map((e) => e.resource).sort(), ['employees', 'employments']);
    assert.match(report.errors[0]!.message, /cannot read: not JSON/);
    assert.deepEqual(core.staffDb.prepare('SELECT count(*) AS n, group_concat(display_name) AS names FROM staff_employees').get(), before);
    assert.equal(staff.freshness().find((f) => f.resource === 'locations')!.lastError, null, 'other resources still refreshed');
  });

  it('a full pull removes people the service no longer returns, and what this agent submitted for them', async () => {
    const gone = sim.data.employees.findIndex((e) => e.EmployeeID === 2003);
    const number = String(sim.data.employees[gone]!.EmployeeNumber);
    const submit = core.staffDb.prepare('INSERT OR REPLACE INTO staff_submitted_residency (employee_number, fields, submitted_at) VALUES (?, ?, ?)');
    // Times on the test's clock (the service's today).
    const today = Date.parse(`${sim.today()}T12:00:00Z`);
    submit.run(number, '{"SettledStatus":"Yes","SettledStatusShareCode":"11112222333344445555"}', new Date(today - 3 * 86_400_000).toISOString());
    // Sent today for someone the service does not list yet: kept.
    submit.run('E9999', '{"SettledStatus":"Yes"}', new Date(today).toISOString());
    sim.data.employees.splice(gone, 1);
    await staff.sync({ full: true });
    assert.equal(staff.show(2003), null);
    const left = core.staffDb.prepare('SELECT employee_number FROM staff_submitted_residency ORDER BY 1').all() as { employee_number: string }[];
    assert.ok(!left.some((r) => r.employee_number === number), `the removed person's submission stayed: ${JSON.stringify(left)}`);
    assert.ok(left.some((r) => r.employee_number === 'E9999'), 'a submission of today was removed');
  });

  it('falls back to a full pull when the service refuses delta', async () => {
    const other = await syncedService({ employees: 5, rejectDelta: true });
    await other.staff.sync();
    const report = await other.staff.sync();
    assert.deepEqual(report.errors, []);
    assert.equal(report.mode, 'full');
  });
});

describe('holiday accrual: live with cached fallback', async () => {
  const { sim, running, staff } = await syncedService({ employees: 5 }, { accrualMaxAgeMinutes: 0 });

  it('fetches live, then shows the cached value with its time and reason when offline', async () => {
    await staff.sync();
    const live = (await staff.accrual(1002))!;
    assert.equal(live.source, 'live');
    assert.equal(live.balanceText, '42.75 Hours');
    assert.equal(live.flexible, true);
    const nonFlex = (await staff.accrual(1005))!;
    assert.equal(nonFlex.avgHoursPerWeek, null, 'not applicable, not zero hours');
    assert.equal(staff.show(1002)!.accrual!.units, 42.75, 'show() includes the cached balance');

    sim.fail({ kind: 'status', status: 500, times: 10 });
    const cached = (await staff.accrual(1002))!;
    assert.equal(cached.source, 'cache');
    assert.equal(cached.fetchedAt, live.fetchedAt);
    assert.match(cached.liveError!, /HTTP 500/);
    await assert.rejects(staff.accrual(1003), { id: 'employee_api_server_error' }, 'nothing cached: the error is shown');
    sim.clearFaults();
    assert.equal(await staff.accrual(424242), null);
    await running.close();
  });
});

describe('StaffService as an agent service', () => {
  it('syncs on start, is found by name, and purges', async () => {
    const { running } = await startSimulator({ employees: 3 });
    const config = staffConfig(running.url, { syncIntervalMinutes: 60 });
    const staff = new StaffService(config, silentLogger);
    const agent = await startTestAgent({ employees: config.employees, dataDir: config.dataDir }, { services: [staff] });
    assert.equal(agent.agent.service<StaffService>('staff'), staff);
    for (let i = 0; i < 100 && staff.freshness().some((f) => f.refreshedAt === null); i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(staff.search('siobhan').results.length, 1);
    const staffFile = storeFilePath(config.dataDir, 'staff');
    const onDisk = (): string => [staffFile, `${staffFile}-wal`].map((f) => (fs.existsSync(f) ? fs.readFileSync(f).toString('latin1') : '')).join('');
    assert.match(onDisk(), /Siobhan/i, 'the cached name is in staff.db before the purge');
    const removed = staff.purge();
    assert.ok(removed.staff_employees! > 0);
    // No page of staff.db (or its write-ahead log) keeps the purged personal data.
    assert.doesNotMatch(onDisk(), /Siobhan/i);
    assert.equal(staff.search('siobhan').results.length, 0);
    assert.equal(staff.freshness()[0]!.refreshedAt, null);
  });
});

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { AgentCore } from '../../../src/core';
import type { Fault } from '../../../src/dev/employee-api/app';
import type { Freshness, StaffResource } from '../../../src/employees/model';
import { StaffService } from '../../../src/employees/service';
import { silentLogger, type Logger } from '../../../src/log';
import { tempDir } from '../../helpers/fixtures';
import { SIM_TODAY, startSimulator, staffConfig } from './sim';

/**
 * One endpoint of the employee service that is slow, never answers, or stops part-way through its
 * body fails alone: its resource keeps its cached copy and records why, and the rest of the sync
 * still runs, employees first. Real HTTP on loopback (the simulator), real SQLite files.
 *
 * Nothing here measures time. A faulty endpoint costs the configured per-attempt timeout (sim.ts:
 * far above a normal answer from the in-process simulator); which attempts were made is read from
 * the simulator's request log, and the sync's clock is injected so refresh times are exact.
 */

const REFERENCE: readonly { path: string; resource: StaffResource }[] = [
  { path: '/Locations', resource: 'locations' },
  { path: '/Divisions', resource: 'divisions' },
  { path: '/EmployeeSource', resource: 'sources' },
];

/** A clock the test moves: every write of the sync is stamped with it. */
function steppedClock(): { now: () => Date; next: () => string } {
  let at = Date.parse(`${SIM_TODAY}T09:00:00.000Z`);
  return {
    now: () => new Date(at),
    next: () => {
      at += 3_600_000;
      return new Date(at).toISOString();
    },
  };
}

/** A simulator, a staff cache on its own data folder, and a first clean sync. */
async function synced(employees: Record<string, unknown> = {}, log: Logger = silentLogger) {
  const { sim, running } = await startSimulator({ employees: 12 });
  const config = staffConfig(running.url, { retries: 1, ...employees }, { dataDir: tempDir() });
  const core = new AgentCore(config, silentLogger);
  const clock = steppedClock();
  const staff = new StaffService(config, log, { db: core.staffDb, now: clock.now });
  const first = await staff.sync();
  assert.deepEqual(first.errors, [], 'the first sync is clean');
  const firstAt = clock.now().toISOString();
  const before = { firstAt, locations: staff.locations(), freshness: byResource(staff.freshness()) };
  const close = async (): Promise<void> => {
    await staff.stop();
    core.close();
  };
  return { sim, running, config, core, staff, clock, before, close };
}

function byResource(list: readonly Freshness[]): Record<StaffResource, Freshness> {
  return Object.fromEntries(list.map((f) => [f.resource, f])) as Record<StaffResource, Freshness>;
}

/** The paths the simulator was asked for since `from`, without the organisation prefix. */
function asked(requests: readonly { path: string }[], from = 0): string[] {
  return requests.slice(from).map((r) => r.path.replace(/^\/organisations\/\d+/, ''));
}

/** Resolves when `check` holds (no timing threshold: the test's own timeout bounds it). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 10));
}

describe('staff sync: one endpoint that does not answer does not hold back the others', async () => {
  for (const { path: list, resource } of REFERENCE) {
    for (const kind of ['hang', 'stall'] as const) {
      it(`${list} ${kind === 'hang' ? 'never answers' : 'stops part-way through its body'}: employees and the other lists are refreshed, ${resource} keeps its cache and says why`, async () => {
        const t = await synced({ retries: 0 });
        try {
          t.sim.updateEmployee(1001, { FirstName: 'Siobhan-Renamed' });
          t.sim.fail({ kind, match: list, times: Infinity } satisfies Fault);
          const from = t.sim.requests.length;
          const syncAt = t.clock.next();
          const report = await t.staff.sync();

          assert.deepEqual(
            report.errors.map((e) => e.resource),
            [resource],
            'only the list that did not answer failed',
          );
          assert.equal(report.errors[0]!.message, `the employee service did not answer GET ${list} in time`);
          assert.deepEqual(asked(t.sim.requests, from), ['/Employees', '/Employees', '/Employees/Employments', '/Locations', '/Divisions', '/EmployeeSource'], 'every list asked once');

          const after = byResource(t.staff.freshness());
          for (const other of ['employees', 'employments', ...REFERENCE.map((r) => r.resource).filter((r) => r !== resource)] as StaffResource[]) {
            assert.equal(after[other].refreshedAt, syncAt, `${other} refreshed by this sync`);
            assert.equal(after[other].lastError, null, other);
          }
          assert.match(t.staff.show(1001)!.name, /Siobhan-Renamed/, 'the employees were refreshed');

          // The list that did not answer: its previous copy, kept whole, and the reason on its own line.
          assert.equal(after[resource].refreshedAt, t.before.freshness[resource].refreshedAt);
          assert.equal(after[resource].records, t.before.freshness[resource].records);
          assert.equal(after[resource].lastAttemptAt, syncAt);
          assert.equal(after[resource].lastError, report.errors[0]!.message);
          assert.doesNotMatch(after[resource].lastError!, /not asked/);
          assert.deepEqual(t.staff.locations(), t.before.locations);
          assert.equal(t.staff.locationName(101), 'The Crown, Islington');

          // The window's offline banner follows the staff data, which was refreshed.
          assert.deepEqual(t.staff.link, { problem: null, since: null, retry: null });
        } finally {
          await t.close();
        }
      });
    }
  }

  it('while a reference list waits to try again, the employees are already refreshed and the link shows no problem', async () => {
    // A retry wait far longer than the test: only retryNow() ends it.
    const warnings: string[] = [];
    const log: Logger = { ...silentLogger, warn: (...args: unknown[]) => warnings.push(args.map(String).join(' ')) };
    const t = await synced({ retryBaseDelayMs: 240_000, retryMaxDelayMs: 240_000 }, log);
    try {
      t.sim.updateEmployee(1001, { FirstName: 'Siobhan-Renamed' });
      t.sim.fail({ kind: 'hang', match: '/Locations', times: 1 });
      const syncAt = t.clock.next();
      const sync = t.staff.sync();
      await until(() => warnings.some((w) => /GET \/Locations in time; retrying in/.test(w)));
      assert.equal(t.staff.syncing, true);
      assert.equal(t.staff.employeesFreshness().refreshedAt, syncAt, 'employees came first');
      assert.match(t.staff.show(1001)!.name, /Siobhan-Renamed/);
      assert.deepEqual(t.staff.link, { problem: null, since: null, retry: null }, 'no offline banner for a reference list');
      assert.equal(t.staff.retryNow(), true, 'the list was waiting to try again');
      const report = await sync;
      assert.deepEqual(report.errors, [], 'its second attempt was answered');
      assert.equal(byResource(t.staff.freshness()).locations.refreshedAt, syncAt);
    } finally {
      await t.close();
    }
  });

  it('the employees list not answering does not stop employments or the reference lists', async () => {
    const t = await synced();
    try {
      // Its two attempts come first, so they are the ones that hang (the match also covers employments).
      t.sim.fail({ kind: 'hang', match: '/Employees', times: 2 });
      const from = t.sim.requests.length;
      const syncAt = t.clock.next();
      const report = await t.staff.sync();
      assert.deepEqual(report.errors.map((e) => e.resource), ['employees']);
      assert.match(report.errors[0]!.message, /did not answer GET \/organisations\/42\/Employees\?\S*showFormer=true in time/);
      assert.deepEqual(asked(t.sim.requests, from), ['/Employees', '/Employees', '/Employees/Employments', '/Locations', '/Divisions', '/EmployeeSource']);
      const after = byResource(t.staff.freshness());
      for (const r of ['employments', 'locations', 'divisions', 'sources'] as StaffResource[]) assert.equal(after[r].refreshedAt, syncAt, r);
      assert.equal(after.employees.refreshedAt, t.before.freshness.employees.refreshedAt, 'the cached employees are kept');
      assert.equal(after.employees.records, t.before.freshness.employees.records);
      // The window's offline banner stays up from the employees' own last error (employments answered after).
      assert.match(after.employees.lastError!, /did not answer/);
    } finally {
      await t.close();
    }
  });

  it('a service that answers nothing at all: two lists unanswered in a row, the rest not asked, every cache kept', async () => {
    const t = await synced();
    try {
      t.sim.fail({ kind: 'hang', times: Infinity });
      const from = t.sim.requests.length;
      t.clock.next();
      const report = await t.staff.sync();
      assert.deepEqual(asked(t.sim.requests, from), ['/Employees', '/Employees', '/Employees/Employments', '/Employees/Employments']);
      assert.deepEqual(report.errors.map((e) => e.resource), ['employees', 'employments', 'locations', 'divisions', 'sources']);
      assert.match(report.errors[1]!.message, /^the employee service did not answer GET \/organisations\/42\/Employees\/Employments\?showFormer=true in time/);
      for (const e of report.errors.slice(2)) assert.equal(e.message, `not asked: ${report.errors[1]!.message}`);
      const after = byResource(t.staff.freshness());
      for (const r of Object.keys(after) as StaffResource[]) {
        assert.equal(after[r].refreshedAt, t.before.freshness[r].refreshedAt, r);
        assert.equal(after[r].records, t.before.freshness[r].records, r);
      }
    } finally {
      t.sim.clearFaults();
      await t.close();
    }
  });

  it('stopping the agent mid-call ends the sync at once: the lists after it are not asked', async () => {
    const t = await synced({ timeoutMs: 240_000 });
    try {
      t.sim.fail({ kind: 'hang', times: Infinity });
      const from = t.sim.requests.length;
      const sync = t.staff.sync();
      await until(() => t.sim.requests.length > from);
      await t.staff.stop();
      const report = await sync;
      assert.deepEqual(report.errors.map((e) => e.resource), ['employees', 'employments', 'locations', 'divisions', 'sources']);
      assert.match(report.errors[0]!.message, /cancelled: the agent is stopping/);
      for (const e of report.errors.slice(1)) assert.equal(e.message, `not asked: ${report.errors[0]!.message}`);
      assert.deepEqual(asked(t.sim.requests, from), ['/Employees']);
    } finally {
      t.sim.clearFaults();
      await t.close();
    }
  });

  it('staff sync on the command line: the list that did not answer is named as failed, the employees are refreshed, exit 1', async () => {
    const { sim, running } = await startSimulator({ employees: 12 });
    const dir = tempDir();
    const config = path.join(dir, 'config.json');
    fs.writeFileSync(config, JSON.stringify({ dataDir: path.join(dir, 'data'), admin: { enabled: false }, employees: { baseUrl: running.url, organisationId: 42, timeoutMs: 2000, retries: 0 } }));
    const first = await cli(['staff', 'sync', '--config', config]);
    assert.equal(first.code, 0, first.stdout + first.stderr);
    sim.fail({ kind: 'stall', match: '/Locations', times: Infinity });
    const r = await cli(['staff', 'sync', '--config', config]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /^ {2}FAILED locations: the employee service did not answer GET \/Locations in time \(the cached data was kept\)$/m);
    assert.equal(r.stdout.match(/FAILED/g)?.length, 1, r.stdout);
    const json = await cli(['staff', 'locations', '--config', config, '--json']);
    assert.equal(json.code, 0, json.stderr);
    assert.match(json.stdout, /The Crown, Islington/, 'the cached locations are still there');
  });
});

const BIN = path.resolve(__dirname, '..', '..', '..', 'bin', 'pos-sync-agent.cjs');

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { freePort, waitFor } from '../../../src/dev/child-agent';
import { tempDir } from '../../helpers/fixtures';
import { createSiteData } from '../../helpers/site-data';
import { startSimulator } from './sim';

const BIN = path.resolve(__dirname, '..', '..', '..', 'bin', 'pos-sync-agent.cjs');

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('staff CLI', async () => {
  const { sim, running } = await startSimulator({ auth: { type: 'bearer', token: 'cli-secret-token' } });
  const dir = tempDir();
  const config = path.join(dir, 'config.json');
  fs.writeFileSync(
    config,
    JSON.stringify({ dataDir: path.join(dir, 'data'), admin: { enabled: false }, employees: { baseUrl: running.url, organisationId: 42, auth: { type: 'bearer', token: 'cli-secret-token' }, retries: 0 } }),
  );

  it('sync, search --json, show', async () => {
    const sync = await cli(['staff', 'sync', '--config', config, '--json']);
    assert.equal(sync.code, 0, sync.stderr);
    assert.equal(JSON.parse(sync.stdout).report.counts.employees, sim.data.employees.length);
    const search = await cli(['staff', 'search', 'renee', '--config', config, '--json']);
    assert.equal(search.code, 0, search.stderr);
    assert.deepEqual(JSON.parse(search.stdout).results.map((r: { employeeId: number }) => r.employeeId), [1007]);
    const show = await cli(['staff', 'show', 'E1003', '--config', config]);
    assert.equal(show.code, 0, show.stderr);
    assert.match(show.stdout, /Łukasz Wiśniewski/);
    assert.match(show.stdout, /IR35: yes/);
    assert.match(show.stdout, /manager: François Dvořák \(E1008\)/);
    const cfgShown = await cli(['config', '--config', config]);
    assert.ok(!cfgShown.stdout.includes('cli-secret-token'), 'the token is masked');
  });

  it('show and accrual take an employee number in any case, a former employee too', async () => {
    const show = await cli(['staff', 'show', 'e1004', '--config', config]);
    assert.equal(show.code, 0, show.stderr);
    assert.match(show.stdout, /José García-Núñez/);
    const accrual = await cli(['staff', 'accrual', 'E1004', '--config', config]);
    assert.match(accrual.stdout, /Holiday balance/);
  });

  it('residency says how fresh the cache is, and gives no all-clear from one never synced', async () => {
    const fresh = await cli(['staff', 'residency', '--config', config]);
    assert.equal(fresh.code, 0, fresh.stderr);
    assert.match(fresh.stdout, /^employees: \d+ records, refreshed /m);
    const other = tempDir();
    createSiteData(path.join(other, 'data'));
    const neverConfig = path.join(other, 'config.json');
    fs.writeFileSync(neverConfig, JSON.stringify({ dataDir: path.join(other, 'data'), admin: { enabled: false }, employees: { baseUrl: running.url, organisationId: 42, auth: { type: 'bearer', token: 'cli-secret-token' }, retries: 0 } }));
    const never = await cli(['staff', 'residency', '--config', neverConfig]);
    assert.equal(never.code, 1, never.stdout);
    assert.match(never.stdout, /employees: never synced/);
    assert.match(never.stdout, /Nothing to check: run pos-sync-agent staff sync --config /);
    assert.doesNotMatch(never.stdout, /No residency status expires/);
  });

  it('submit with invalid fields: exit 4, every field error, nothing sent', async () => {
    const file = path.join(dir, 'bad.json');
    fs.writeFileSync(file, JSON.stringify([{ EmployeeNumber: 'E1', SettledStatus: 'Yes', TemporaryLeaveToRemain: 'yes', TemporaryLeaveToRemainExpiryDate: '2027-13-01' }]));
    sim.requests.length = 0;
    const r = await cli(['staff', 'submit', file, '--config', config]);
    assert.equal(r.code, 4);
    assert.match(r.stderr, /Nothing was sent: 3 field errors/);
    assert.match(r.stderr, /SettledStatus only one of/);
    assert.match(r.stderr, /TemporaryLeaveToRemainExpiryDate must be a real date/);
    assert.equal(sim.requests.length, 0);
  });

  it('submit a valid file', async () => {
    const file = path.join(dir, 'good.json');
    fs.writeFileSync(file, JSON.stringify([{ EmployeeNumber: 'E7777', FirstName: 'Ciarán', PreSettledStatus: 'Yes', PreSettledStatusExpiryDate: '2026-Mar-20' }]));
    const r = await cli(['staff', 'submit', file, '--config', config, '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).sent, 1);
    assert.ok(sim.data.employees.some((e) => e.EmployeeNumber === 'E7777'));
  });

  it('submit a file saved by Notepad (a UTF-8 byte-order mark and CRLF line ends)', async () => {
    const file = path.join(dir, 'notepad.json');
    const people = [{ EmployeeNumber: 'E7778', FirstName: 'Seán', LastName: 'Ó Briain' }];
    fs.writeFileSync(file, `\uFEFF${JSON.stringify(people, null, 2).replace(/\n/g, '\r\n')}\r\n`);
    sim.requests.length = 0;
    const r = await cli(['staff', 'submit', file, '--config', config, '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).sent, 1);
    assert.equal(sim.requests.filter((q) => q.method === 'POST').length, 1);
    assert.ok(sim.data.employees.some((e) => e.EmployeeNumber === 'E7778' && e.FirstName === 'Seán'));
  });
});

describe('dev employee-api', () => {
  it('runs the simulator from the build (loaded only for this command), serves it, and stops on SIGTERM', { timeout: 60_000 }, async () => {
    const port = await freePort();
    // As docs/staff.md prints it, with a port of this test's own.
    const child = spawn(process.execPath, [BIN, 'dev', 'employee-api', '--port', String(port), '--seed', '7'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await waitFor('the simulator to listen', () => out.includes('Employee interface simulator at') || child.exitCode !== null, 30_000);
      assert.match(out, new RegExp(`Employee interface simulator at http://127\\.0\\.0\\.1:${port}\\S* \\(organisation 1, \\d+ employees\\)`), out);
      const faults = await fetch(`http://127.0.0.1:${port}/__admin/faults`);
      assert.equal(faults.status, 200);
      assert.deepEqual(await faults.json(), []);
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0, out);
  });
});

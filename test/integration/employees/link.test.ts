import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AgentCore } from '../../../src/core';
import { EmployeeClient, type AttemptEvent } from '../../../src/employees/client';
import type { StaffLink } from '../../../src/employees/model';
import { StaffService } from '../../../src/employees/service';
import { silentLogger } from '../../../src/log';
import { tempDir } from '../../helpers/fixtures';
import { startSimulator, staffConfig } from './sim';

/**
 * The employee service's live state (issue 27: the staff banner took ~12.7 s to appear). Each attempt
 * is reported as it happens; a sync does not ask every list in turn once the service cannot be
 * reached; a waiting retry can be started at once. Real HTTP on loopback, no clock: the retry waits
 * are minutes long and only retryNow() ends them.
 */

const LONG_WAIT = { retryBaseDelayMs: 240_000, retryMaxDelayMs: 240_000 };

/** Resolves when `check` holds, polling the service's state (no timing threshold: the test's timeout bounds it). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 10));
}

describe('employee service state, attempt by attempt', async () => {
  const { sim, running } = await startSimulator();
  const url = running.url;

  it('the client reports a failed attempt and its scheduled retry before the retry runs; retryNow starts it', async () => {
    const closed = await startSimulator();
    await closed.running.close();
    const events: AttemptEvent[] = [];
    const client = new EmployeeClient(staffConfig(closed.running.url, { retries: 2, ...LONG_WAIT }).employees!, { onAttempt: (e) => events.push(e) });
    const call = client.locations().then(
      () => 'answered',
      (err: Error) => err.message,
    );
    await until(() => events.length === 1);
    const first = events[0]!;
    assert.equal(first.kind, 'failed');
    assert.ok(first.kind === 'failed' && first.next !== null);
    assert.equal(first.next.attempt, 2);
    assert.equal(first.next.of, 3);
    assert.match(first.error.message, /ECONNREFUSED/);
    assert.equal(client.retryNow(), 1, 'one call was waiting');
    await until(() => events.length === 3);
    assert.deepEqual(events.slice(1, 3).map((e) => e.kind), ['retrying', 'failed']);
    assert.equal(client.retryNow(), 1);
    assert.match(await call, /could not be reached.*ECONNREFUSED.*after 3 attempts/);
    const last = events.at(-1)!;
    assert.ok(last.kind === 'failed' && last.next === null, 'the last attempt schedules nothing');
    assert.equal(client.retryNow(), 0, 'nothing waits any more');
  });

  it('a sync that cannot reach the service asks one list, not all five, and the link says so from the first attempt', async () => {
    const closed = await startSimulator();
    await closed.running.close();
    const config = staffConfig(closed.running.url, { retries: 1, ...LONG_WAIT }, { dataDir: tempDir() });
    const core = new AgentCore(config, silentLogger);
    const staff = new StaffService(config, silentLogger, { db: core.staffDb });
    try {
      assert.deepEqual(staff.link, { problem: null, since: null, retry: null });
      const sync = staff.sync();
      await until(() => staff.link.retry !== null);
      const waiting: StaffLink = staff.link;
      assert.match(waiting.problem!, /ECONNREFUSED/);
      assert.notEqual(waiting.since, null);
      assert.equal(waiting.retry!.attempt, 2);
      assert.equal(waiting.retry!.of, 2);
      assert.ok(Date.parse(waiting.retry!.at!) > Date.now(), 'the next attempt is in the future');
      assert.equal(staff.syncing, true, 'the sync is still under way while the banner can say offline');
      assert.equal(staff.retryNow(), true);
      const report = await sync;
      assert.deepEqual(report.errors.map((e) => e.resource), ['employees', 'employments', 'locations', 'divisions', 'sources']);
      assert.match(report.errors[0]!.message, /after 2 attempts/);
      for (const e of report.errors.slice(1)) assert.match(e.message, /^not asked: the employee service could not be reached/);
      assert.equal(staff.link.retry, null);
      assert.equal(staff.link.since, waiting.since, 'since stays at the first failure');
      assert.match(staff.freshness().find((f) => f.resource === 'employees')!.lastError!, /ECONNREFUSED/);
      assert.equal(staff.retryNow(), false);
    } finally {
      await staff.stop();
      core.close();
    }
  });

  it('an answer clears the problem; a list that fails with an HTTP error does not stop the others', async () => {
    const config = staffConfig(url, { retries: 0 }, { dataDir: tempDir() });
    const core = new AgentCore(config, silentLogger);
    const staff = new StaffService(config, silentLogger, { db: core.staffDb });
    try {
      sim.fail({ kind: 'status', status: 404, match: '/Divisions' });
      const report = await staff.sync();
      assert.deepEqual(report.errors.map((e) => e.resource), ['divisions'], 'a refusal of one list is not "unreachable"');
      assert.equal(report.counts.employees, sim.data.employees.length);
      assert.deepEqual(staff.link, { problem: null, since: null, retry: null }, 'the last attempt was answered');
    } finally {
      sim.clearFaults();
      await staff.stop();
      core.close();
    }
  });
});

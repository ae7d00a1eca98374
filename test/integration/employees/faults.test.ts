import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EmployeeClient } from '../../../src/employees/client';
import { EmployeeApiError } from '../../../src/employees/errors';
import { startSimulator, staffConfig } from './sim';

describe('client behaviour under each simulated failure', async () => {
  const { sim, running } = await startSimulator();
  const client = (employees: Record<string, unknown> = {}) => new EmployeeClient(staffConfig(running.url, employees).employees!);
  const attemptsOn = (path: string) => sim.requests.filter((r) => r.path.endsWith(path)).length;

  it('500 then success: retried and answered', async () => {
    sim.requests.length = 0;
    sim.fail({ kind: 'status', status: 500, times: 2, match: '/Locations' });
    assert.equal((await client().locations()).length, 4);
    assert.equal(attemptsOn('/Locations'), 3);
  });

  it('500 every time: retries exhausted, typed error with status, endpoint and server message', async () => {
    sim.requests.length = 0;
    sim.fail({ kind: 'status', status: 503, times: 10, match: '/Divisions' });
    await assert.rejects(client({ retries: 2 }).divisions(), (err: unknown) => {
      assert.ok(err instanceof EmployeeApiError);
      assert.equal(err.id, 'employee_api_server_error');
      assert.equal(err.httpStatus, 503);
      assert.equal(err.attempts, 3);
      assert.equal(err.endpoint, 'GET /Divisions');
      assert.match(err.message, /answered GET \/Divisions with HTTP 503: Simulated failure.*after 3 attempts/);
      assert.equal(err.transient, true);
      return true;
    });
    assert.equal(attemptsOn('/Divisions'), 3);
    sim.clearFaults();
  });

  it('429 with Retry-After: waits as asked, then succeeds', async () => {
    sim.requests.length = 0;
    sim.fail({ kind: 'rate', retryAfter: '1', match: '/EmployeeSource' });
    const t0 = performance.now();
    assert.equal((await client().employeeSources()).length, 5);
    const waited = performance.now() - t0;
    assert.ok(waited >= 950, `waited ${waited} ms for Retry-After: 1`);
    assert.equal(attemptsOn('/EmployeeSource'), 2);
  });

  it('429 with a Retry-After longer than the cap: no retry, a rate-limited error saying how long', async () => {
    sim.requests.length = 0;
    sim.fail({ kind: 'rate', retryAfter: '120', match: '/EmployeeSource' });
    await assert.rejects(client({ retryMaxDelayMs: 1000 }).employeeSources(), (err: unknown) => {
      assert.ok(err instanceof EmployeeApiError);
      assert.equal(err.id, 'employee_api_rate_limited');
      assert.equal(err.retryAfterMs, 120_000);
      assert.match(err.message, /wait 120 s/);
      return true;
    });
    assert.equal(attemptsOn('/EmployeeSource'), 1);
  });

  it('a dropped connection is a network error, retried', async () => {
    sim.requests.length = 0;
    sim.fail({ kind: 'drop', match: '/Locations' });
    assert.equal((await client().locations()).length, 4);
    assert.equal(attemptsOn('/Locations'), 2);
    sim.fail({ kind: 'drop', match: '/Locations', times: 5 });
    await assert.rejects(client({ retries: 1 }).locations(), (err: unknown) => err instanceof EmployeeApiError && err.failure === 'network' && err.attempts === 2);
    sim.clearFaults();
  });

  it('slow answers time out per attempt, then a fast one succeeds', async () => {
    // A per-attempt timeout far above a normal answer from this in-process simulator (so a busy machine
    // does not time out the fast attempt), and a slow answer 3x longer than it. The client aborts the
    // slow attempt on its own timer, which starts before the simulator's delay does, so the slow answer
    // never arrives in time however busy the machine is.
    const TIMEOUT_MS = 2_000;
    const SLOW_MS = 6_000;
    sim.requests.length = 0;
    sim.fail({ kind: 'slow', delayMs: SLOW_MS, match: '/Locations' });
    assert.equal((await client({ timeoutMs: TIMEOUT_MS }).locations()).length, 4);
    assert.equal(attemptsOn('/Locations'), 2, 'one attempt timed out, the retry was answered');
    sim.requests.length = 0;
    sim.fail({ kind: 'slow', delayMs: SLOW_MS, match: '/Locations', times: 3 });
    await assert.rejects(client({ timeoutMs: TIMEOUT_MS, retries: 1 }).locations(), (err: unknown) => {
      assert.ok(err instanceof EmployeeApiError);
      assert.equal(err.failure, 'timeout');
      assert.equal(err.id, 'employee_api_timeout');
      assert.equal(err.attempts, 2);
      return true;
    });
    assert.equal(attemptsOn('/Locations'), 2);
    sim.clearFaults();
  });

  it('no answer at all, or a body that stops part-way: each attempt ends at the timeout, which covers the body', async () => {
    for (const kind of ['hang', 'stall'] as const) {
      sim.requests.length = 0;
      sim.fail({ kind, match: '/Locations', times: 2 });
      await assert.rejects(client({ timeoutMs: 2_000, retries: 1 }).locations(), (err: unknown) => {
        assert.ok(err instanceof EmployeeApiError, kind);
        assert.equal(err.failure, 'timeout', kind);
        assert.equal(err.attempts, 2, kind);
        assert.match(err.message, /did not answer GET \/Locations in time \(after 2 attempts\)/);
        return true;
      });
      assert.equal(attemptsOn('/Locations'), 2, kind);
      assert.equal(sim.faults.length, 0, `both ${kind} faults were used`);
    }
  });

  it('malformed JSON and a wrong shape are typed errors, not retried', async () => {
    sim.requests.length = 0;
    sim.fail({ kind: 'malformed', match: '/Employees' });
    await assert.rejects(client().employees(), (err: unknown) => {
      assert.ok(err instanceof EmployeeApiError);
      assert.equal(err.id, 'employee_api_malformed');
      assert.match(err.message, /cannot read: not JSON/);
      return true;
    });
    assert.equal(attemptsOn('/Employees'), 1);
    sim.fail({ kind: 'shape', match: '/Locations' });
    await assert.rejects(client().locations(), /expected a JSON array, got object/);
  });

  it('a record breaking a documented type names the record and field', async () => {
    const original = sim.data.locations[2]!.LocationID;
    sim.data.locations[2]!.LocationID = 'one hundred and three';
    try {
      await assert.rejects(client().locations(), /record 2: LocationID: /);
    } finally {
      sim.data.locations[2]!.LocationID = original;
    }
  });

  it('POST is not retried on 5xx by default (it may have been applied), but is on 429', async () => {
    sim.requests.length = 0;
    sim.fail({ kind: 'status', status: 502, match: '/Employees' });
    await assert.rejects(client().postEmployees([{ EmployeeNumber: 'E5000' }]), { id: 'employee_api_server_error' });
    assert.equal(attemptsOn('/Employees'), 1);
    sim.fail({ kind: 'rate', retryAfter: '0', match: '/Employees' });
    assert.equal((await client().postEmployees([{ EmployeeNumber: 'E5000' }])).status, 200);
    sim.fail({ kind: 'status', status: 502, match: '/Employees' });
    assert.equal((await client({ retryPost: true }).postEmployees([{ EmployeeNumber: 'E5000' }])).status, 200);
  });

  it('the admin route injects faults for manual use', async () => {
    const res = await fetch(`${running.url}/__admin/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'status', status: 500, match: '/Divisions' }) });
    assert.equal(res.status, 201);
    const direct = await fetch(`${running.url}/Divisions`);
    assert.equal(direct.status, 500);
    assert.equal((await fetch(`${running.url}/Divisions`)).status, 200);
  });

  it('an unreachable service is a network error after the retries', async () => {
    const closed = await startSimulator();
    const url = closed.running.url;
    await closed.running.close();
    await assert.rejects(new EmployeeClient(staffConfig(url, { retries: 1 }).employees!).locations(), (err: unknown) => {
      assert.ok(err instanceof EmployeeApiError);
      assert.equal(err.failure, 'network');
      assert.match(err.message, /could not be reached.*ECONNREFUSED/);
      return true;
    });
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_BACKOFF, decideAfterExit, mayStart, restartDelayMs, wasHealthy, type BackoffPolicy, type RunRecord, type SupervisorState } from '../../../src/electron/supervision';

const POLICY: BackoffPolicy = { baseDelayMs: 1_000, maxDelayMs: 30_000, maxFailures: 8, healthyAfterMs: 60_000 };

describe('restartDelayMs', () => {
  it('doubles from the base delay and stops at the cap', () => {
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6, 7, 8].map((n) => restartDelayMs(n, POLICY)),
      [1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000],
    );
  });
  it('stays at the cap for any number of failures (no overflow to Infinity or NaN)', () => {
    assert.equal(restartDelayMs(5_000, POLICY), 30_000);
  });
  it('refuses a count below 1 or not whole', () => {
    assert.throws(() => restartDelayMs(0, POLICY), RangeError);
    assert.throws(() => restartDelayMs(1.5, POLICY), RangeError);
  });
  it('the default policy starts at 1 s and never waits more than 30 s', () => {
    assert.equal(restartDelayMs(1), 1_000);
    assert.equal(restartDelayMs(100), DEFAULT_BACKOFF.maxDelayMs);
    assert.equal(DEFAULT_BACKOFF.maxDelayMs, 30_000);
  });
});

describe('decideAfterExit', () => {
  const fresh: RunRecord = { failures: 0, everReady: false };
  const crash = (readyAt: number | null, exitedAt: number, fatal = false) => ({ readyAt, exitedAt, fatal, stopping: false });

  it('does nothing when the shell asked the child to stop (quit)', () => {
    assert.deepEqual(decideAfterExit({ failures: 3, everReady: true }, { readyAt: 0, exitedAt: 10, fatal: false, stopping: true }, POLICY), { action: 'stay-stopped' });
  });

  it('restarts a child that crashed after being ready, with growing delays', () => {
    let record: RunRecord = { failures: 0, everReady: true };
    const delays: number[] = [];
    for (let i = 0; i < 4; i++) {
      const d = decideAfterExit(record, crash(1_000 * i, 1_000 * i + 5), POLICY);
      assert.equal(d.action, 'restart');
      if (d.action !== 'restart') return;
      delays.push(d.delayMs);
      record = d.record;
    }
    assert.deepEqual(delays, [1_000, 2_000, 4_000, 8_000]);
    assert.equal(record.failures, 4);
  });

  it('a run that stayed up healthyAfterMs after ready resets the count to the first delay', () => {
    const d = decideAfterExit({ failures: 6, everReady: true }, crash(0, 60_000), POLICY);
    assert.deepEqual(d, { action: 'restart', delayMs: 1_000, record: { failures: 1, everReady: true } });
    // One millisecond short of healthy: the series goes on.
    const e = decideAfterExit({ failures: 6, everReady: true }, crash(0, 59_999), POLICY);
    assert.deepEqual(e, { action: 'restart', delayMs: 30_000, record: { failures: 7, everReady: true } });
  });

  it('a child that never got ready is never healthy, however long it ran', () => {
    assert.equal(wasHealthy({ readyAt: null, exitedAt: 10_000_000 }, POLICY), false);
    const d = decideAfterExit({ failures: 2, everReady: true }, crash(null, 10_000_000), POLICY);
    assert.equal(d.action === 'restart' && d.record.failures, 3);
  });

  it('gives up after maxFailures deaths in a row', () => {
    const d = decideAfterExit({ failures: 7, everReady: true }, crash(100, 200), POLICY);
    assert.equal(d.action, 'give-up');
    if (d.action === 'give-up') assert.match(d.reason, /8 times in a row/);
  });

  it('gives up at once when the first child of the app run reports a fatal error before ready (configuration)', () => {
    const d = decideAfterExit(fresh, crash(null, 50, true), POLICY);
    assert.equal(d.action, 'give-up');
  });

  it('keeps trying after a fatal error once an agent has run (a port busy for a while, a disk full)', () => {
    const d = decideAfterExit({ failures: 0, everReady: true }, crash(null, 50, true), POLICY);
    assert.equal(d.action, 'restart');
  });

  it('a first child that dies before ready without a fatal message (killed) is restarted', () => {
    const d = decideAfterExit(fresh, crash(null, 50, false), POLICY);
    assert.deepEqual(d, { action: 'restart', delayMs: 1_000, record: { failures: 1, everReady: false } });
  });
});

describe('mayStart: never two children at once', () => {
  it('starts only from idle or after the back-off wait', () => {
    const states: SupervisorState[] = ['idle', 'starting', 'running', 'waiting', 'stopping', 'stopped', 'gave-up'];
    assert.deepEqual(
      states.filter((s) => mayStart(s)),
      ['idle', 'waiting'],
    );
  });
});

import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import type { ParentMessage } from '../../../src/electron/channel';
import { Supervisor, type ChildHandle } from '../../../src/electron/supervisor';
import { silentLogger } from '../../../src/log';

/**
 * The supervisor's wiring with stand-in children and Node's mock timers (the real processes: the
 * integration test with child_process.fork). Covers what a real child cannot be made to do on cue:
 * ignore a stop, or die while a restart is pending.
 */

class FakeChild implements ChildHandle {
  static next = 100;
  readonly pid = FakeChild.next++;
  readonly sent: ParentMessage[] = [];
  killed = false;
  private messageListener: (data: unknown) => void = () => {};
  private exitListener: (code: number | null) => void = () => {};
  send(message: ParentMessage): void {
    this.sent.push(message);
  }
  kill(): void {
    this.killed = true;
    this.exit(null);
  }
  onMessage(listener: (data: unknown) => void): void {
    this.messageListener = listener;
  }
  onExit(listener: (code: number | null) => void): void {
    this.exitListener = listener;
  }
  say(data: unknown): void {
    this.messageListener(data);
  }
  exit(code: number | null): void {
    this.exitListener(code);
  }
}

const READY = { type: 'ready', adminLoginUrl: 'http://127.0.0.1:8780/?token=t', adminOrigin: 'http://127.0.0.1:8780' };

function setUp(startMessage?: () => Extract<ParentMessage, { type: 'start' }>) {
  const children: FakeChild[] = [];
  let clock = 0;
  const supervisor = new Supervisor({
    spawn: () => {
      const c = new FakeChild();
      children.push(c);
      return c;
    },
    startMessage: startMessage ?? (() => ({ type: 'start', configFile: null, secrets: {}, sources: {} })),
    log: silentLogger,
    policy: { baseDelayMs: 1_000, maxDelayMs: 4_000, maxFailures: 3, healthyAfterMs: 60_000 },
    stopGraceMs: 8_000,
    now: () => clock,
  });
  return { supervisor, children, advance: (ms: number) => (clock += ms) };
}

describe('Supervisor', () => {
  it('sends start first, then restarts a dead child after the back-off, one at a time', () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      const { supervisor, children } = setUp();
      supervisor.start();
      assert.equal(children[0]!.sent[0]!.type, 'start');
      children[0]!.say(READY);
      assert.equal(supervisor.state, 'running');
      children[0]!.exit(1);
      assert.equal(supervisor.state, 'waiting');
      supervisor.start(); // a start while waiting only brings the restart forward, it never doubles it
      assert.equal(children.length, 2);
      mock.timers.tick(1_000);
      assert.equal(children.length, 2, 'the pending timer was cancelled by the early start');
    } finally {
      mock.timers.reset();
    }
  });

  it('kills a child that does not stop within the grace period, and stop resolves', async () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      const { supervisor, children } = setUp();
      supervisor.start();
      children[0]!.say(READY);
      const stopped = supervisor.stop();
      assert.deepEqual(children[0]!.sent.at(-1), { type: 'stop' });
      assert.equal(children[0]!.killed, false);
      mock.timers.tick(8_000);
      assert.equal(children[0]!.killed, true);
      await stopped;
      assert.equal(supervisor.state, 'stopped');
      assert.equal(children.length, 1, 'nothing restarted after a stop');
    } finally {
      mock.timers.reset();
    }
  });

  it('a stop while waiting cancels the restart', async () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      const { supervisor, children } = setUp();
      supervisor.start();
      children[0]!.exit(1);
      await supervisor.stop();
      mock.timers.tick(60_000);
      assert.equal(children.length, 1);
      assert.equal(supervisor.state, 'stopped');
    } finally {
      mock.timers.reset();
    }
  });

  it('gives up after maxFailures and can be told to try again', () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      const { supervisor, children } = setUp();
      const gaveUp: string[] = [];
      supervisor.on('gave-up', ({ reason }) => gaveUp.push(reason));
      supervisor.start();
      children[0]!.say(READY);
      children[0]!.exit(1);
      mock.timers.tick(1_000);
      children[1]!.exit(1);
      mock.timers.tick(2_000);
      children[2]!.exit(1);
      assert.equal(supervisor.state, 'gave-up');
      assert.deepEqual(gaveUp, ['the agent stopped 3 times in a row']);
      mock.timers.tick(60_000);
      assert.equal(children.length, 3);
      supervisor.retry();
      assert.equal(children.length, 4);
    } finally {
      mock.timers.reset();
    }
  });

  it('gives up at once on a first-start fatal error, with its message', () => {
    const { supervisor, children } = setUp();
    let lastFatal: { id: string; message: string } | null = null;
    supervisor.on('gave-up', (e) => (lastFatal = e.lastFatal));
    supervisor.start();
    children[0]!.say({ type: 'fatal', id: 'config_invalid', message: 'webhook.port: expected number' });
    children[0]!.exit(1);
    assert.equal(supervisor.state, 'gave-up');
    assert.deepEqual(lastFatal, { id: 'config_invalid', message: 'webhook.port: expected number' });
  });

  it('a secret that cannot be read stops before any process starts', () => {
    const { supervisor, children } = setUp(() => {
      throw Object.assign(new Error('the stored webhook.bearerToken cannot be decrypted'), { id: 'secret_unreadable' });
    });
    supervisor.start();
    assert.equal(children.length, 0);
    assert.equal(supervisor.state, 'gave-up');
  });

  it('an asked-for restart (new secrets) starts a fresh child at once, not counted as a failure', () => {
    const { supervisor, children } = setUp();
    const scheduled: number[] = [];
    supervisor.on('restart-scheduled', ({ delayMs }) => scheduled.push(delayMs));
    supervisor.start();
    children[0]!.say(READY);
    children[0]!.say({ type: 'restart-request' });
    assert.deepEqual(children[0]!.sent.at(-1), { type: 'stop' });
    assert.equal(children.length, 1, 'the old one must be gone first');
    children[0]!.exit(0);
    assert.equal(children.length, 2);
    assert.deepEqual(scheduled, []);
    assert.equal(children[1]!.sent[0]!.type, 'start');
  });

  it('drops malformed messages and messages from a child that is no longer current', () => {
    const { supervisor, children } = setUp();
    const seen: string[] = [];
    supervisor.on('message', (m) => seen.push(m.type));
    supervisor.start();
    children[0]!.say({ type: 'status', colour: 'pink' });
    children[0]!.say(READY);
    assert.deepEqual(seen, ['ready']);
    assert.equal(supervisor.send({ type: 'pause', paused: true }), true);
    supervisor.restartNow();
    children[0]!.exit(0);
    children[0]!.say({ type: 'status', colour: 'green', summary: 'late', paused: false, startAtLogin: false });
    assert.deepEqual(seen, ['ready'], 'a late message from the old child is not taken as the new one');
  });
});

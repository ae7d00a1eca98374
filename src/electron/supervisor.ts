import { EventEmitter } from 'node:events';
import { AppError, describeError } from '../errors';
import type { Logger } from '../log';
import { parseChildMessage, type ChildMessage, type ParentMessage } from './channel';
import { DEFAULT_BACKOFF, decideAfterExit, mayStart, type BackoffPolicy, type RunRecord, type SupervisorState } from './supervision';

/**
 * Runs the agent process and restarts it with back-off when it dies (the rules: supervision.ts). It
 * knows the child only through ChildHandle, so the desktop shell gives it an Electron utilityProcess
 * and the tests a Node child_process.fork of the same entry file.
 */

/** One running agent process, whatever started it. */
export interface ChildHandle {
  readonly pid: number | undefined;
  send(message: ParentMessage): void;
  /** Ends it at once (SIGKILL where there is one): for a child that does not stop when asked. */
  kill(): void;
  onMessage(listener: (data: unknown) => void): void;
  onExit(listener: (code: number | null) => void): void;
}

export interface SupervisorOptions {
  readonly spawn: () => ChildHandle;
  /** The first message for each new child: configuration and secrets as they are now (a secret set since is included). */
  readonly startMessage: () => Extract<ParentMessage, { type: 'start' }>;
  readonly log: Logger;
  readonly policy?: BackoffPolicy;
  /** How long a child may take to stop when asked before it is killed (well under the 10 s a quit may take). */
  readonly stopGraceMs?: number;
  readonly now?: () => number;
}

export interface SupervisorEvents {
  /** A message from the current child, parsed (secret-set included: whoever handles it answers with send()). */
  message: [ChildMessage];
  spawned: [number | undefined];
  exit: [{ pid: number | undefined; code: number | null }];
  'restart-scheduled': [{ delayMs: number; failures: number }];
  'gave-up': [{ reason: string; lastFatal: { id: string; message: string } | null }];
  stopped: [];
}

interface Current {
  readonly handle: ChildHandle;
  readyAt: number | null;
  fatal: { id: string; message: string } | null;
  stopping: boolean;
  /** Stopped on purpose to start a fresh one at once (restart-request), not a failure. */
  replace: boolean;
}

export class Supervisor extends EventEmitter<SupervisorEvents> {
  private stateValue: SupervisorState = 'idle';
  private current: Current | null = null;
  private record: RunRecord = { failures: 0, everReady: false };
  private timer: NodeJS.Timeout | null = null;
  private killTimer: NodeJS.Timeout | null = null;
  private lastFatal: { id: string; message: string } | null = null;
  private readonly policy: BackoffPolicy;
  private readonly now: () => number;

  constructor(private readonly options: SupervisorOptions) {
    super();
    this.policy = options.policy ?? DEFAULT_BACKOFF;
    this.now = options.now ?? Date.now;
  }

  get state(): SupervisorState {
    return this.stateValue;
  }

  get pid(): number | undefined {
    return this.current?.handle.pid;
  }

  /** Starts the first child (idle) or the next one after a back-off wait; otherwise does nothing. */
  start(): void {
    if (!mayStart(this.stateValue)) return;
    this.clearTimer();
    let startMessage: Extract<ParentMessage, { type: 'start' }>;
    try {
      startMessage = this.options.startMessage();
    } catch (err) {
      // The configuration or a secret cannot be read: a new process would fail the same way.
      this.stateValue = 'gave-up';
      const reason = describeError(err);
      this.options.log.error(`[shell] cannot start the agent: ${reason}`);
      this.emit('gave-up', { reason, lastFatal: { id: err instanceof AppError ? err.id : 'start_failed', message: reason } });
      return;
    }
    let handle: ChildHandle;
    try {
      handle = this.options.spawn();
    } catch (err) {
      // Cannot even start a process (missing entry file, out of resources): counts as a death.
      this.options.log.error('[shell] cannot start the agent process:', err);
      this.stateValue = 'starting';
      this.afterExit({ handle: { pid: undefined, send() {}, kill() {}, onMessage() {}, onExit() {} }, readyAt: null, fatal: null, stopping: false, replace: false }, null);
      return;
    }
    const current: Current = { handle, readyAt: null, fatal: null, stopping: false, replace: false };
    this.current = current;
    this.stateValue = 'starting';
    handle.onMessage((data) => this.onMessage(current, data));
    handle.onExit((code) => this.afterExit(current, code));
    this.emit('spawned', handle.pid);
    handle.send(startMessage);
  }

  /** After giving up: the manager asks to try again (tray), with a fresh count. */
  retry(): void {
    if (this.stateValue !== 'gave-up') return;
    this.record = { failures: 0, everReady: this.record.everReady };
    this.lastFatal = null;
    this.stateValue = 'idle';
    this.start();
  }

  /** Sends to the running child; dropped (false) when none runs, e.g. a tray click during a restart. */
  send(message: ParentMessage): boolean {
    const current = this.current;
    if (!current || current.stopping) return false;
    current.handle.send(message);
    return true;
  }

  /** Stops the current child and starts a fresh one straight away (a secret changed). */
  restartNow(): void {
    const current = this.current;
    if (!current || current.stopping) return;
    current.replace = true;
    this.askToStop(current);
  }

  /** Stops for good (app quit): cancels a pending restart, asks the child to stop, kills it after the grace period. */
  async stop(): Promise<void> {
    this.clearTimer();
    const current = this.current;
    if (!current) {
      this.stateValue = 'stopped';
      this.emit('stopped');
      return;
    }
    current.replace = false;
    const stopped = new Promise<void>((resolve) => this.once('stopped', resolve));
    this.stateValue = 'stopping';
    if (!current.stopping) this.askToStop(current);
    await stopped;
  }

  private askToStop(current: Current): void {
    current.stopping = true;
    if (this.stateValue !== 'stopping') this.stateValue = 'stopping';
    try {
      current.handle.send({ type: 'stop' });
    } catch {
      // The channel is already gone: the kill below ends it.
    }
    this.killTimer = setTimeout(() => {
      this.options.log.warn('[shell] the agent process did not stop in time; killing it');
      current.handle.kill();
    }, this.options.stopGraceMs ?? 8_000);
  }

  private onMessage(current: Current, data: unknown): void {
    if (current !== this.current) return;
    const parsed = parseChildMessage(data);
    if (!parsed.ok) {
      this.options.log.warn(`[shell] ignored a malformed message from the agent process (${parsed.reason})`);
      return;
    }
    const message = parsed.message;
    if (message.type === 'ready') {
      current.readyAt = this.now();
      if (this.stateValue === 'starting') this.stateValue = 'running';
    } else if (message.type === 'fatal') {
      current.fatal = { id: message.id, message: message.message };
      this.lastFatal = current.fatal;
    } else if (message.type === 'restart-request') {
      this.restartNow();
      return;
    }
    this.emit('message', message);
  }

  private afterExit(current: Current, code: number | null): void {
    if (current !== this.current && this.current !== null) return;
    this.current = null;
    if (this.killTimer) clearTimeout(this.killTimer);
    this.killTimer = null;
    this.emit('exit', { pid: current.handle.pid, code });
    const quitting = this.stateValue === 'stopping' && !current.replace;
    if (quitting || this.stateValue === 'stopped') {
      this.stateValue = 'stopped';
      this.emit('stopped');
      return;
    }
    if (current.replace) {
      // Asked for (a new secret): not a failure, no wait.
      if (current.readyAt !== null) this.record = { ...this.record, everReady: true };
      this.stateValue = 'idle';
      this.start();
      return;
    }
    const decision = decideAfterExit(this.record, { readyAt: current.readyAt, exitedAt: this.now(), fatal: current.fatal !== null, stopping: false }, this.policy);
    if (decision.action === 'stay-stopped') {
      this.stateValue = 'stopped';
      this.emit('stopped');
      return;
    }
    this.record = decision.record;
    if (decision.action === 'give-up') {
      this.stateValue = 'gave-up';
      this.options.log.error(`[shell] not restarting the agent: ${decision.reason}`);
      this.emit('gave-up', { reason: decision.reason, lastFatal: this.lastFatal });
      return;
    }
    this.stateValue = 'waiting';
    this.options.log.warn(`[shell] the agent process ended (exit code ${code ?? 'none'}); restarting in ${decision.delayMs} ms (${decision.record.failures} in a row)`);
    this.emit('restart-scheduled', { delayMs: decision.delayMs, failures: decision.record.failures });
    this.timer = setTimeout(() => {
      this.timer = null;
      this.start();
    }, decision.delayMs);
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import type { AdminAlertProvider, AdminMetricsProvider, AdminPanelProvider, OperationsAlert, OpsMetricName, PanelView } from '../admin/extensions';
import type { Agent, AgentService } from '../agent';
import { secretsOf } from '../config/load';
import type { Config } from '../config/schema';
import { AppError, describeError } from '../errors';
import { redactor, type Logger } from '../log';
import { timeWithZone } from '../domain/local-time';
import { clockWatch, describeSkew, isClockWrong, type ClockWatch } from '../clock';
import { localTime, tunnelAlerts, tunnelPanel } from './panels';
import { tunnelStateFile } from './paths';
import { signalTree, trackForExit, tunnelEnvironment } from './tunnel-process';
import type { TunnelCheck, TunnelPhase, TunnelState } from './states';

/**
 * Supervises the site's tunnel program (cloudflared, ngrok...) as a child process: restarts it with
 * back-off when it exits, restarts it when the machine wakes from sleep (its connections are dead by
 * then) or when head office could no longer reach us through it, and checks the public URL end to end
 * by calling our own /healthz through it.
 */

/** Delay before restart number `attempt` (1-based): doubling from `initialMs`, capped at `maxMs` (pure). */
export function backoffDelay(attempt: number, initialMs: number, maxMs: number): number {
  return Math.min(maxMs, initialMs * 2 ** Math.max(0, Math.min(attempt - 1, 30)));
}

/** A wall-clock jump much longer than the timer's interval: the process (the machine) was suspended (pure). */
export function detectWake(previousTickMs: number, nowMs: number, intervalMs: number, jumpMs: number): boolean {
  return nowMs - previousTickMs > intervalMs + jumpMs;
}

/** `{webhookPort}` and `{webhookUrl}` in the configured arguments, filled with the receiver's actual address (pure). */
export function substituteArgs(args: readonly string[], values: { webhookPort: number; webhookUrl: string }): string[] {
  return args.map((a) => a.replaceAll('{webhookPort}', String(values.webhookPort)).replaceAll('{webhookUrl}', values.webhookUrl));
}

/**
 * Configured arguments that name the webhook loosely: `localhost` (which a Go program such as ngrok or
 * cloudflared tries as ::1 first), or, for ngrok, a bare `{webhookPort}` or port number (ngrok forwards a
 * bare port to localhost). The webhook holds both loopback addresses at its port, but the address is best named
 * exactly: `127.0.0.1:{webhookPort}` or `{webhookUrl}` (pure).
 */
export function looseWebhookArgs(command: string, args: readonly string[]): string[] {
  const ngrok = /(^|[\\/])ngrok(\.exe)?$/i.test(command);
  return args.filter((a) => /\blocalhost\b/i.test(a) || (ngrok && /^:?(\{webhookPort\}|\d+)$/.test(a)));
}

export interface TunnelOptions {
  /** The wall clock, for tests of wake detection. */
  readonly now?: () => number;
  readonly clock?: ClockWatch;
  /** Skew beyond this (ms) is logged as a wrong system clock. */
  readonly maxSkewMs?: number;
}

export class TunnelSupervisor implements AgentService, AdminPanelProvider, AdminAlertProvider, AdminMetricsProvider {
  readonly name = 'tunnel';
  private readonly tunnel: NonNullable<Config['tunnel']>;
  private child: ChildProcess | null = null;
  private stopping = false;
  private phase: TunnelPhase = 'stopped';
  private reason: string | null = null;
  private pid: number | null = null;
  private startedAtMs: number | null = null;
  private restarts = 0;
  private attempt = 0;
  private nextRestartAt: number | null = null;
  private lastExit: TunnelState['lastExit'] = null;
  private lastCheck: TunnelCheck | null = null;
  private failedChecks = 0;
  private lastWakeAt: string | null = null;
  private readonly output: string[] = [];
  private restartTimer: NodeJS.Timeout | null = null;
  private checkTimer: NodeJS.Timeout | null = null;
  private wakeTimer: NodeJS.Timeout | null = null;
  private lastTickMs = 0;
  private checking = false;
  /** Set while we stop the child ourselves, so its exit is not taken for a crash. */
  private killing = false;
  private restarting: Promise<void> | null = null;
  private exited: Promise<void> = Promise.resolve();
  private spawnArgs: string[] = [];
  private readonly now: () => number;
  private readonly stateFile: string;

  constructor(
    private readonly config: Readonly<Config>,
    private readonly log: Logger,
    private readonly options: TunnelOptions = {},
  ) {
    if (!config.tunnel) throw new Error('TunnelSupervisor needs config.tunnel');
    this.tunnel = config.tunnel;
    this.now = options.now ?? Date.now;
    this.stateFile = tunnelStateFile(config.dataDir);
    redactor.add(...secretsOf({ tunnel: config.tunnel }));
  }

  async start(agent: Agent): Promise<void> {
    const webhookUrl = agent.webhook?.url ?? '';
    const port = Number(new URL(webhookUrl || 'http://127.0.0.1:0').port);
    this.spawnArgs = substituteArgs(this.tunnel.args, { webhookPort: port, webhookUrl: webhookUrl.slice(0, webhookUrl.length - agent.config.webhook.path.length) });
    const loose = looseWebhookArgs(this.tunnel.command, this.tunnel.args);
    if (loose.length > 0) {
      this.log.warn(
        `tunnel.args names the webhook as ${loose.map((a) => `"${a}"`).join(', ')}: name its address exactly, "127.0.0.1:{webhookPort}" or "{webhookUrl}" (docs/operations.md, "Tunnel supervision")`,
      );
    }
    this.stopping = false;
    this.launch(null);
    this.checkTimer = setInterval(() => void this.check(), this.tunnel.healthCheckIntervalSeconds * 1000);
    this.checkTimer.unref();
    this.lastTickMs = this.now();
    this.wakeTimer = setInterval(() => this.tick(), this.tunnel.wakeCheckIntervalSeconds * 1000);
    this.wakeTimer.unref();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    // A restart in flight finishes its kill first (it launches nothing once stopping is set).
    await this.restarting;
    for (const timer of [this.checkTimer, this.wakeTimer]) if (timer) clearInterval(timer);
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.checkTimer = this.wakeTimer = this.restartTimer = null;
    await this.kill();
    this.set('stopped', 'the agent stopped');
  }

  state(): TunnelState {
    return {
      phase: this.phase,
      reason: this.reason,
      publicUrl: this.tunnel.publicUrl,
      pid: this.pid,
      startedAt: this.startedAtMs === null ? null : new Date(this.startedAtMs).toISOString(),
      restarts: this.restarts,
      nextRestartAt: this.nextRestartAt === null ? null : new Date(this.nextRestartAt).toISOString(),
      lastExit: this.lastExit,
      lastCheck: this.lastCheck,
      consecutiveFailedChecks: this.failedChecks,
      lastWakeAt: this.lastWakeAt,
      output: [...this.output],
      updatedAt: new Date(this.now()).toISOString(),
      agentPid: process.pid,
    };
  }

  /** Up: the program runs and the last check through the public URL (if any yet) passed. */
  metricValues(): Partial<Record<OpsMetricName, number | null>> {
    const up = this.phase === 'running' && (this.lastCheck === null || this.lastCheck.ok);
    return { pos_sync_tunnel_up: up ? 1 : 0, pos_sync_tunnel_restarts_total: this.restarts };
  }

  /** Settings → Operations in the status window. */
  adminPanel(): PanelView {
    return tunnelPanel(this.state(), this.config.webhook.path, localTime);
  }

  async runAdminAction(id: string, actor: string): Promise<{ message: string }> {
    if (id !== 'restart') throw new AppError('not_found', 404, `the tunnel has no action ${id}`);
    await this.restart(`restarted from the status window by ${actor}`);
    return { message: `The tunnel was restarted; it is ${this.state().phase} now.` };
  }

  /** The banner on the status tab while head office cannot reach us through the tunnel. */
  adminAlerts(): OperationsAlert[] {
    return tunnelAlerts(this.state(), this.tunnel.restartAfterFailedChecks);
  }

  /** Restart now (the window's button, a wake-up, a dead public URL). */
  restart(reason: string): Promise<void> {
    if (this.stopping) return Promise.resolve();
    // One restart at a time: a second asked for meanwhile (a wake-up and a failed check together)
    // joins the running one, so there is never more than one child.
    if (this.restarting) return this.restarting;
    this.restarting = this.restartOnce(reason).finally(() => {
      this.restarting = null;
    });
    return this.restarting;
  }

  private async restartOnce(reason: string): Promise<void> {
    this.log.warn(`tunnel: restarting (${reason})`);
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    this.set('restarting', reason);
    await this.kill();
    if (this.stopping) return;
    this.restarts += 1;
    this.launch(reason);
  }

  /** One health check through the public URL; returns its result. */
  async check(): Promise<TunnelCheck | null> {
    if (this.checking || this.stopping || !this.child) return null;
    this.checking = true;
    const url = `${this.tunnel.publicUrl.replace(/\/+$/, '')}/healthz`;
    const sentAt = Date.now();
    let result: TunnelCheck;
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(this.tunnel.healthCheckTimeoutSeconds * 1000), headers: { 'cache-control': 'no-cache' } });
      const body = await res.text();
      const receivedAt = Date.now();
      const observation = (this.options.clock ?? clockWatch).observe('the tunnel health check', res.headers.get('date'), sentAt, receivedAt);
      if (observation && isClockWrong(observation, this.options.maxSkewMs ?? this.config.clock.maxSkewSeconds * 1000)) this.log.warn(describeSkew(observation));
      let ok = res.status === 200;
      try {
        ok = ok && (JSON.parse(body) as { status?: unknown }).status === 'ok';
      } catch {
        ok = false;
      }
      result = { at: new Date(receivedAt).toISOString(), ok, status: res.status, ms: receivedAt - sentAt, error: ok ? null : `answered ${res.status} without our health response` };
    } catch (err) {
      const name = (err as Error).name;
      const error = name === 'TimeoutError' || name === 'AbortError' ? `no answer within ${this.tunnel.healthCheckTimeoutSeconds} s` : describeError((err as Error & { cause?: unknown }).cause ?? err);
      result = { at: new Date().toISOString(), ok: false, status: null, ms: Date.now() - sentAt, error };
    } finally {
      this.checking = false;
    }
    if (this.stopping || !this.child) return result;
    this.lastCheck = result;
    if (result.ok) {
      if (this.phase !== 'running') this.log.info(`tunnel: ${this.tunnel.publicUrl} reachable (${result.ms} ms)`);
      this.failedChecks = 0;
      this.set('running', null);
    } else {
      const why = `${url} not reachable from outside: ${result.error}`;
      const sinceStartMs = this.startedAtMs === null ? Infinity : this.now() - this.startedAtMs;
      if (this.phase === 'starting' && sinceStartMs < this.tunnel.startupGraceSeconds * 1000) {
        this.set('starting', `connecting: ${result.error}`);
        return result;
      }
      this.failedChecks += 1;
      if (this.failedChecks === 1) this.log.warn(`tunnel: ${why}`);
      this.set('unreachable', why);
      const limit = this.tunnel.restartAfterFailedChecks;
      if (limit > 0 && this.failedChecks >= limit) await this.restart(`${this.failedChecks} health checks failed in a row (${result.error})`);
    }
    return result;
  }

  private tick(): void {
    const now = this.now();
    const woke = detectWake(this.lastTickMs, now, this.tunnel.wakeCheckIntervalSeconds * 1000, this.tunnel.wakeJumpSeconds * 1000);
    const slept = Math.round((now - this.lastTickMs) / 1000);
    this.lastTickMs = now;
    if (woke && !this.stopping) {
      this.lastWakeAt = new Date(now).toISOString();
      void this.restart(`the machine woke from sleep (clock jumped ${slept} s)`);
    }
  }

  /** Starts the program; `reason` says why this is a restart (kept on show until a check succeeds). */
  private launch(reason: string | null): void {
    if (this.stopping) return;
    // Only what a tunnel needs, never the agent's secrets (tunnel-process.ts).
    const env = tunnelEnvironment(process.env, this.tunnel);
    this.nextRestartAt = null;
    this.failedChecks = 0;
    let child: ChildProcess;
    try {
      // Its own process group on POSIX, so stopping it also stops whatever it started.
      child = spawn(this.tunnel.command, this.spawnArgs, { env, stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true, detached: process.platform !== 'win32' });
      trackForExit(child);
    } catch (err) {
      this.onExit(null, null, `cannot start ${this.tunnel.command}: ${describeError(err)}`);
      return;
    }
    this.child = child;
    this.pid = child.pid ?? null;
    this.startedAtMs = this.now();
    this.set('starting', reason === null ? null : `restarted: ${reason}`);
    this.log.info(`tunnel: started ${this.tunnel.command} (pid ${child.pid ?? '?'})`);
    for (const stream of [child.stdout, child.stderr]) {
      let partial = '';
      stream?.setEncoding('utf8');
      stream?.on('data', (chunk: string) => {
        const lines = (partial + chunk).split(/\r?\n/);
        partial = lines.pop() ?? '';
        for (const line of lines) this.remember(line);
      });
      stream?.on('end', () => {
        if (partial) this.remember(partial);
        partial = '';
      });
    }
    let startError: string | null = null;
    this.exited = new Promise<void>((resolve) => {
      let done = false;
      const finish = (code: number | null, signal: NodeJS.Signals | null): void => {
        if (done) return;
        done = true;
        this.onExit(code, signal, startError);
        resolve();
      };
      child.once('error', (err) => {
        startError = `cannot start ${this.tunnel.command}: ${(err as NodeJS.ErrnoException).code ?? err.message}`;
        // A program that could not be started emits no 'exit'.
        if (child.pid === undefined) finish(null, null);
      });
      child.once('exit', finish);
    });
    // A program that checks nothing itself: give it a moment, then check the URL end to end.
    setTimeout(() => void this.check(), Math.min(1000, this.tunnel.healthCheckIntervalSeconds * 1000)).unref();
  }

  private remember(line: string): void {
    // Colour codes (ESC [ ... m) from programs that think they write to a terminal.
    const clean = redactor.redact(line.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g'), '')).slice(0, 2000);
    if (!clean.trim()) return;
    this.output.push(clean);
    if (this.output.length > this.tunnel.outputLines) this.output.splice(0, this.output.length - this.tunnel.outputLines);
    this.log.verbose(`tunnel: ${clean}`);
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null, startError: string | null): void {
    const ranMs = this.startedAtMs === null ? 0 : this.now() - this.startedAtMs;
    this.child = null;
    this.pid = null;
    this.lastExit = { code, signal, at: new Date(this.now()).toISOString() };
    if (this.stopping || this.killing) {
      this.persist();
      return;
    }
    if (ranMs >= this.tunnel.stableAfterSeconds * 1000) this.attempt = 0;
    this.attempt += 1;
    const delay = backoffDelay(this.attempt, this.tunnel.restartInitialDelayMs, this.tunnel.restartMaxDelayMs);
    const why = startError ?? (signal ? `exited (killed by ${signal})` : `exited with code ${code}`);
    const last = this.output[this.output.length - 1];
    this.log.warn(`tunnel: ${why}${last ? `; last output: ${last}` : ''}; restarting in ${(delay / 1000).toFixed(1)} s`);
    this.nextRestartAt = this.now() + delay;
    this.set('restarting', why);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      this.restarts += 1;
      this.launch(why);
    }, delay);
    this.restartTimer.unref();
  }

  private async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    const exited = this.exited;
    this.killing = true;
    signalTree(child, 'SIGTERM');
    // A program that ignores SIGTERM (or hangs) is ended after stopTimeoutMs, with all it started.
    const timer = setTimeout(() => signalTree(child, 'SIGKILL'), this.tunnel.stopTimeoutMs);
    try {
      await exited;
    } finally {
      clearTimeout(timer);
      this.killing = false;
    }
  }

  private set(phase: TunnelPhase, reason: string | null): void {
    this.phase = phase;
    this.reason = reason;
    this.persist();
  }

  /** For `status` in another process: the state as a small JSON file beside the database. */
  private persist(): void {
    try {
      const temp = `${this.stateFile}.tmp`;
      fs.writeFileSync(temp, JSON.stringify({ ...this.state(), output: this.output.slice(-20) }), { mode: 0o600 });
      fs.renameSync(temp, this.stateFile);
    } catch {
      // Status display only; never let it disturb the tunnel.
    }
  }
}

/** Lines for `pos-sync-agent status` (the lead's status command calls this). */
export function describeTunnel(state: TunnelState | null, agentAlive: boolean): string[] {
  if (!state) return ['Tunnel: not reported yet (is the agent running?)'];
  if (!agentAlive) return [`Tunnel: unknown — the agent is not running (last seen ${state.phase} at ${timeWithZone(state.updatedAt)})`];
  const lines = [`Tunnel to ${state.publicUrl}: ${state.phase}${state.reason ? ` (${state.reason})` : ''}`];
  if (state.pid !== null) lines.push(`  pid ${state.pid}, started ${timeWithZone(state.startedAt)}, ${state.restarts} restarts`);
  if (state.nextRestartAt) lines.push(`  next start at ${timeWithZone(state.nextRestartAt)}`);
  if (state.lastCheck) lines.push(`  last check ${timeWithZone(state.lastCheck.at)}: ${state.lastCheck.ok ? `ok in ${state.lastCheck.ms} ms` : state.lastCheck.error}`);
  if (state.lastWakeAt) lines.push(`  machine last woke at ${timeWithZone(state.lastWakeAt)}`);
  const tail = state.output.slice(-3);
  if (state.phase !== 'running' && tail.length > 0) lines.push('  last output:', ...tail.map((l) => `    ${l}`));
  return lines;
}

/** The tunnel state a running agent last wrote, or null. */
export function readTunnelState(dataDir: string): TunnelState | null {
  try {
    return JSON.parse(fs.readFileSync(tunnelStateFile(dataDir), 'utf8')) as TunnelState;
  } catch {
    return null;
  }
}

// First: before the agent's modules load (src/threads/agent-v8-flags.ts).
import '../threads/agent-v8-flags';
import fs from 'node:fs';
import path from 'node:path';
import { AdminService } from '../admin/service';
import type { SecretsBridge, SecretSource } from '../admin/routes/secrets';
import type { Agent } from '../agent';
import { agentServices } from '../cli/services';
import { maskConfig } from '../config/load';
import { AppError, ConfigError, describeError } from '../errors';
import { configureLogging, redactor, stderrLogger, type Logger } from '../log';
import { restrictUmask } from '../ops/private-files';
import { ownershipProblems } from '../ops/ownership';
import { startAgent, type StartedAgent } from '../ops/startup';
import { configArgument, siteForFile } from '../config/site';
import { machineConfigTrusted } from '../config/windows-service';
import { setInvocationConfigArgument } from '../config/invocation';
import { loadConfigWithSecrets } from '../ops/secrets';
import { parseParentMessage, type ChildMessage, type ParentMessage, type SecretSources } from './channel';
import { adminOriginOf, trayState } from './policy';
import { SECRET_NAMES, type SecretName, type SecretStore } from '../config/secret-names';

/**
 * The desktop app's agent process: the same agent `pos-sync-agent serve` runs (agentServices), in its
 * own process so that SQLite work never freezes the tray or the window. Electron starts it with
 * utilityProcess.fork and talks over process.parentPort; under plain Node (the tests) it runs as a
 * child_process.fork child and talks over process.send. It waits for main's `start` message, which
 * carries the configuration file and the secrets main decrypted (channel.ts).
 */

/** The two ways this process can talk to the shell. */
interface Port {
  post(message: ChildMessage): Promise<void>;
  onMessage(listener: (data: unknown) => void): void;
}

interface ElectronParentPort {
  postMessage(message: unknown): void;
  on(event: 'message', listener: (event: { data: unknown }) => void): void;
}

function parentPort(): Port {
  const electronPort = (process as unknown as { parentPort?: ElectronParentPort }).parentPort;
  if (electronPort) {
    return {
      // Electron queues the message on its IPC pipe synchronously; there is no delivery callback.
      post: (message) => {
        electronPort.postMessage(message);
        return Promise.resolve();
      },
      onMessage: (listener) => electronPort.on('message', (event) => listener(event.data)),
    };
  }
  if (process.send) {
    const send = process.send.bind(process);
    return {
      post: (message) =>
        new Promise<void>((resolve) => {
          if (!process.connected) return resolve();
          // The callback fires once the message is written, so an exit right after does not lose it.
          send(message, undefined, {}, () => resolve());
        }),
      onMessage: (listener) => process.on('message', listener),
    };
  }
  throw new Error('this is the desktop app agent process: start it with utilityProcess.fork (Electron) or child_process.fork (tests), or run `pos-sync-agent serve`');
}

/** Secrets main resolved, read-only: changes go to main through the window's bridge. */
class HandedSecrets implements SecretStore {
  readonly description = "the desktop app's encrypted store (secrets.safe.json), read by the shell";
  constructor(private readonly values: Partial<Record<SecretName, string>>) {}
  get(name: SecretName): string | null {
    return this.values[name] ?? null;
  }
  set(): void {
    throw new AppError('secret_store_read_only', 400, 'secrets are stored by the desktop shell');
  }
  delete(): boolean {
    return false;
  }
  names(): SecretName[] {
    return SECRET_NAMES.filter((n) => this.values[n] !== undefined);
  }
}

/** How often the tray colour is recomputed; a change is sent at once, an unchanged one not at all. */
const STATUS_EVERY_MS = 2_000;

function errorId(err: unknown): string {
  if (err instanceof AppError) return err.id;
  if (err instanceof ConfigError) return 'config_invalid';
  return 'agent_failed';
}

class AgentProcess {
  private agent: Agent | null = null;
  private running: StartedAgent | null = null;
  private admin: AdminService | null = null;
  private log: Logger = stderrLogger;
  private statusTimer: NodeJS.Timeout | null = null;
  private lastStatus = '';
  private started = false;
  private stopping: Promise<void> | null = null;
  private sources: SecretSources = {};
  private nextRequest = 1;
  private readonly pending = new Map<number, { resolve: (s: SecretSources) => void; reject: (e: Error) => void }>();

  constructor(private readonly port: Port) {}

  listen(): void {
    this.port.onMessage((data) => {
      const parsed = parseParentMessage(data);
      if (!parsed.ok) {
        this.log.warn(`[agent-process] ignored a malformed message from the shell (${parsed.reason})`);
        return;
      }
      this.handle(parsed.message);
    });
  }

  private handle(message: ParentMessage): void {
    switch (message.type) {
      case 'start':
        if (this.started) return;
        this.started = true;
        this.start(message).catch((err: unknown) => this.fatal(err));
        return;
      case 'stop':
        void this.shutdown(0);
        return;
      case 'pause':
        this.agent?.setPaused(message.paused, 'the desktop tray');
        this.sendStatus();
        return;
      case 'login-link-request': {
        const url = this.admin?.loginUrl;
        if (url) void this.port.post({ type: 'login-link', url });
        return;
      }
      case 'start-at-login':
        this.admin?.updateSettings({ startAtLogin: message.enabled });
        return;
      case 'secret-result': {
        const waiting = this.pending.get(message.requestId);
        if (!waiting) return;
        this.pending.delete(message.requestId);
        this.sources = message.sources;
        if (message.error) waiting.reject(new AppError(message.error.id, 500, message.error.message));
        else waiting.resolve(message.sources);
        return;
      }
    }
  }

  private bridge(): SecretsBridge {
    return {
      sources: () => this.sources as Partial<Record<SecretName, SecretSource>>,
      set: (name, value) =>
        new Promise((resolve, reject) => {
          const requestId = this.nextRequest++;
          this.pending.set(requestId, { resolve, reject });
          void this.port.post({ type: 'secret-set', requestId, name, value });
        }),
      restart: () => void this.port.post({ type: 'restart-request' }),
    };
  }

  private async start(message: Extract<ParentMessage, { type: 'start' }>): Promise<void> {
    this.sources = message.sources;
    const site = siteForFile(message.configFile);
    const { config } = loadConfigWithSecrets({ file: site.file, defaultDataDir: site.defaultDataDir, store: new HandedSecrets(message.secrets) });
    // The window's hints (force-apply, conflicts) carry the --config a command needs to reach this agent.
    setInvocationConfigArgument(configArgument(site, { exists: (file) => fs.existsSync(file), machineTrusted: () => machineConfigTrusted() }));
    // Before the log file is opened in it: a data folder another account could have prepared is not used at all.
    const foreign = ownershipProblems(config);
    if (foreign.length > 0) throw ConfigError.of(foreign);
    // Its own file: the shell's main process writes desktop.log in the same folder.
    this.log = configureLogging({ dir: config.log.dir ?? path.join(config.dataDir, 'logs'), level: config.log.level, maxFileBytes: config.log.maxFileBytes, console: false });
    this.log.info(`[agent-process] starting (pid ${process.pid}); data in ${config.dataDir}`);
    this.log.info(`configuration: ${JSON.stringify(maskConfig(config))}`);
    if (!config.admin.enabled) {
      throw new AppError('admin_disabled', 500, 'the desktop app needs the status window: set admin.enabled to true (or run the agent headless with `pos-sync-agent serve`)');
    }
    const admin = new AdminService(this.log, { shell: 'electron', secrets: this.bridge(), onSettingsChanged: () => this.sendStatus() });
    // The same services `serve` runs, with the status window's service in its desktop form.
    const services = agentServices(config, this.log).map((s) => (s.name === 'admin' ? admin : s));
    // Checked, locked and started all or nothing, exactly as `serve` (ops/startup.ts): a second agent
    // on the same folder, a busy port or an unreadable TLS file stops here with every problem named.
    const running = await startAgent(config, this.log, services);
    this.running = running;
    this.agent = running.agent;
    this.admin = admin;
    await this.port.post({ type: 'ready', adminLoginUrl: admin.loginUrl!, adminOrigin: adminOriginOf(admin.url!) });
    this.sendStatus();
    this.statusTimer = setInterval(() => this.sendStatus(), STATUS_EVERY_MS);
    this.statusTimer.unref();
  }

  private sendStatus(): void {
    if (!this.agent || !this.admin) return;
    let summary: ReturnType<AdminService['summary']>;
    try {
      summary = this.admin.summary();
    } catch (err) {
      this.log.error(`[agent-process] status: ${describeError(err)}`);
      return;
    }
    const state = trayState(summary);
    const message: ChildMessage = { type: 'status', colour: state.colour, summary: state.tooltip, paused: this.agent.isPaused, startAtLogin: this.admin.settings?.startAtLogin ?? false };
    const key = JSON.stringify(message);
    if (key === this.lastStatus) return;
    this.lastStatus = key;
    void this.port.post(message);
  }

  /** Reports why the agent cannot run, then exits non-zero: the shell decides whether to try again. */
  fatal(err: unknown): void {
    const message = redactor.redact(describeError(err)).slice(0, 2_000);
    this.log.error(`[agent-process] ${message}`);
    void this.port
      .post({ type: 'fatal', id: errorId(err), message })
      .finally(() => this.shutdown(1));
  }

  shutdown(code: number): Promise<void> {
    this.stopping ??= (async () => {
      if (this.statusTimer) clearInterval(this.statusTimer);
      for (const waiting of this.pending.values()) waiting.reject(new AppError('agent_stopping', 503, 'the agent is stopping'));
      this.pending.clear();
      const running = this.running;
      this.running = null;
      this.agent = null;
      this.admin = null;
      try {
        await running?.stop();
      } catch (err) {
        this.log.error(`[agent-process] stopping: ${describeError(err)}`);
        code = code || 1;
      }
      process.exit(code);
    })();
    return this.stopping;
  }
}

function main(): void {
  // Everything the agent writes is owner-only from its first byte (issue 10).
  restrictUmask();
  const agentProcess = new AgentProcess(parentPort());
  agentProcess.listen();
  // A clean process after any surprise: the shell restarts it; carrying on could keep a broken writer.
  process.on('uncaughtException', (err) => agentProcess.fatal(err));
  process.on('unhandledRejection', (err) => agentProcess.fatal(err));
  process.once('SIGTERM', () => void agentProcess.shutdown(0));
  process.once('SIGINT', () => void agentProcess.shutdown(0));
  // Under Node the IPC channel closes when the parent goes; nobody would stop this process otherwise.
  process.once('disconnect', () => void agentProcess.shutdown(0));
}

main();

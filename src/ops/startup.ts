import { webhookExposureProblems } from '../webhook/exposure';
import { cliCommand } from '../config/invocation';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { Agent, type AgentService } from '../agent';
import type { Config } from '../config/schema';
import { ConfigError, describeError, type ConfigProblem } from '../errors';
import type { Logger } from '../log';
import { interruptedRestore } from './backup/restore';
import { acquireAgentLock, type InstanceLock } from './instance';
import { ownershipProblems } from './ownership';
import { backupDir, logDir } from './paths';
import { applyTillReaderAccess, applyWindowsPrivateAcl, leaveTillFileReadable, makePrivateDir, securePrivateData, switchTillFileToWal, tillReaderProblems } from './private-files';

/**
 * Start-up is all or nothing. Everything that can be checked before anything listens is checked, and
 * every problem found is reported together (exit code 3, each naming its configuration key and what
 * to do): busy or equal ports, unreadable TLS files, a data folder that cannot be written. Only then
 * is the data folder locked, the database opened and the servers started; if anything still fails
 * (a port taken in the meantime), what had started is stopped again and the lock released, and the
 * webhook answers 503 "starting" until every part is up, so no sender ever got a 200 from an agent
 * that then did not run.
 */

function code(err: unknown): string {
  return (err as NodeJS.ErrnoException).code ?? describeError(err);
}

/**
 * The loopback addresses a listener on `host` also holds, or whose holder `localhost:PORT` reaches
 * instead of it: the other loopback family's (127.0.0.1 and ::1 are each other's twin; `localhost`
 * may be either). The webhook holds its twin at its own port (src/webhook/server.ts, loopbackTwin).
 */
function loopbackTwins(host: string): string[] {
  if (host === '127.0.0.1') return ['::1'];
  if (host === '::1') return ['127.0.0.1'];
  if (host === 'localhost') return ['127.0.0.1', '::1'];
  return [];
}

function overlap(a: string, b: string): boolean {
  const wildcard = (h: string): boolean => h === '0.0.0.0' || h === '::' || h === '';
  const loopbackName = (h: string): boolean => h === 'localhost' || h === '::1' || /^127\./.test(h);
  // 127.0.0.1 and ::1 overlap too: the webhook holds both at its port.
  const twins = loopbackTwins(a).includes(b) || loopbackTwins(b).includes(a);
  return a === b || wildcard(a) || wildcard(b) || twins || (loopbackName(a) && loopbackName(b) && (a === 'localhost' || b === 'localhost'));
}

/** Problems in the configuration itself (no file system or network needed beyond reading the TLS files). */
export function configProblems(config: Readonly<Config>): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const { webhook, admin } = config;
  if (admin.enabled && admin.port !== 0 && admin.port === webhook.port && overlap(admin.host, webhook.host)) {
    problems.push({
      field: 'admin.port',
      message: `${admin.port} is also webhook.port: the status window needs its own port (default 8780), never the webhook's: change admin.port or webhook.port`,
    });
  }
  const tlsConfig = webhook.tls;
  if (tlsConfig) {
    const files: [string, string][] = 'certFile' in tlsConfig
      ? [['webhook.tls.certFile', tlsConfig.certFile], ['webhook.tls.keyFile', tlsConfig.keyFile]]
      : [['webhook.tls.pfxFile', tlsConfig.pfxFile]];
    const contents = new Map<string, Buffer>();
    for (const [field, file] of files) {
      try {
        contents.set(field, fs.readFileSync(file));
      } catch (err) {
        const why = code(err);
        const hint =
          why === 'EISDIR' ? 'it is a folder, not a file' : why === 'ENOENT' ? 'there is no such file' : why === 'EACCES' || why === 'EPERM' ? `this account (${os.userInfo().username}) may not read it` : why;
        problems.push({ field, message: `cannot read ${file} (${hint}): point it at the PEM file and make it readable by the agent's account` });
      }
    }
    if (contents.size === files.length) {
      try {
        if ('certFile' in tlsConfig) tls.createSecureContext({ cert: contents.get('webhook.tls.certFile'), key: contents.get('webhook.tls.keyFile') });
        else tls.createSecureContext({ pfx: contents.get('webhook.tls.pfxFile'), ...(tlsConfig.passphrase ? { passphrase: tlsConfig.passphrase } : {}) });
      } catch (err) {
        problems.push({
          field: 'certFile' in tlsConfig ? 'webhook.tls.keyFile' : 'webhook.tls.passphrase',
          message: `the TLS files cannot be used (${describeError(err)}): check that the key belongs to the certificate (and the passphrase, for a .pfx)`,
        });
      }
    }
  }
  problems.push(...tillReaderProblems(config));
  problems.push(...webhookExposureProblems(config));
  return problems;
}

function writableFolderProblem(field: string, dir: string): ConfigProblem | null {
  const probe = path.join(dir, `.write-check-${process.pid}`);
  try {
    makePrivateDir(dir);
    const fd = fs.openSync(probe, 'wx', 0o600);
    try {
      fs.writeSync(fd, 'ok');
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
      fs.rmSync(probe, { force: true });
    }
    return null;
  } catch (err) {
    const why = code(err);
    const hint =
      why === 'EROFS'
        ? 'it is on a read-only file system: choose a folder on a writable disk'
        : why === 'ENOSPC'
          ? 'the disk is full: free some space'
          : `give the account ${os.userInfo().username} write access to it, or choose another folder`;
    return { field, message: `${dir} is not writable (${why}): ${hint}` };
  }
}

/** The data folder (and a separate log folder) must be writable, and so must the databases in it. */
export function dataDirProblems(config: Readonly<Config>): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  // Looked at before anything is created or tightened in them: a folder another account may write is refused as found.
  const foreign = ownershipProblems(config);
  const data = writableFolderProblem('dataDir', config.dataDir);
  if (data) problems.push(data);
  const notWritable = new Set(problems.map((p) => p.field));
  problems.push(...foreign.filter((p) => !notWritable.has(p.field)));
  if (!data) {
    for (const name of fs.readdirSync(config.dataDir).filter((f) => /\.db(-wal|-shm)?$/.test(f))) {
      try {
        fs.accessSync(path.join(config.dataDir, name), fs.constants.R_OK | fs.constants.W_OK);
      } catch (err) {
        problems.push({ field: 'dataDir', message: `${path.join(config.dataDir, name)} is not writable (${code(err)}): give the agent's account write access to it` });
      }
    }
  }
  const cutShort = data ? null : interruptedRestore(config.dataDir);
  if (cutShort) {
    problems.push({
      field: 'dataDir',
      message: `a restore from ${cutShort.from} (started ${cutShort.startedAt}) was cut short, so the data files may be from two different sets: run \`${cliCommand(`restore ${cutShort.from}`)}\` again, then start the agent`,
    });
  }
  if (config.log.dir && !foreign.some((p) => p.field === 'log.dir')) {
    const logs = writableFolderProblem('log.dir', config.log.dir);
    if (logs) problems.push(logs);
  }
  return problems;
}

function probePort(host: string, port: number): Promise<string | null> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', (err) => resolve(code(err)));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(null)));
  });
}

/** A busy port's problem, naming `field` (the same words for the configured address and its twin). */
function busyPort(field: string, host: string, port: number, twin: boolean): ConfigProblem {
  const where = twin ? `port ${port} on ${host} (the other loopback address: clients of localhost:${port} reach it)` : `port ${port} on ${host}`;
  return { field, message: `${where} is already in use (another agent or program): stop that program, or choose a free ${field}` };
}

/**
 * Whether the configured ports can be bound now (port 0, a free port chosen at start, always can). For
 * a loopback address, its twin at the same port too (loopbackTwins): a program holding it would get
 * what a client of `localhost:PORT` (a tunnel, a browser) sends. The webhook holds its twin itself;
 * for the status window the twin is only checked. A machine without the twin's address
 * (EADDRNOTAVAIL: IPv6 turned off; EAFNOSUPPORT) has nothing there to fear.
 */
export async function portProblems(config: Readonly<Config>): Promise<ConfigProblem[]> {
  const wanted: { field: string; hostField: string; host: string; port: number }[] = [{ field: 'webhook.port', hostField: 'webhook.host', host: config.webhook.host, port: config.webhook.port }];
  if (config.admin.enabled) wanted.push({ field: 'admin.port', hostField: 'admin.host', host: config.admin.host, port: config.admin.port });
  const problems: ConfigProblem[] = [];
  for (const w of wanted) {
    if (w.port === 0) continue;
    const failure = await probePort(w.host, w.port);
    if (failure === null) {
      for (const twin of loopbackTwins(w.host)) {
        const twinFailure = await probePort(twin, w.port);
        if (twinFailure === null || twinFailure === 'EADDRNOTAVAIL' || twinFailure === 'EAFNOSUPPORT') continue;
        problems.push(twinFailure === 'EADDRINUSE' ? busyPort(w.field, twin, w.port, w.host !== 'localhost') : { field: w.field, message: `cannot listen on ${twin}:${w.port} (${twinFailure})` });
        break;
      }
      continue;
    }
    if (failure === 'EADDRINUSE') {
      problems.push(busyPort(w.field, w.host, w.port, false));
    } else if (failure === 'EACCES') {
      problems.push({ field: w.field, message: `port ${w.port} needs administrator rights on this system: choose a port above 1024 for ${w.field}` });
    } else if (failure === 'EADDRNOTAVAIL' || failure === 'ENOTFOUND') {
      problems.push({ field: w.hostField, message: `${w.host} is not an address of this machine (${failure}): use 127.0.0.1 or an address it has` });
    } else {
      problems.push({ field: w.field, message: `cannot listen on ${w.host}:${w.port} (${failure})` });
    }
  }
  return problems;
}

export interface StartedAgent {
  readonly agent: Agent;
  /** Stops the agent, then releases the data folder. */
  stop(): Promise<void>;
}

/**
 * Checks, locks, opens and starts the agent for `serve` and the desktop app. Throws ConfigError
 * (every problem listed) or AppError `agent_running`; on any failure nothing is left running or locked.
 */
export async function startAgent(config: Readonly<Config>, log: Logger, services: readonly AgentService[]): Promise<StartedAgent> {
  const problems = [...configProblems(config), ...dataDirProblems(config)];
  const dataDirOk = !problems.some((p) => p.field === 'dataDir');
  let lock: InstanceLock | null = null;
  // Only with a usable folder can it be locked; the lock comes before the port checks, so a second
  // agent on the same folder hears "already running", not "port in use".
  if (dataDirOk) lock = acquireAgentLock(config.dataDir);
  let agent: Agent | null = null;
  let tillFileSwitched = false;
  try {
    problems.push(...(await portProblems(config)));
    if (problems.length > 0) throw ConfigError.of(problems);
    applyWindowsPrivateAcl([config.dataDir, logDir(config), backupDir(config)], log, config);
    // Before the agent's connections open, so that they, and the migrations they run, find WAL mode.
    tillFileSwitched = true;
    await switchTillFileToWal(config, log);
    agent = new Agent(config, log, services);
    // After the database (and its -wal/-shm) exist: everything owner-only, then the till's exception.
    securePrivateData(config, [logDir(config), backupDir(config)]);
    applyTillReaderAccess(config, log);
    await agent.start();
  } catch (err) {
    // The webhook could not listen after all (its port, or the port's loopback twin, taken between the
    // check above and now): said as the check says it, naming webhook.port.
    const webhookBusy = agent !== null && agent.webhook === null && code(err) === 'EADDRINUSE';
    if (agent) await agent.stop().catch((stopErr: unknown) => log.error(`stopping after a failed start: ${describeError(stopErr)}`));
    // Still holding the folder: the till's file as a stopped agent leaves it.
    if (tillFileSwitched) leaveTillFileReadable(config, log);
    lock?.release();
    if (webhookBusy) throw ConfigError.of([{ field: 'webhook.port', message: describeError(err) }]);
    throw err;
  }
  const held = lock;
  const running = agent;
  return {
    agent: running,
    async stop() {
      try {
        await running.stop();
        // Still holding the folder, so no agent starts while the file changes journal mode.
        leaveTillFileReadable(config, log);
      } finally {
        held?.release();
      }
    },
  };
}

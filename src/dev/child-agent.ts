import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import Database from 'better-sqlite3';
import { storeFilePath } from '../store/database';
import { agentEnvironment } from '../threads/malloc-settings';

/**
 * A real agent in a process of its own (child-agent.cjs), for the fault suites and the benchmarks:
 * start it on a config file, ask it for its figures over IPC, kill it like a power cut, read its files
 * as the till would.
 */

export const ROOT = path.resolve(__dirname, '..', '..');

export const CHILD_AGENT = path.join(__dirname, 'child-agent.cjs');

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Whether a loopback port can be listened on now (it is released again at once). */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Where freePort looks: below the ephemeral ranges (Linux 32768-60999, Windows 49152-65535). */
const FREE_PORT_FROM = 20_000;
const FREE_PORT_SPAN = 12_000;

/**
 * A free loopback port for a process to listen on later (the agent keeps one port across restarts).
 * Chosen below the ephemeral ranges: a port found by binding port 0 is one the system hands out
 * again to the next socket that binds port 0, so another test's listener or connection could take
 * it before the agent listens (EADDRINUSE). Falls back to port 0's choice.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = FREE_PORT_FROM + Math.floor(Math.random() * FREE_PORT_SPAN);
    if (await canListen(port)) return port;
  }
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

export interface ChildStats {
  /** The process's own peak RSS (Linux: VmHWM; not getrusage's maxRSS, which counts the spawner's). */
  readonly maxRssBytes: number;
  readonly rssBytes: number;
  readonly synchronous: number;
}

export interface ChildAgent {
  readonly process: ChildProcess;
  readonly url: string;
  readonly pid: number;
  /** Asks the child for its memory figures and connection settings. */
  stats(): Promise<ChildStats>;
  /** Each of the agent's threads' V8 heap (null for a thread not running). */
  threadHeaps(): Promise<Record<string, { totalHeapBytes: number; usedHeapBytes: number; externalBytes: number } | null>>;
  setMaxPageCount(pages: number): Promise<number>;
  /** Starts / stops measuring the main thread's event-loop delay (perf_hooks.monitorEventLoopDelay). */
  loopDelayStart(): Promise<void>;
  loopDelayStop(): Promise<{ p50Ms: number; p99Ms: number; maxMs: number }>;
  /** SIGKILL: no shutdown code runs, exactly like a power cut for the process. */
  kill(): Promise<void>;
  /** SIGTERM and wait for a clean exit. */
  stop(): Promise<number | null>;
  readonly stderr: () => string;
}

export interface SpawnOptions {
  readonly env?: Record<string, string>;
  /** Prefix the command (e.g. ['fiu-run', '-x']). */
  readonly wrapper?: readonly string[];
  readonly startTimeoutMs?: number;
  /** Another child script with the same READY protocol (the bench's bare HTTP server). */
  readonly script?: string;
  /** Run the compiled build in dist/ (`npm run build` first) instead of the sources through tsx. */
  readonly built?: boolean;
  /** Extra node flags, e.g. --expose-gc. */
  readonly nodeArgs?: readonly string[];
}

/** Writes the config and starts `child-agent.cjs` in its own process; resolves once it listens. */
export async function spawnAgent(configFile: string, options: SpawnOptions = {}): Promise<ChildAgent> {
  // The compiled build runs without tsx: no TypeScript loader in any of its threads, as on a site.
  const loader = options.built ? [] : ['--import', 'tsx'];
  const command = [...(options.wrapper ?? []), process.execPath, ...(options.nodeArgs ?? []), ...loader, options.script ?? CHILD_AGENT, configFile];
  const child = spawn(command[0] as string, command.slice(1), {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    // With the malloc settings a running agent starts with on Linux (as bin/ gives `serve`).
    env: { ...agentEnvironment(process.env, process.platform), ...(options.built ? { POS_SYNC_CHILD_BUILT: '1' } : {}), ...(options.env ?? {}) },
  });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString('utf8')).slice(-20_000);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`child agent did not start in time; stderr: ${stderr}`)), options.startTimeoutMs ?? 20_000);
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      const m = /READY (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1] as string);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`child agent exited (${code}) before it was ready; stderr: ${stderr}`));
    });
  });
  const ask = <T>(message: Record<string, unknown>, reply: string): Promise<T> =>
    new Promise((resolve, reject) => {
      const onMessage = (m: unknown): void => {
        if ((m as { cmd?: string }).cmd === reply) {
          child.off('message', onMessage);
          const error = (m as { error?: string }).error;
          if (error !== undefined) reject(new Error(`child agent ${reply}: ${error}`));
          else resolve(m as T);
        }
      };
      child.on('message', onMessage);
      if (!child.send(message)) reject(new Error('child agent IPC closed'));
    });
  return {
    process: child,
    url,
    pid: child.pid as number,
    stats: () => ask<ChildStats>({ cmd: 'stats' }, 'stats'),
    threadHeaps: async () => (await ask<{ threads: Record<string, { totalHeapBytes: number; usedHeapBytes: number; externalBytes: number } | null> }>({ cmd: 'thread-heaps' }, 'thread-heaps')).threads,
    loopDelayStart: async () => {
      await ask({ cmd: 'eld-start' }, 'eld-start');
    },
    loopDelayStop: () => ask<{ p50Ms: number; p99Ms: number; maxMs: number }>({ cmd: 'eld-stop' }, 'eld-stop'),
    setMaxPageCount: async (pages) => (await ask<{ value: number }>({ cmd: 'max_page_count', value: pages }, 'max_page_count')).value,
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
    stderr: () => stderr,
  };
}

export function writeConfig(dir: string, config: Record<string, unknown>): string {
  const file = path.join(dir, 'agent-config.json');
  fs.writeFileSync(file, JSON.stringify(config, null, 2));
  return file;
}

/** Opens the till's file as the till would (read-only), or agent.db, and runs `fn`. */
export function withReader<T>(dataDir: string, fn: (db: Database.Database) => T, kind: 'till' | 'agent' = 'till'): T {
  const file = storeFilePath(dataDir, kind);
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    return fn(db);
  } finally {
    db.close();
  }
}

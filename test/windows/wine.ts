import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Runs the built agent, its command line and small till scripts as Windows processes: Node for Windows
 * under Wine (scripts/test-windows.mjs installs both and sets POS_SYNC_WINE / POS_SYNC_WINDOWS_NODE).
 * Wine cannot give a Windows process a Unix pipe as stdout (writes fail with EBADF), so every
 * process writes its stdout and stderr to files, read back here.
 */

export const REPO_ROOT = path.resolve(__dirname, '..', '..');
const WINE = process.env.POS_SYNC_WINE;
const NODE_EXE = process.env.POS_SYNC_WINDOWS_NODE;
if (!WINE || !NODE_EXE || !process.env.WINEPREFIX) {
  throw new Error('test/windows runs through `npm run test:windows` (it installs Wine and Node for Windows and sets POS_SYNC_WINE, POS_SYNC_WINDOWS_NODE, WINEPREFIX)');
}
export const WINEPREFIX = process.env.WINEPREFIX;
/** node.exe (Node for Windows) on this side. */
export const WINDOWS_NODE = NODE_EXE;
/** The prefix's C: drive on this side. */
export const DRIVE_C = path.join(WINEPREFIX, 'drive_c');

/** The Windows name of a file on this machine: C:\... inside the prefix's drive_c, Z:\... (Wine's view of /) otherwise. */
export function winPath(p: string): string {
  const abs = path.resolve(p);
  if (abs === DRIVE_C || abs.startsWith(`${DRIVE_C}/`)) return `C:${abs.slice(DRIVE_C.length).replace(/\//g, '\\') || '\\'}`;
  return `Z:${abs.replace(/\//g, '\\')}`;
}

/** This machine's name of a Windows path the agent printed (the inverse of winPath). */
export function unixPath(p: string): string {
  const m = /^([A-Za-z]):\\?(.*)$/.exec(p);
  if (!m) throw new Error(`not a Windows path: ${p}`);
  const rest = m[2]!.replace(/\\/g, '/');
  return m[1]!.toUpperCase() === 'C' ? path.join(DRIVE_C, rest) : `/${rest}`;
}

export const AGENT_BIN = winPath(path.join(REPO_ROOT, 'bin', 'pos-sync-agent.cjs'));
/** Sets environment variables Wine itself would overwrite (USERNAME, APPDATA, USERPROFILE) before the agent's code runs. */
const SET_ENV = winPath(path.join(__dirname, 'fixtures', 'set-env.cjs'));

export interface WindowsOptions {
  /** Variables for the Windows process that Wine sets itself (APPDATA, USERPROFILE, USERNAME...): applied inside the process. */
  readonly windowsEnv?: Record<string, string>;
  /** Other variables (POS_SYNC__*), passed through Wine as they are. */
  readonly env?: Record<string, string>;
  /** Folder for the stdout/stderr files (default: a folder under the prefix's temp). */
  readonly outDir: string;
  /** Variables of this process's environment that the Windows process is not given (e.g. TZ). */
  readonly unset?: readonly string[];
}

export interface WindowsProcess {
  /** The process id on this side (Wine runs each Windows process as one Linux process). */
  readonly pid: number;
  readonly exited: Promise<number | null>;
  stdout(): string;
  stderr(): string;
}

let counter = 0;

/** Only ASCII reaches Wine's environment: anything else is escaped, so the value is independent of the locale. */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Starts `node.exe ARGS` under Wine. */
export function startWindows(args: readonly string[], options: WindowsOptions): WindowsProcess {
  fs.mkdirSync(options.outDir, { recursive: true });
  const n = `${process.pid}-${++counter}`;
  const outFile = path.join(options.outDir, `out-${n}.txt`);
  const errFile = path.join(options.outDir, `err-${n}.txt`);
  const out = fs.openSync(outFile, 'w');
  const err = fs.openSync(errFile, 'w');
  const pre = options.windowsEnv ? ['-r', SET_ENV] : [];
  const child = spawn(WINE!, [NODE_EXE!, ...pre, ...args], {
    cwd: options.outDir,
    env: {
      ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !(options.unset ?? []).includes(name))),
      ...(options.env ?? {}),
      ...(options.windowsEnv ? { POS_SYNC_TEST_WINDOWS_ENV: asciiJson(options.windowsEnv) } : {}),
    },
    stdio: ['ignore', out, err],
  });
  fs.closeSync(out);
  fs.closeSync(err);
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.once('error', () => resolve(null));
  });
  const read = (f: string) => (): string => {
    try {
      return fs.readFileSync(f, 'utf8');
    } catch {
      return '';
    }
  };
  return { pid: child.pid!, exited, stdout: read(outFile), stderr: read(errFile) };
}

export interface WindowsResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `node.exe ARGS` under Wine to its end. */
export async function runWindows(args: readonly string[], options: WindowsOptions): Promise<WindowsResult> {
  const p = startWindows(args, options);
  const code = await p.exited;
  return { code, stdout: p.stdout(), stderr: p.stderr() };
}

/** `pos-sync-agent ARGS` as a Windows process. */
export function cli(args: readonly string[], options: WindowsOptions): Promise<WindowsResult> {
  return runWindows([AGENT_BIN, ...args], options);
}

/** A Windows program of the prefix (taskkill, icacls...) to its end, its output in files like the others. */
export async function runWindowsProgram(program: string, args: readonly string[], outDir: string): Promise<WindowsResult> {
  fs.mkdirSync(outDir, { recursive: true });
  const n = `${process.pid}-${++counter}`;
  const outFile = path.join(outDir, `prog-out-${n}.txt`);
  const errFile = path.join(outDir, `prog-err-${n}.txt`);
  const out = fs.openSync(outFile, 'w');
  const err = fs.openSync(errFile, 'w');
  const child = spawn(WINE!, [program, ...args], { cwd: outDir, env: process.env, stdio: ['ignore', out, err] });
  fs.closeSync(out);
  fs.closeSync(err);
  const code = await new Promise<number | null>((resolve) => {
    child.once('exit', (c) => resolve(c));
    child.once('error', () => resolve(null));
  });
  return { code, stdout: fs.readFileSync(outFile, 'utf8'), stderr: fs.readFileSync(errFile, 'utf8') };
}

export async function waitFor<T>(what: string, check: () => T | null | undefined | false | Promise<T | null | undefined | false>, timeoutMs = 60_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

export interface WindowsAgent extends WindowsProcess {
  /** The webhook's URL, as the agent printed it. */
  readonly url: string;
  /** The agent's Windows process id (agent.pid), for taskkill. */
  readonly windowsPid: number;
  /** Ctrl+C (Wine turns SIGINT into the console's CTRL_C_EVENT): a clean stop; resolves with the exit code. */
  stop(): Promise<number | null>;
  /** `taskkill /F /PID`: TerminateProcess, as Task Manager's "End task" or a power cut does to the process. */
  taskkill(): Promise<void>;
  /** Everything it wrote to stdout and stderr. */
  output(): string;
}

/** A Windows process that ended before it wrote a byte: Wine did not start it (the agent writes its first line at once). */
class NeverStarted extends Error {}

/**
 * `pos-sync-agent serve --config FILE` as a Windows process; resolves once it listens and has written
 * agent.pid. A process Wine ends before it writes anything is started once more, and said so on
 * stderr; one that wrote anything and ended fails the test with what it wrote.
 */
export async function startAgent(configFile: string, dataDir: string, options: WindowsOptions): Promise<WindowsAgent> {
  try {
    return await startAgentOnce(configFile, dataDir, options);
  } catch (err) {
    if (!(err instanceof NeverStarted)) throw err;
    process.stderr.write(`wine.ts: ${err.message}; starting it once more\n`);
    return startAgentOnce(configFile, dataDir, options);
  }
}

async function startAgentOnce(configFile: string, dataDir: string, options: WindowsOptions): Promise<WindowsAgent> {
  const p = startWindows([AGENT_BIN, 'serve', '--config', winPath(configFile)], options);
  let done = false;
  let code: number | null = null;
  void p.exited.then((c) => {
    code = c;
    done = true;
  });
  const output = (): string => `${p.stdout()}${p.stderr()}`;
  const url = await waitFor(
    'the Windows agent to listen',
    () => {
      const m = /Receiving menu cycle updates at (\S+)/.exec(p.stdout());
      if (m) return m[1]!;
      if (done && output() === '') throw new NeverStarted(`the Windows agent ended (exit code ${String(code)}) before writing anything`);
      if (done) throw new Error(`the Windows agent exited before listening:\n${output()}`);
      return null;
    },
    90_000,
  );
  const windowsPid = await waitFor('agent.pid', () => {
    try {
      return (JSON.parse(fs.readFileSync(path.join(dataDir, 'agent.pid'), 'utf8')) as { pid: number }).pid;
    } catch {
      return null;
    }
  });
  return {
    ...p,
    url,
    windowsPid,
    output,
    async stop() {
      if (!done) process.kill(p.pid, 'SIGINT');
      return p.exited;
    },
    async taskkill() {
      const r = await runWindowsProgram('taskkill', ['/F', '/PID', String(windowsPid)], options.outDir);
      if (r.code !== 0) throw new Error(`taskkill failed (${r.code}): ${r.stdout}${r.stderr}`);
      await p.exited;
    },
  };
}

/** Writes a config file as a site's text editor on Windows may: UTF-8 with a byte-order mark and CRLF line ends. */
export function writeWindowsConfig(file: string, config: Record<string, unknown>): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  // These agents play a site whose head office sends no token (as test/helpers' writeConfig does),
  // unless the case sets one: an untouched install would otherwise make its own token at first start.
  const webhook = (config.webhook ?? {}) as Record<string, unknown>;
  if (webhook.bearerToken === undefined && webhook.allowUnauthenticated === undefined) {
    config = { ...config, webhook: { ...webhook, allowUnauthenticated: true } };
  }
  fs.writeFileSync(file, `\uFEFF${JSON.stringify(config, null, 2).replace(/\n/g, '\r\n')}\r\n`);
  return file;
}

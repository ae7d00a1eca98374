import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');

/** The command as a site runs it: bin/pos-sync-agent.cjs (the build in dist/). */
export const CLI = path.join(REPO_ROOT, 'bin', 'pos-sync-agent.cjs');

export interface CliResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `pos-sync-agent ARGS --config CONFIG` in a process of its own and waits for it to end. */
export function runCli(config: string, args: readonly string[], options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): CliResult {
  const r = spawnSync(process.execPath, [CLI, ...args, '--config', config], {
    encoding: 'utf8',
    timeout: options.timeoutMs ?? 60_000,
    ...(options.env ? { env: { ...process.env, ...options.env } } : {}),
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A free loopback port below the ephemeral range (src/dev/child-agent.ts says why). */
export { freePort } from '../../src/dev/child-agent';

export interface ChildAgent {
  readonly child: ChildProcess;
  readonly url: string;
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** This checkout's `pos-sync-agent` under this Node. */
const CHECKOUT_CLI: readonly string[] = [process.execPath, path.join(REPO_ROOT, 'bin', 'pos-sync-agent.cjs')];

/**
 * Runs `pos-sync-agent serve --config FILE` as a real child process and waits until it listens.
 * `command` is the program to run (default: this checkout's bin under this Node), e.g. an installed one.
 */
export async function startChildAgent(configFile: string, env: NodeJS.ProcessEnv = {}, command: readonly string[] = CHECKOUT_CLI): Promise<ChildAgent> {
  return startServe(['--config', configFile], { env: { ...process.env, ...env }, command });
}

/** Runs `fn` with `serve --config FILE` running as a child process (startChildAgent), stopped after with SIGTERM. */
export async function withChildAgent<T>(configFile: string, fn: (agent: ChildAgent) => Promise<T>): Promise<T> {
  const agent = await startChildAgent(configFile);
  try {
    return await fn(agent);
  } finally {
    await agent.kill('SIGTERM');
  }
}

/**
 * Runs `pos-sync-agent serve ARGS` as a real child process and waits until it listens: `env` is the
 * child's whole environment (default: this process's), `cwd` its folder (default: the checkout).
 */
export async function startServe(
  args: readonly string[],
  options: { readonly env?: NodeJS.ProcessEnv; readonly cwd?: string; readonly command?: readonly string[] } = {},
): Promise<ChildAgent> {
  const command = options.command ?? CHECKOUT_CLI;
  const child = spawn(command[0]!, [...command.slice(1), 'serve', ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: options.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (c) => (out += c));
  child.stderr!.on('data', (c) => (out += c));
  const url = await new Promise<string>((resolve, reject) => {
    // One that never listens is not left running (a start-up loop would spin on after the test).
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`agent did not start:\n${out}`));
    }, 30_000);
    const check = (): void => {
      const m = /Receiving menu cycle updates at (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', check);
    // 'close', not 'exit': 'close' comes after the last output has been read, so an agent that
    // printed its address and then stopped (a test that makes it crash at once) is seen listening
    // first, however late this process got to read its pipe. (Once resolved, a reject is a no-op.)
    child.on('close', (code) => {
      check();
      clearTimeout(timer);
      reject(new Error(`agent exited with ${code} before listening:\n${out}`));
    });
  });
  return {
    child,
    url,
    output: () => out,
    kill: (signal = 'SIGKILL') =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill(signal);
      }),
  };
}

/**
 * Writes `config` as the agent's config.json. The tests that use it play a head office that sends no
 * token to a loopback webhook, so unless the config says anything about the token (or makes the
 * webhook reachable from outside, where the exposure rules apply), it carries the site's explicit
 * choice `webhook.allowUnauthenticated: true`. The default (a token made at first start, and an
 * earlier version's folder refused) is tested in test/integration/ops/webhook-token.test.ts, whose
 * configs say `allowUnauthenticated: false` or nothing through writeRawConfig.
 */
export function writeConfig(dir: string, config: Record<string, unknown>): string {
  const webhook = (config.webhook ?? {}) as Record<string, unknown>;
  const host = typeof webhook.host === 'string' ? webhook.host : '127.0.0.1';
  const decided = 'bearerToken' in webhook || 'allowUnauthenticated' in webhook || 'tls' in webhook || 'tunnel' in config || !/^(127\.|localhost$|::1$)/.test(host);
  return writeRawConfig(dir, decided ? config : { ...config, webhook: { ...webhook, allowUnauthenticated: true } });
}

/** Writes `config` exactly as given. */
export function writeRawConfig(dir: string, config: Record<string, unknown>): string {
  const file = path.join(dir, 'config.json');
  fs.writeFileSync(file, JSON.stringify(config, null, 2));
  return file;
}

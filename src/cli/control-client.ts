import { AppError } from '../errors';
import { controlEndpoint } from '../ops/control-protocol';
import { ControlClient } from '../ops/control-request';
import { isInstanceLocked, runningAgent, tryAcquireInstanceLock } from '../ops/instance';
import { makePrivateDir } from '../ops/private-files';

/**
 * The CLI's side of the control channel (ops/control-protocol.ts). A command that changes data asks
 * `runChange`: while an agent runs on the data folder the work is handed to it (its applier thread is
 * the one writer of the till's file); only when none runs does the command write directly, holding the
 * data folder's lock meanwhile so that no agent starts half-way through.
 */

export { ControlClient, type ControlRequest } from '../ops/control-request';

export type ChangeResult<T> = { readonly via: 'agent'; readonly pid: number; readonly result: T } | { readonly via: 'direct'; readonly result: T };

export interface ChangeOptions<T> {
  readonly dataDir: string;
  /** What the command does, for the lock's holder record and messages ("import"). */
  readonly what: string;
  readonly actor: string;
  readonly viaAgent: (client: ControlClient) => Promise<T>;
  readonly direct: () => T;
  /** How long to wait for an agent that holds the folder to open its control channel (it is starting). */
  readonly waitForAgentMs?: number;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The running agent on `dataDir` (waiting up to `waitMs` for one that is starting), or null when none runs. */
export async function reachAgent(dataDir: string, actor: string, waitMs: number): Promise<{ client: ControlClient; pid: number } | null> {
  const endpoint = controlEndpoint(dataDir);
  const deadline = Date.now() + waitMs;
  for (;;) {
    if (!isInstanceLocked(dataDir)) return null;
    try {
      const client = new ControlClient(endpoint, actor);
      const { pid } = await client.ping();
      return { client, pid };
    } catch (err) {
      const holder = runningAgent(dataDir);
      if (holder && holder.pid === 0) {
        throw new AppError('agent_running', 409, `another command (compact, restore) holds ${dataDir}: wait for it to finish, then try again`);
      }
      if (Date.now() >= deadline) {
        const code = (err as NodeJS.ErrnoException).code ?? (err instanceof Error ? err.message : String(err));
        throw new AppError(
          'agent_unreachable',
          503,
          `an agent${holder ? ` (pid ${holder.pid})` : ''} runs on ${dataDir} but does not answer on ${endpoint} (${code}): ` +
            'if it is still starting, try again in a minute; otherwise restart it',
        );
      }
      await sleep(200);
    }
  }
}

/** Hands the change to the running agent, or makes it here when none runs (see the module comment). */
export async function runChange<T>(options: ChangeOptions<T>): Promise<ChangeResult<T>> {
  const waitMs = options.waitForAgentMs ?? 15_000;
  // A first command on a new folder: the lock file lives in it.
  makePrivateDir(options.dataDir);
  for (let attempt = 0; attempt < 3; attempt++) {
    const agent = await reachAgent(options.dataDir, options.actor, waitMs);
    if (agent) return { via: 'agent', pid: agent.pid, result: await options.viaAgent(agent.client) };
    const lock = tryAcquireInstanceLock(options.dataDir, options.what, 0);
    // An agent started between the check and the lock: hand it the work after all.
    if (!lock) continue;
    try {
      return { via: 'direct', result: options.direct() };
    } finally {
      lock.release();
    }
  }
  throw new AppError('agent_running', 409, `${options.dataDir} is in use by another process that keeps starting and stopping: try again`);
}

/**
 * When the desktop shell restarts its agent process, as pure functions of what happened (no timers,
 * no processes), so every rule is unit-tested. supervisor.ts applies them to a real child.
 *
 * The rules:
 * - A child that dies is started again after a delay that doubles from `baseDelayMs` up to `maxDelayMs`,
 *   so a crash loop costs little CPU and fills the log slowly.
 * - A child that stayed up `healthyAfterMs` after reporting ready was healthy: its death starts the
 *   count again from the shortest delay.
 * - The shell gives up (and says so) after `maxFailures` deaths in a row without a healthy run, or at
 *   once when the very first child of this app run reports a fatal error before it was ready: that is a
 *   configuration or installation problem, which restarting does not mend.
 * - Nothing is restarted while stopping: quitting the app stops the child and cancels a pending start.
 */

export interface BackoffPolicy {
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly maxFailures: number;
  readonly healthyAfterMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseDelayMs: 1_000, maxDelayMs: 30_000, maxFailures: 8, healthyAfterMs: 60_000 };

/** The delay before restart number `failures` (1 = after the first death in a row). */
export function restartDelayMs(failures: number, policy: BackoffPolicy = DEFAULT_BACKOFF): number {
  if (!Number.isInteger(failures) || failures < 1) throw new RangeError(`failures must be a whole number from 1, not ${failures}`);
  // 2 ** n overflows to Infinity long before failures is large; Math.min keeps it at the cap.
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (failures - 1));
}

/** What the supervisor knows about the run of children so far. */
export interface RunRecord {
  /** Deaths in a row since the last healthy run. */
  readonly failures: number;
  /** Whether any child of this app run has reported ready. */
  readonly everReady: boolean;
}

/** What it knows about the child that just exited. */
export interface ExitFacts {
  /** When it reported ready (ms clock), or null when it never did. */
  readonly readyAt: number | null;
  readonly exitedAt: number;
  /** It reported a fatal error before exiting. */
  readonly fatal: boolean;
  /** The shell asked it to stop (quit, or a restart it requested): not a failure. */
  readonly stopping: boolean;
}

export type ExitDecision =
  | { readonly action: 'stay-stopped' }
  | { readonly action: 'restart'; readonly delayMs: number; readonly record: RunRecord }
  | { readonly action: 'give-up'; readonly reason: string; readonly record: RunRecord };

export function wasHealthy(facts: Pick<ExitFacts, 'readyAt' | 'exitedAt'>, policy: BackoffPolicy = DEFAULT_BACKOFF): boolean {
  return facts.readyAt !== null && facts.exitedAt - facts.readyAt >= policy.healthyAfterMs;
}

export function decideAfterExit(record: RunRecord, facts: ExitFacts, policy: BackoffPolicy = DEFAULT_BACKOFF): ExitDecision {
  if (facts.stopping) return { action: 'stay-stopped' };
  const everReady = record.everReady || facts.readyAt !== null;
  // A healthy run wipes the slate: this death is the first of a new series.
  const failures = (wasHealthy(facts, policy) ? 0 : record.failures) + 1;
  const next: RunRecord = { failures, everReady };
  if (!everReady && facts.fatal) {
    return { action: 'give-up', reason: 'the agent could not start', record: next };
  }
  if (failures >= policy.maxFailures) {
    return { action: 'give-up', reason: `the agent stopped ${failures} times in a row`, record: next };
  }
  return { action: 'restart', delayMs: restartDelayMs(failures, policy), record: next };
}

/** The supervisor's states; a child is alive only in `starting`, `running` and `stopping`. */
export type SupervisorState = 'idle' | 'starting' | 'running' | 'waiting' | 'stopping' | 'stopped' | 'gave-up';

/**
 * Whether a new child may be started now. Only from idle (first start) or after the back-off wait:
 * never while a child is alive or stopping, so two agents can never run on one data folder.
 */
export function mayStart(state: SupervisorState): boolean {
  return state === 'idle' || state === 'waiting';
}

import type { Config } from '../config/schema';
import type { ApplyPriority, PriorityOutcome } from '../threads/priority';
import type { BaselinePolicy } from '../domain/sequence';
import type { AppliedUpdate, ApplyProgress, LocationFailure } from './applier';
import type { RangePruneRequest } from './range-prune';

/** The applier thread's start-up data. */
export interface ApplierWorkerData {
  readonly dataDir: string;
  readonly policy: BaselinePolicy;
  readonly baselineSettleMs: number;
  /** Where each location's timezone comes from (config locations.<id>.timezone, else defaultTimezone). */
  readonly timezones: Pick<Config, 'locations' | 'defaultTimezone'>;
  /** config sync.applyPriority: set by the thread on itself as it starts (and again if it is restarted). */
  readonly priority: ApplyPriority;
  /** This site's locations (config sitePolicyOf): updates for others are stored, not applied. */
  readonly site: { readonly configured: readonly number[]; readonly acceptOthers: boolean };
  /** One Int32 on shared memory: set to 1 by the main thread when the agent stops (no message can reach a busy thread). */
  readonly stopFlag: SharedArrayBuffer;
}

/** Main thread -> applier thread (src/threads: each request gets one reply). */
export type ApplierRequest =
  /**
   * `failures`: the failed applies the main thread last heard of (each reply's), which a thread that
   * starts again after a rest takes over, so a failing update keeps its retry delay across rests.
   */
  | { readonly type: 'drain'; readonly failures: readonly LocationFailure[] }
  | { readonly type: 'force-apply'; readonly inboxId: number; readonly actor: string; readonly reason: string; readonly failures: readonly LocationFailure[] }
  | { readonly type: 'prune-ranges'; readonly request: RangePruneRequest }
  /**
   * The thread's last request: close its connections. `optimize` (at shutdown) lets SQLite refresh its
   * statistics first, which may write to both files; a rest (ApplierHost) does not, so that ending the
   * thread is not itself a change the poll would wake it for.
   */
  | { readonly type: 'close'; readonly optimize: boolean };

export interface DrainReply {
  readonly applied: AppliedUpdate[];
  /** Applier.wakeAt after the drain: when what it left becomes due with no change to agent.db. */
  readonly wakeAt: number | null;
  /** The failed applies still waiting to be tried again (Applier.failureRecords). */
  readonly failures: LocationFailure[];
}

export interface ForceApplyReply {
  readonly forced: AppliedUpdate;
  readonly then: AppliedUpdate[];
  /** As DrainReply's, after the drain that follows the force-apply. */
  readonly wakeAt: number | null;
  readonly failures: LocationFailure[];
}

/** Applier thread -> main thread, as they happen (for the log). */
export type ApplierEvent =
  | { readonly type: 'applied'; readonly update: AppliedUpdate }
  | { readonly type: 'failed'; readonly locationId: number; readonly inboxId: number; readonly message: string }
  | { readonly type: 'reconciled'; readonly inboxId: number }
  | { readonly type: 'progress'; readonly progress: ApplyProgress }
  | { readonly type: 'priority'; readonly outcome: PriorityOutcome };

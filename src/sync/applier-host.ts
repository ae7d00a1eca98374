import type { Logger } from '../log';
import { describePriority } from '../threads/priority';
import { ThreadClient, YOUNG_GENERATION_MB, type ThreadHeap } from '../threads/thread-client';
import type { AppliedUpdate, ApplyProgress } from './applier';
import type { RangePruneBatch, RangePruneRequest } from './range-prune';
import type { ApplierEvent, ApplierRequest, ApplierWorkerData, DrainReply, ForceApplyReply } from './applier-protocol';

export interface ApplierHostEvents {
  applied?(update: AppliedUpdate): void;
  failed?(locationId: number, inboxId: number, message: string): void;
  reconciled?(inboxId: number): void;
  progress?(progress: ApplyProgress): void;
}

/**
 * The main thread's side of the applier thread (src/sync/applier-worker.ts). Drain requests are
 * coalesced: at most one runs and one more is queued, however many deliveries arrive meanwhile.
 * If the thread dies (it should not: every request catches its errors), the next request starts it
 * again and redoes what was lost, which is safe because applies are idempotent across the two files
 * (Applier.reconcile).
 */
export class ApplierHost {
  private readonly thread: ThreadClient<ApplierRequest, ApplierEvent>;
  private drainRunning: Promise<AppliedUpdate[]> | null = null;
  private drainQueued: Promise<AppliedUpdate[]> | null = null;
  private closing = false;

  private readonly stopFlag = new Int32Array(new SharedArrayBuffer(4));

  constructor(data: Omit<ApplierWorkerData, 'stopFlag'>, log: Logger, events: ApplierHostEvents = {}) {
    this.thread = new ThreadClient<ApplierRequest, ApplierEvent>({
      dir: __dirname,
      entry: 'applier-worker',
      name: 'applier',
      workerData: { ...data, stopFlag: this.stopFlag.buffer } satisfies ApplierWorkerData,
      // The old-generation cap is a wide margin over what the largest publication keeps alive while it
      // is applied (bench/mem-probe measures it), and still makes the thread collect long before the
      // machine feels it. The young generation is what an apply churns through (each item's parsed
      // objects die with the item): the smallest V8 makes (YOUNG_GENERATION_MB) keeps the
      // thread's idle and peak memory down without slowing the apply (docs/performance.md, "Where the
      // memory goes").
      resourceLimits: { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
      onEvent: (event) => {
        if (event.type === 'applied') events.applied?.(event.update);
        else if (event.type === 'failed') events.failed?.(event.locationId, event.inboxId, event.message);
        else if (event.type === 'reconciled') events.reconciled?.(event.inboxId);
        else if (event.type === 'progress') events.progress?.(event.progress);
        else if (event.outcome.lowered || event.outcome.reason === 'normal') log.info(describePriority('the applier', event.outcome));
        else log.warn(describePriority('the applier', event.outcome));
      },
      onUnexpectedExit: (reason) => log.error(`applier thread stopped (${reason}); it starts again with the next delivery`),
    });
  }

  start(): Promise<void> {
    return this.thread.start();
  }

  /** Applies whatever the chain allows now, on the applier thread. Coalesces concurrent calls. */
  drain(): Promise<AppliedUpdate[]> {
    if (this.closing) return Promise.resolve([]);
    if (!this.drainRunning) {
      this.drainRunning = this.runDrain();
      return this.drainRunning;
    }
    // One is running: everything asked for meanwhile is served by one more drain after it.
    if (!this.drainQueued) {
      const after = this.drainRunning.catch(() => []);
      this.drainQueued = after.then(() => {
        this.drainQueued = null;
        this.drainRunning = this.runDrain();
        return this.drainRunning;
      });
    }
    return this.drainQueued;
  }

  private async runDrain(): Promise<AppliedUpdate[]> {
    try {
      return (await this.thread.request<DrainReply>({ type: 'drain' })).applied;
    } finally {
      this.drainRunning = null;
    }
  }

  forceApply(inboxId: number, actor: string, reason: string): Promise<ForceApplyReply> {
    return this.thread.request<ForceApplyReply>({ type: 'force-apply', inboxId, actor, reason });
  }

  /** One batch of retention's range pruning, on the applier thread (the one writer of the menu). */
  pruneRanges(request: RangePruneRequest): Promise<RangePruneBatch> {
    if (this.closing) return Promise.resolve({ changed: 0, ms: 0 });
    return this.thread.request<RangePruneBatch>({ type: 'prune-ranges', request });
  }

  /** Waits for the running apply (if any), closes the thread's connections and ends it. */
  /** This thread's V8 heap (the bench's per-thread figures). */
  heapStatistics(): Promise<ThreadHeap | null> {
    return this.thread.heapStatistics();
  }

  async close(): Promise<void> {
    this.closing = true;
    // The drain under way ends after the update it is applying; the rest waits for the next start.
    Atomics.store(this.stopFlag, 0, 1);
    await this.drainRunning?.catch(() => undefined);
    await this.thread.stop({ type: 'close' });
  }
}

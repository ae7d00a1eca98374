import type { Logger } from '../log';
import { describePriority } from '../threads/priority';
import { ThreadClient, YOUNG_GENERATION_MB, type ThreadHeap } from '../threads/thread-client';
import { retryAfterFailureMs, type AppliedUpdate, type ApplyProgress, type LocationFailure } from './applier';
import type { RangePruneBatch, RangePruneRequest } from './range-prune';
import type { ApplierEvent, ApplierRequest, ApplierWorkerData, DrainReply, ForceApplyReply } from './applier-protocol';

export interface ApplierHostEvents {
  applied?(update: AppliedUpdate): void;
  failed?(locationId: number, inboxId: number, message: string): void;
  reconciled?(inboxId: number): void;
  progress?(progress: ApplyProgress): void;
  /**
   * The thread ended while it was applying: the update it was applying, from agent.db's 'applying'
   * note (recording `message` with it, as a failed apply's), or null when it was not applying one.
   */
  interrupted?(message: string): { readonly locationId: number; readonly inboxId: number } | null;
}

/**
 * How long the applier thread stays after its last request before it rests (ends, to start again
 * with the next): a burst of deliveries is applied by one thread, and an agent with nothing to
 * apply does not keep a thread's memory (docs/performance.md, "Where the memory goes").
 */
export const APPLIER_REST_AFTER_MS = 30_000;

/**
 * While updates wait for something no drain can bring (a missing parent, an operator), the poll
 * lets the thread rest; this bounds how long before it looks again anyway, should a change ever reach
 * agent.db in a way the poll does not see.
 */
export const APPLIER_RECHECK_AFTER_MS = 5 * 60_000;

/**
 * The main thread's side of the applier thread (src/sync/applier-worker.ts). Drain requests are
 * coalesced: at most one runs and one more is queued, however many deliveries arrive meanwhile.
 * If the thread dies (it should not: every request catches its errors), the next request starts it
 * again and redoes what was lost, which is safe because applies are idempotent across the two files
 * (Applier.reconcile). The thread rests `restAfterMs` after its last request and starts again
 * with the next one.
 */
export class ApplierHost {
  private readonly thread: ThreadClient<ApplierRequest, ApplierEvent>;
  private drainRunning: Promise<AppliedUpdate[]> | null = null;
  private drainQueued: Promise<AppliedUpdate[]> | null = null;
  private closing = false;
  /** Requests sent and not yet answered: the thread rests only when there are none. */
  private inFlight = 0;
  private restTimer: NodeJS.Timeout | null = null;
  /** From the last drain: when what it left waiting is due again with no change to agent.db (epoch ms). */
  private dueAt = 0;
  /** What the last start said about the thread's priority: said again only when it changes. */
  private lastPriority: string | null = null;
  /** Failed applies as the thread last reported them, handed to the next thread after a rest. */
  private failures: LocationFailure[] = [];
  /** Requests in a row that failed as a whole (the thread's storage, or the thread itself). */
  private requestFailures = 0;

  /** When each update whose apply failed is tried again (ISO), as the thread last reported it. */
  retries(): { inboxId: number; retryAt: string }[] {
    return this.failures.map((f) => ({ inboxId: f.inboxId, retryAt: new Date(f.retryAt).toISOString() }));
  }

  private readonly stopFlag = new Int32Array(new SharedArrayBuffer(4));

  constructor(
    data: Omit<ApplierWorkerData, 'stopFlag'>,
    private readonly log: Logger,
    events: ApplierHostEvents = {},
    private readonly restAfterMs: number = APPLIER_REST_AFTER_MS,
  ) {
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
        else {
          // Each start of the thread reports it; the log says it once, and again if it changes.
          const text = describePriority('the applier', event.outcome);
          if (text === this.lastPriority) return;
          this.lastPriority = text;
          if (event.outcome.lowered || event.outcome.reason === 'normal') log.info(text);
          else log.warn(text);
        }
      },
      onUnexpectedExit: (reason) => {
        log.error(`applier thread stopped (${reason}); it starts again with the next delivery`);
        this.noteInterrupted(reason, events);
      },
    });
  }

  async start(): Promise<void> {
    await this.thread.start();
    this.armRest();
  }

  /** Whether the thread is running now (it rests when it has had nothing to do for a while). */
  get awake(): boolean {
    return this.thread.running;
  }

  /** Sends a request to the thread (starting it if it rests), keeping it awake until answered. */
  private async call<T>(request: ApplierRequest): Promise<T> {
    this.inFlight += 1;
    if (this.restTimer) clearTimeout(this.restTimer);
    this.restTimer = null;
    try {
      return await this.thread.request<T>(request);
    } finally {
      this.inFlight -= 1;
      this.armRest();
    }
  }

  private armRest(): void {
    if (this.closing || this.inFlight > 0) return;
    if (this.restTimer) clearTimeout(this.restTimer);
    this.restTimer = setTimeout(() => {
      this.restTimer = null;
      if (this.closing || this.inFlight > 0) return;
      this.thread.rest({ type: 'close', optimize: false }).catch((err: unknown) => this.log.error(`applier thread: could not rest: ${String(err)}`));
    }, this.restAfterMs);
    // A resting timer never keeps the process alive.
    this.restTimer.unref();
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
      const reply = await this.call<DrainReply>({ type: 'drain', failures: this.failures });
      this.noteReply(reply);
      return reply.applied;
    } catch (err) {
      this.noteRequestFailure();
      throw err;
    } finally {
      this.drainRunning = null;
    }
  }

  private noteReply(reply: { wakeAt: number | null; failures: LocationFailure[] }): void {
    this.failures = reply.failures;
    this.requestFailures = 0;
    this.dueAt = reply.wakeAt ?? Date.now() + APPLIER_RECHECK_AFTER_MS;
  }

  /**
   * The thread ended in the middle of an apply (out of memory, say): that update failed, like one
   * whose apply threw. Its location waits out the doubling retry delay, which the next thread takes
   * over with the other failures, and every other location is applied meanwhile; without this each
   * new thread met the same update first and ended the same way, holding up every location after it.
   */
  private noteInterrupted(reason: string, events: ApplierHostEvents): void {
    let update: { locationId: number; inboxId: number } | null = null;
    const message = `the applier thread stopped while applying it (${reason})`;
    try {
      update = events.interrupted?.(message) ?? null;
    } catch (err) {
      this.log.error(`applier thread: could not read the update it was applying: ${String(err)}`);
    }
    if (!update) return;
    const previous = this.failures.find((f) => f.locationId === update.locationId);
    const failures = previous?.inboxId === update.inboxId ? previous.failures + 1 : 1;
    const at = Date.now();
    this.failures = [
      ...this.failures.filter((f) => f.locationId !== update.locationId),
      { locationId: update.locationId, inboxId: update.inboxId, message, at: new Date(at).toISOString(), failures, retryAt: at + retryAfterFailureMs(failures) },
    ];
    events.failed?.(update.locationId, update.inboxId, message);
  }

  /** A request that failed as a whole is tried again after the same doubling delay as a failed apply. */
  private noteRequestFailure(): void {
    this.requestFailures += 1;
    this.dueAt = Date.now() + retryAfterFailureMs(this.requestFailures);
  }

  /**
   * Whether updates the last drain left waiting are due again at `now` without any change to
   * agent.db (a baseline's settle deadline, a failure to retry, or the recheck). Until then the
   * poll wakes the thread only for a change, so it rests through a chain gap.
   */
  waitingDue(now: number): boolean {
    return now >= this.dueAt;
  }

  async forceApply(inboxId: number, actor: string, reason: string): Promise<Omit<ForceApplyReply, 'wakeAt' | 'failures'>> {
    try {
      const { wakeAt, failures, ...reply } = await this.call<ForceApplyReply>({ type: 'force-apply', inboxId, actor, reason, failures: this.failures });
      this.noteReply({ wakeAt, failures });
      return reply;
    } catch (err) {
      // Refused (not waiting, stale...) or failed: the next poll drains at once, as after any change.
      this.dueAt = 0;
      throw err;
    }
  }

  /** One batch of retention's range pruning, on the applier thread (the one writer of the menu). */
  pruneRanges(request: RangePruneRequest): Promise<RangePruneBatch> {
    if (this.closing) return Promise.resolve({ changed: 0, ms: 0 });
    return this.call<RangePruneBatch>({ type: 'prune-ranges', request });
  }

  /** This thread's V8 heap (the bench's per-thread figures); null while it rests. */
  heapStatistics(): Promise<ThreadHeap | null> {
    return this.thread.heapStatistics();
  }

  /** Waits for the running apply (if any), closes the thread's connections and ends it. */
  async close(): Promise<void> {
    this.closing = true;
    if (this.restTimer) clearTimeout(this.restTimer);
    this.restTimer = null;
    // The drain under way ends after the update it is applying; the rest waits for the next start.
    Atomics.store(this.stopFlag, 0, 1);
    await this.drainRunning?.catch(() => undefined);
    await this.thread.stop({ type: 'close', optimize: true });
  }
}

import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { AppError } from '../errors';
import type { Logger } from '../log';
import type { AppliedUpdate } from './applier';
import type { ApplierMessage, ApplierRequest, ApplierWorkerData } from './applier-protocol';

export interface ApplierHostEvents {
  applied?(update: AppliedUpdate): void;
  failed?(locationId: number, inboxId: number, message: string): void;
  reconciled?(inboxId: number): void;
}

type Pending = { resolve: (message: ApplierMessage) => void; reject: (err: Error) => void };

/** The worker's entry, as .js in a build and .ts under tsx (development and tests). */
function workerEntry(): { source: string; eval: boolean } {
  const ext = path.extname(__filename);
  const file = path.join(__dirname, `applier-worker${ext}`);
  if (ext === '.ts') {
    // Worker threads do not inherit tsx's loader from `--import tsx`: register its CommonJS hook first.
    return { source: `require('tsx/cjs'); require(${JSON.stringify(file)});`, eval: true };
  }
  return { source: file, eval: false };
}

/**
 * The main thread's side of the applier thread (src/sync/applier-worker.ts). Drain requests are
 * coalesced: at most one runs and one more is queued, however many deliveries arrive meanwhile.
 * If the thread dies (it should not: every request catches its errors), it is started again and
 * what it was doing is redone by the next drain, which is safe because applies are idempotent
 * across the two files (Applier.reconcile).
 */
export class ApplierHost {
  private worker: Worker | null = null;
  private ready: Promise<void> | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private drainRunning: Promise<AppliedUpdate[]> | null = null;
  private drainQueued: Promise<AppliedUpdate[]> | null = null;
  private closing = false;

  constructor(
    private readonly data: ApplierWorkerData,
    private readonly log: Logger,
    private readonly events: ApplierHostEvents = {},
  ) {}

  start(): Promise<void> {
    if (this.ready) return this.ready;
    const entry = workerEntry();
    const worker = new Worker(entry.source, { eval: entry.eval, workerData: this.data, name: 'applier' });
    this.worker = worker;
    this.ready = new Promise<void>((resolve, reject) => {
      const onMessage = (message: ApplierMessage): void => {
        if (message.type === 'ready') {
          resolve();
          return;
        }
        this.onMessage(message);
      };
      worker.on('message', onMessage);
      worker.once('error', (err) => {
        reject(err);
        this.onExit(err);
      });
      worker.once('exit', (code) => {
        reject(new Error(`the applier thread exited with code ${code} before it was ready`));
        this.onExit(null, code);
      });
    });
    return this.ready;
  }

  private onMessage(message: ApplierMessage): void {
    switch (message.type) {
      case 'applied':
        this.events.applied?.(message.update);
        return;
      case 'failed':
        this.events.failed?.(message.locationId, message.inboxId, message.message);
        return;
      case 'reconciled':
        this.events.reconciled?.(message.inboxId);
        return;
      case 'ready':
        return;
      default: {
        const waiter = this.pending.get(message.id);
        if (!waiter) return;
        this.pending.delete(message.id);
        waiter.resolve(message);
      }
    }
  }

  private onExit(err: Error | null, code?: number): void {
    if (this.worker === null) return;
    this.worker = null;
    this.ready = null;
    const reason = err ? err.message : `exit code ${code}`;
    for (const waiter of this.pending.values()) waiter.reject(new AppError('applier_stopped', 503, `the applier stopped (${reason}); try again`));
    this.pending.clear();
    this.drainRunning = null;
    this.drainQueued = null;
    if (!this.closing) this.log.error(`applier thread stopped (${reason}); it starts again with the next delivery`);
  }

  private async request(make: (id: number) => ApplierRequest): Promise<ApplierMessage> {
    await this.start();
    const worker = this.worker;
    if (!worker) throw new AppError('applier_stopped', 503, 'the applier is not running; try again');
    const id = this.nextId++;
    const reply = new Promise<ApplierMessage>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    worker.postMessage(make(id));
    const message = await reply;
    if (message.type === 'error') throw new AppError(message.error.errorId, message.error.status, message.error.message);
    return message;
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
      const message = await this.request((id) => ({ type: 'drain', id }));
      return message.type === 'drained' ? message.applied : [];
    } finally {
      this.drainRunning = null;
    }
  }

  async forceApply(inboxId: number, actor: string, reason: string): Promise<{ forced: AppliedUpdate; then: AppliedUpdate[] }> {
    const message = await this.request((id) => ({ type: 'force-apply', id, inboxId, actor, reason }));
    if (message.type !== 'forced') throw new AppError('applier_protocol', 500, `unexpected reply ${message.type} to force-apply`);
    return { forced: message.forced, then: message.then };
  }

  /** Waits for the running apply (if any) to finish, closes the thread's connections and ends it. */
  async close(): Promise<void> {
    if (this.closing) return;
    const worker = this.worker;
    if (!worker) {
      this.closing = true;
      return;
    }
    try {
      await this.drainRunning?.catch(() => undefined);
      const closed = this.request((id) => ({ type: 'close', id }));
      this.closing = true;
      await closed;
    } catch {
      // The thread is gone already; nothing to close.
    }
    this.closing = true;
    await worker.terminate();
  }
}

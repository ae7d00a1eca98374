import path from 'node:path';
import { Worker, type TransferListItem } from 'node:worker_threads';
import { AppError } from '../errors';

/**
 * The main thread's end of a worker thread that answers requests (the webhook's thread and the applier
 * thread). Every request carries an id; the reply with that id settles it. Errors cross
 * as plain data and are rebuilt here: an AppError keeps its id and status, any other error keeps its
 * `code`, so a SQLite storage failure still becomes a 503 with Retry-After (src/http/errors.ts).
 */

export interface SerializedError {
  readonly message: string;
  readonly code?: string;
  readonly appError?: { readonly id: string; readonly status: number; readonly details: Record<string, unknown> };
}

export function serializeError(err: unknown): SerializedError {
  if (err instanceof AppError) return { message: err.message, appError: { id: err.id, status: err.status, details: { ...err.details } } };
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return { message: err instanceof Error ? err.message : String(err), ...(typeof code === 'string' ? { code } : {}) };
}

export function deserializeError(e: SerializedError): Error {
  if (e.appError) return new AppError(e.appError.id, e.appError.status, e.message, e.appError.details);
  const err = new Error(e.message) as Error & { code?: string };
  if (e.code) err.code = e.code;
  return err;
}

/** Replies from a thread: `reply` settles request `id`; anything else is an event. */
export type ThreadReply = { readonly kind: 'reply'; readonly id: number; readonly ok: true; readonly value: unknown } | { readonly kind: 'reply'; readonly id: number; readonly ok: false; readonly error: SerializedError };
export type ThreadEvent = { readonly kind: 'event'; readonly event: unknown } | { readonly kind: 'ready' };
export type ThreadRequest = { readonly id: number; readonly request: unknown };

/** The worker file next to the caller, as .js in a build and .ts under tsx (development and tests). */
function workerEntry(dir: string, base: string): { source: string; eval: boolean } {
  const ext = path.extname(__filename);
  const file = path.join(dir, `${base}${ext}`);
  if (ext === '.ts') {
    // Worker threads do not inherit tsx's loader from `--import tsx`: register its CommonJS hook first.
    return { source: `require('tsx/cjs'); require(${JSON.stringify(file)});`, eval: true };
  }
  return { source: file, eval: false };
}

/** Requests waiting for their replies, by id (ThreadClient's bookkeeping). */
class Waiting {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (err: Error) => void }>();

  /** Sends the request with a new id (through `post`) and resolves with its reply's value. */
  send<T>(post: (message: ThreadRequest) => void, request: unknown): Promise<T> {
    const id = this.nextId++;
    const reply = new Promise<unknown>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    post({ id, request });
    return reply as Promise<T>;
  }

  settle(reply: ThreadReply): void {
    const waiter = this.pending.get(reply.id);
    if (!waiter) return;
    this.pending.delete(reply.id);
    if (reply.ok) waiter.resolve(reply.value);
    else waiter.reject(deserializeError(reply.error));
  }

  /** The other end is gone: every request still waiting fails as a 503 (a sender retries). */
  failAll(name: string, reason: string): void {
    for (const waiter of this.pending.values()) waiter.reject(new AppError(`${name}_stopped`, 503, `the ${name} thread stopped (${reason}); try again`));
    this.pending.clear();
  }
}

/**
 * Each worker thread's young generation, in MB (resourceLimits.maxYoungGenerationSizeMb): the
 * smallest V8 makes. Every object the agent's threads make for a delivery or an
 * item dies young or is kept for the whole apply, so a larger one would only add to each idle
 * thread's committed heap and to the peak of an apply (`npm run bench` measures both;
 * docs/performance.md, "Where the memory goes").
 */
export const YOUNG_GENERATION_MB = 3;

/** A thread's V8 heap: committed, in use, and what its isolate counts outside it (Buffers). */
export interface ThreadHeap {
  readonly totalHeapBytes: number;
  readonly usedHeapBytes: number;
  readonly externalBytes: number;
}

export class ThreadClient<Request, Event = never> {
  private worker: Worker | null = null;
  private ready: Promise<void> | null = null;
  private readonly waiting = new Waiting();
  private stopped = false;
  /** A rest under way (see rest): requests wait for it, then start a new thread. */
  private resting: Promise<void> | null = null;

  constructor(
    private readonly options: {
      /** Folder and base name of the worker file (without extension). */
      readonly dir: string;
      readonly entry: string;
      readonly name: string;
      readonly workerData: unknown;
      /**
       * The thread's V8 heap bounds. Without them each thread's heap grows towards a share of the
       * machine's memory before collecting, and three isolates doing that made the agent's peak RSS
       * many times a large publication's size; bodies themselves are Buffers, outside these limits.
       */
      readonly resourceLimits?: { readonly maxOldGenerationSizeMb: number; readonly maxYoungGenerationSizeMb?: number };
      readonly onEvent?: (event: Event) => void;
      /** The thread ended without being asked to (it is started again by the next request). */
      readonly onUnexpectedExit?: (reason: string) => void;
    },
  ) {}

  /** The thread's V8 heap (what its isolate holds), or null while it is not running. */
  async heapStatistics(): Promise<ThreadHeap | null> {
    const worker = this.worker;
    if (!worker) return null;
    // Worker#getHeapStatistics (Node 22+) is not in this @types/node.
    const h = await (worker as Worker & { getHeapStatistics(): Promise<{ total_heap_size: number; used_heap_size: number; external_memory: number }> }).getHeapStatistics();
    return { totalHeapBytes: h.total_heap_size, usedHeapBytes: h.used_heap_size, externalBytes: h.external_memory };
  }

  start(): Promise<void> {
    if (this.ready) return this.ready;
    const entry = workerEntry(this.options.dir, this.options.entry);
    const worker = new Worker(entry.source, {
      eval: entry.eval,
      workerData: this.options.workerData,
      name: this.options.name,
      ...(this.options.resourceLimits ? { resourceLimits: this.options.resourceLimits } : {}),
    });
    this.worker = worker;
    this.ready = new Promise<void>((resolve, reject) => {
      worker.on('message', (message: ThreadReply | ThreadEvent) => {
        if (message.kind === 'ready') resolve();
        else if (message.kind === 'event') this.options.onEvent?.(message.event as Event);
        else this.waiting.settle(message);
      });
      worker.once('error', (err) => {
        reject(err);
        this.gone(worker, err.message);
      });
      worker.once('exit', (code) => {
        reject(new Error(`the ${this.options.name} thread exited with code ${code} before it was ready`));
        this.gone(worker, `exit code ${code}`);
      });
    });
    return this.ready;
  }

  /**
   * `worker` ended. A thread that throws fires 'error' and, once torn down, 'exit': by then a new
   * thread may already run (onUnexpectedExit restarts at once), which the old one's 'exit' must not
   * take for itself.
   */
  private gone(worker: Worker, reason: string): void {
    if (this.worker !== worker) return;
    this.worker = null;
    this.ready = null;
    this.waiting.failAll(this.options.name, reason);
    if (!this.stopped) this.options.onUnexpectedExit?.(reason);
  }

  /** Whether the thread is running (or starting) now. */
  get running(): boolean {
    return this.worker !== null;
  }

  /** Sends a request (starting the thread if needed) and resolves with its reply's value. */
  async request<T>(request: Request, transfer: readonly TransferListItem[] = []): Promise<T> {
    if (this.stopped) throw new AppError(`${this.options.name}_stopped`, 503, `the ${this.options.name} thread is stopping; try again`);
    while (this.resting) await this.resting;
    if (this.stopped) throw new AppError(`${this.options.name}_stopped`, 503, `the ${this.options.name} thread is stopping; try again`);
    await this.start();
    const worker = this.worker;
    if (!worker) throw new AppError(`${this.options.name}_stopped`, 503, `the ${this.options.name} thread is not running; try again`);
    return this.waiting.send<T>((message) => worker.postMessage(message, [...transfer]), request);
  }

  /**
   * Ends the thread after a last request (e.g. "close your connections"), as stop does, but not for
   * good: the next request starts a new one. The caller rests a thread only while it has no request
   * of its own waiting; one sent meanwhile waits for the rest to end, then starts the thread again.
   */
  async rest(last?: Request): Promise<void> {
    const worker = this.worker;
    if (this.stopped || this.resting || !worker) return;
    const resting = (async () => {
      if (last !== undefined) {
        try {
          await this.ready;
          await this.waiting.send((message) => worker.postMessage(message), last);
        } catch {
          // The thread is gone already; nothing to close.
        }
      }
      // Not this client's thread any more: its exit is expected and must not count as a stop.
      if (this.worker === worker) {
        this.worker = null;
        this.ready = null;
      }
      await worker.terminate();
      this.waiting.failAll(this.options.name, 'resting');
    })();
    this.resting = resting;
    try {
      await resting;
    } finally {
      this.resting = null;
    }
  }

  /** Sends a last request (e.g. "close your connections"), then ends the thread. */
  async stop(last?: Request): Promise<void> {
    if (this.stopped) return;
    while (this.resting) await this.resting;
    const worker = this.worker;
    if (worker && last !== undefined) {
      try {
        await this.request(last);
      } catch {
        // The thread is gone already; nothing to close.
      }
    }
    this.stopped = true;
    if (worker) await worker.terminate();
  }
}

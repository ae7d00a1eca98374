import type { Config } from '../config/schema';
import { describeError } from '../errors';
import type { Logger } from '../log';
import type { QuarantineBudget } from '../store/inbox';
import { InboxClient } from '../store/inbox-client';
import { ThreadClient, YOUNG_GENERATION_MB, type ThreadHeap } from '../threads/thread-client';
import type { LoopDelay, ReceiverEvent, ReceiverNotice, ReceiverRequest, ReceiverWorkerData } from './receiver-protocol';
import type { RefusalCounter } from './refusals';

export interface ReceiverHostDeps {
  readonly config: Config['webhook'];
  readonly dataDir: string;
  /** How much of the refused bodies the inbox keeps. */
  readonly quarantine: QuarantineBudget;
  readonly log: Logger;
  readonly refusals: Pick<RefusalCounter, 'count'>;
  /** A delivery was stored: the applier's cue. */
  readonly onStored: () => void;
  /** After the thread ended unexpectedly, before a new one listens: nothing of the old one's is in flight. */
  readonly beforeRestart?: () => void;
}

/**
 * The main thread's end of the webhook's thread (src/webhook/receiver-worker.ts), which receives and
 * stores deliveries without this thread; what stays here is its log lines, refusal counts and the
 * applier's cue, and the imports sent to its inbox (`inbox`). Should the thread end unexpectedly, it
 * is started again on the same address and port, its loopback twin with it (src/webhook/server.ts,
 * loopbackTwin): a new thread that finds either taken by another program does not listen, and is
 * tried again (retrying), never left listening on one of the two.
 */
export class ReceiverHost {
  private readonly thread: ThreadClient<ReceiverRequest, ReceiverEvent>;
  /** The inbox the thread holds, for the main thread's imports (a request starts the thread if needed). */
  readonly inbox: InboxClient;
  private listening: { url: string } | null = null;
  private ready = false;
  private closing = false;
  /** One restart at a time: a thread that ends while one is under way (or waiting to retry) needs no second. */
  private restarting = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private metricsPort: number | null = null;

  constructor(private readonly deps: ReceiverHostDeps) {
    this.thread = new ThreadClient<ReceiverRequest, ReceiverEvent>({
      dir: __dirname,
      entry: 'receiver-worker',
      name: 'receiver',
      workerData: { config: deps.config, dataDir: deps.dataDir, quarantine: deps.quarantine } satisfies ReceiverWorkerData,
      // Bodies are Buffers, outside the heap; the heap holds the routes, sockets and the check's items
      // (parsed one at a time; see the applier's limits, young generation included).
      resourceLimits: { maxOldGenerationSizeMb: 192, maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
      onEvent: (event) => {
        // Cues for several stored deliveries coalesce into one drain (ApplierHost).
        for (const notice of event.notices) this.onNotice(notice);
      },
      onUnexpectedExit: (reason) => {
        deps.log.error(`the webhook receiver thread stopped (${reason}); starting it again`);
        this.restart();
      },
    });
    this.inbox = new InboxClient((request, transfer) => this.thread.request({ type: 'inbox', request }, transfer));
  }

  private onNotice(event: ReceiverNotice): void {
    switch (event.type) {
      case 'log':
        this.deps.log[event.level](event.text);
        return;
      case 'refused':
        this.deps.refusals.count(event.id);
        return;
      case 'stored':
        this.deps.onStored();
        return;
    }
  }

  /** Has the thread (a new one if it had ended) listen, on `port` if given. */
  private async listen(port?: number): Promise<{ url: string }> {
    this.listening = await this.thread.request<{ url: string }>({ type: 'listen', ...(port ? { port } : {}) });
    return this.listening;
  }

  /** Runs `attempt` until it succeeds, backing off between tries (0.5 s doubling to 30 s); stops once closing. */
  private retrying(what: string, attempt: () => Promise<void>, tries = 1): void {
    if (this.closing) return;
    this.retryTimer = null;
    attempt().catch((err: unknown) => {
      if (this.closing) return;
      this.deps.log.error(`${what} (attempt ${tries}): ${describeError(err)}`);
      this.retryTimer = setTimeout(() => this.retrying(what, attempt, tries + 1), Math.min(30_000, 250 * 2 ** tries));
      this.retryTimer.unref();
    });
  }

  /** Starts the thread and listens; resolves with the receiver's URL. A failure to listen (a busy port) rejects with its code. */
  start(): Promise<{ url: string }> {
    return this.listen();
  }

  get url(): string | null {
    return this.listening?.url ?? null;
  }

  /** Calls are answered 503 "starting" until true. */
  async setReady(ready: boolean): Promise<void> {
    this.ready = ready;
    await this.thread.request({ type: 'ready', ready });
  }

  /** Forward GET /metrics to the status window's server on this loopback port (null: stop). Kept across a thread restart. */
  async setMetricsTarget(port: number | null): Promise<void> {
    this.metricsPort = port;
    await this.thread.request({ type: 'metrics-target', port });
  }

  /** Starts measuring the receiver thread's event-loop delay (null), or stops and returns it. */
  loopDelay(action: 'start' | 'stop'): Promise<LoopDelay | null> {
    return this.thread.request<LoopDelay | null>({ type: 'loop-delay', action });
  }

  private restart(): void {
    if (this.restarting) return;
    this.restarting = true;
    // The address it had: the same port even where 0 was configured (a tunnel points at it), and
    // so the same port for its loopback twin.
    const previousPort = this.listening ? Number(new URL(this.listening.url).port) : undefined;
    this.retrying('restarting the webhook receiver', async () => {
      this.deps.beforeRestart?.();
      const { url } = await this.listen(previousPort);
      if (this.metricsPort !== null) await this.thread.request({ type: 'metrics-target', port: this.metricsPort });
      if (this.ready) await this.thread.request({ type: 'ready', ready: true });
      this.restarting = false;
      this.deps.log.info(`webhook receiver listening again at ${url}`);
    });
  }

  /** This thread's V8 heap (the bench's per-thread figures). */
  heapStatistics(): Promise<ThreadHeap | null> {
    return this.thread.heapStatistics();
  }

  async close(): Promise<void> {
    this.closing = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    await this.thread.stop({ type: 'close' });
  }
}

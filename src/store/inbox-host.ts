import type { MessagePort, TransferListItem } from 'node:worker_threads';
import type { Logger } from '../log';
import { PortClient, ThreadClient, YOUNG_GENERATION_MB, type ThreadHeap } from '../threads/thread-client';
import type { FileDelivery, IncomingDelivery, InboxPort, QuarantineInput, ReceiptOutcome, RefusedDelivery } from './inbox';
import type { InboxRequest, InboxWorkerData } from './inbox-protocol';

/** Bodies at least this large are handed to the thread by moving their memory, not copying it. */
const TRANSFER_FROM_BYTES = 64 * 1024;

type InboxRequester = Pick<ThreadClient<InboxRequest>, 'request'>;

/**
 * The inbox's requests, whoever sends them (the main thread's InboxHost, the receiver thread's
 * InboxPortClient). The caller must not use a large body's buffer afterwards: its memory has moved
 * to the inbox thread.
 */
class InboxRequests implements InboxPort {
  constructor(protected readonly to: InboxRequester) {}

  private static bytes(raw: Buffer): { raw: Uint8Array; transfer: TransferListItem[] } {
    const whole = raw.byteOffset === 0 && raw.byteLength === raw.buffer.byteLength;
    if (whole && raw.byteLength >= TRANSFER_FROM_BYTES) return { raw, transfer: [raw.buffer as ArrayBuffer] };
    // Small bodies (often views into Node's shared pool) are copied: cheap, and the pool stays intact.
    return { raw: new Uint8Array(raw), transfer: [] };
  }

  receive(delivery: IncomingDelivery): Promise<ReceiptOutcome> {
    const { raw, transfer } = InboxRequests.bytes(delivery.raw);
    return this.to.request<ReceiptOutcome>({ type: 'receive', delivery: { ...delivery, raw } }, transfer);
  }

  receiveFile(delivery: FileDelivery): Promise<ReceiptOutcome> {
    return this.to.request<ReceiptOutcome>({ type: 'receive-file', delivery });
  }

  quarantine(input: QuarantineInput): Promise<{ quarantineId: number; deliveryId: number }> {
    const { raw, transfer } = InboxRequests.bytes(input.raw);
    return this.to.request({ type: 'quarantine', input: { ...input, raw } }, transfer);
  }

  recordRefused(input: RefusedDelivery): Promise<number> {
    return this.to.request<number>({ type: 'record-refused', input });
  }
}

/**
 * The inbox in `serve`, from the main thread: requests go to the inbox thread
 * (src/store/inbox-worker.ts), which answers once the delivery is committed. It also starts that
 * thread and pairs it with the receiver thread (attachPort).
 */
export class InboxHost extends InboxRequests {
  private readonly thread: ThreadClient<InboxRequest>;

  constructor(data: InboxWorkerData, log: Logger) {
    const thread = new ThreadClient<InboxRequest>({
      dir: __dirname,
      entry: 'inbox-worker',
      name: 'inbox',
      workerData: data,
      // The inbox parses each body once to check it (one item at a time); see the applier's limits,
      // young generation included.
      resourceLimits: { maxOldGenerationSizeMb: 192, maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
      onUnexpectedExit: (reason) => log.error(`inbox thread stopped (${reason}); it starts again with the next request`),
    });
    super(thread);
    this.thread = thread;
  }

  start(): Promise<void> {
    return this.thread.start();
  }

  /** Gives another thread (the receiver's) a line of its own to the inbox thread: see InboxPortClient. */
  async attachPort(port: MessagePort): Promise<void> {
    await this.thread.request({ type: 'attach-port', port }, [port]);
  }

  /** Fault injection for the test suites (disk full): see InboxRequest. */
  setMaxPageCount(pages: number): Promise<number> {
    return this.thread.request<number>({ type: 'max-page-count', pages });
  }

  /** This thread's V8 heap (the bench's per-thread figures). */
  heapStatistics(): Promise<ThreadHeap | null> {
    return this.thread.heapStatistics();
  }

  close(): Promise<void> {
    return this.thread.stop({ type: 'close' });
  }
}

/**
 * The receiver thread's inbox: the same requests, over a MessagePort straight to the inbox thread
 * (InboxHost.attachPort made the pair), so storing a delivery involves no main thread.
 */
export class InboxPortClient extends InboxRequests {
  private readonly client: PortClient<InboxRequest>;

  constructor(port: MessagePort) {
    const client = new PortClient<InboxRequest>(port, 'inbox');
    super(client);
    this.client = client;
  }

  close(): void {
    this.client.close();
  }
}

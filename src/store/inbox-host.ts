import type { TransferListItem } from 'node:worker_threads';
import type { Logger } from '../log';
import { ThreadClient } from '../threads/thread-client';
import type { IncomingDelivery, InboxPort, QuarantineInput, ReceiptOutcome, RefusedDelivery } from './inbox';
import type { InboxRequest, InboxWorkerData } from './inbox-protocol';

/** Bodies at least this large are handed to the thread by moving their memory, not copying it. */
const TRANSFER_FROM_BYTES = 64 * 1024;

/**
 * The receiver's inbox in `serve`: requests go to the inbox thread (src/store/inbox-worker.ts), which
 * answers once the delivery is committed. The caller must not use a large body's buffer afterwards:
 * its memory has moved to the thread.
 */
export class InboxHost implements InboxPort {
  private readonly thread: ThreadClient<InboxRequest>;

  constructor(data: InboxWorkerData, log: Logger) {
    this.thread = new ThreadClient<InboxRequest>({
      dir: __dirname,
      entry: 'inbox-worker',
      name: 'inbox',
      workerData: data,
      // The inbox parses each body once to check it (one item at a time); see the applier's limits,
      // young generation included.
      resourceLimits: { maxOldGenerationSizeMb: 192, maxYoungGenerationSizeMb: 8 },
      onUnexpectedExit: (reason) => log.error(`inbox thread stopped (${reason}); it starts again with the next delivery`),
    });
  }

  start(): Promise<void> {
    return this.thread.start();
  }

  private static bytes(raw: Buffer): { raw: Uint8Array; transfer: TransferListItem[] } {
    const whole = raw.byteOffset === 0 && raw.byteLength === raw.buffer.byteLength;
    if (whole && raw.byteLength >= TRANSFER_FROM_BYTES) return { raw, transfer: [raw.buffer as ArrayBuffer] };
    // Small bodies (often views into Node's shared pool) are copied: cheap, and the pool stays intact.
    return { raw: new Uint8Array(raw), transfer: [] };
  }

  receive(delivery: IncomingDelivery): Promise<ReceiptOutcome> {
    const { raw, transfer } = InboxHost.bytes(delivery.raw);
    return this.thread.request<ReceiptOutcome>({ type: 'receive', delivery: { ...delivery, raw } }, transfer);
  }

  quarantine(input: QuarantineInput): Promise<{ quarantineId: number; deliveryId: number }> {
    const { raw, transfer } = InboxHost.bytes(input.raw);
    return this.thread.request({ type: 'quarantine', input: { ...input, raw } }, transfer);
  }

  recordRefused(input: RefusedDelivery): Promise<number> {
    return this.thread.request<number>({ type: 'record-refused', input });
  }

  /** Fault injection for the test suites (disk full): see InboxRequest. */
  setMaxPageCount(pages: number): Promise<number> {
    return this.thread.request<number>({ type: 'max-page-count', pages });
  }

  close(): Promise<void> {
    return this.thread.stop({ type: 'close' });
  }
}

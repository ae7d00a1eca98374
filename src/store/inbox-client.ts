import type { TransferListItem } from 'node:worker_threads';
import type { FileDelivery, IncomingDelivery, InboxPort, QuarantineInput, ReceiptOutcome, RefusedDelivery } from './inbox';
import type { InboxRequest } from './inbox-protocol';

/** Bodies at least this large are handed to the thread by moving their memory, not copying it. */
const TRANSFER_FROM_BYTES = 64 * 1024;

/** Sends one request to the thread that holds the inbox and resolves with its reply. */
export type InboxSend = <T>(request: InboxRequest, transfer: readonly TransferListItem[]) => Promise<T>;

/**
 * The inbox from the main thread in `serve` (imports): its requests go to the webhook's thread
 * (src/webhook/receiver-worker.ts), which holds the inbox and answers once a delivery is committed.
 * The caller must not use a large body's buffer afterwards: its memory has moved to that thread.
 */
export class InboxClient implements InboxPort {
  constructor(private readonly send: InboxSend) {}

  private static bytes(raw: Buffer): { raw: Uint8Array; transfer: TransferListItem[] } {
    const whole = raw.byteOffset === 0 && raw.byteLength === raw.buffer.byteLength;
    if (whole && raw.byteLength >= TRANSFER_FROM_BYTES) return { raw, transfer: [raw.buffer as ArrayBuffer] };
    // Small bodies (often views into Node's shared pool) are copied: cheap, and the pool stays intact.
    return { raw: new Uint8Array(raw), transfer: [] };
  }

  receive(delivery: IncomingDelivery): Promise<ReceiptOutcome> {
    const { raw, transfer } = InboxClient.bytes(delivery.raw);
    return this.send<ReceiptOutcome>({ type: 'receive', delivery: { ...delivery, raw } }, transfer);
  }

  receiveFile(delivery: FileDelivery): Promise<ReceiptOutcome> {
    return this.send<ReceiptOutcome>({ type: 'receive-file', delivery }, []);
  }

  quarantine(input: QuarantineInput): Promise<{ quarantineId: number; deliveryId: number }> {
    const { raw, transfer } = InboxClient.bytes(input.raw);
    return this.send({ type: 'quarantine', input: { ...input, raw } }, transfer);
  }

  recordRefused(input: RefusedDelivery): Promise<number> {
    return this.send<number>({ type: 'record-refused', input }, []);
  }

  /** Fault injection for the test suites (disk full): see InboxRequest. */
  setMaxPageCount(pages: number): Promise<number> {
    return this.send<number>({ type: 'max-page-count', pages }, []);
  }
}

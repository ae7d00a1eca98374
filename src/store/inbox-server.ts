import { releaseBody } from './bodies';
import type { Db } from './database';
import { RECEIPT_SLICE_MS, type FileDelivery, type IncomingDelivery, type Inbox, type InboxPort, type QuarantineInput, type ReceiptOutcome, type RefusedDelivery } from './inbox';
import type { InboxRequest } from './inbox-protocol';

/** How long a stop waits for large bodies' checks under way before closing agent.db under them. */
const CLOSE_WAIT_MS = 10_000;

const asBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** Hands a body to `use`, then frees it: stored (or refused), the bytes are done with here; the applier reads its own copy. */
function withBody<T>(bytes: Uint8Array, use: (raw: Buffer) => T): T {
  const raw = asBuffer(bytes);
  try {
    return use(raw);
  } finally {
    releaseBody(raw);
  }
}

/**
 * The inbox where it runs in `serve` (the webhook's thread, src/webhook/receiver-worker.ts): the
 * webhook server calls it directly, and the main thread's requests (InboxClient) arrive through
 * `handle`. A large body is freed as soon as it is stored; a file-backed body's check runs in slices
 * (Inbox.receiveFile), so the thread answers other calls during it.
 */
export class InboxServer implements InboxPort {
  /** Receipts whose check is under way (it yields between slices): a close waits for them. */
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly inbox: Inbox,
    private readonly db: Db,
    /** How long a large body's check runs before other calls are answered (tests shorten it). */
    private readonly sliceMs: number = RECEIPT_SLICE_MS,
  ) {}

  async receive(delivery: IncomingDelivery): Promise<ReceiptOutcome> {
    return withBody(delivery.raw, (raw) => this.inbox.receive({ ...delivery, raw }));
  }

  receiveFile(delivery: FileDelivery): Promise<ReceiptOutcome> {
    const receipt = this.inbox.receiveFile(delivery, this.sliceMs);
    this.inFlight.add(receipt);
    const done = (): void => void this.inFlight.delete(receipt);
    receipt.then(done, done);
    return receipt;
  }

  async quarantine(input: QuarantineInput): Promise<{ quarantineId: number; deliveryId: number }> {
    return withBody(input.raw, (raw) => this.inbox.quarantine({ ...input, raw }));
  }

  async recordRefused(input: RefusedDelivery): Promise<number> {
    return this.inbox.recordRefused(input);
  }

  handle(request: InboxRequest): Promise<unknown> {
    switch (request.type) {
      case 'receive':
        return this.receive({ ...request.delivery, raw: asBuffer(request.delivery.raw) });
      case 'receive-file':
        return this.receiveFile(request.delivery);
      case 'quarantine':
        return this.quarantine({ ...request.input, raw: asBuffer(request.input.raw) });
      case 'record-refused':
        return this.recordRefused(request.input);
      case 'max-page-count':
        return Promise.resolve(this.db.pragma(`max_page_count = ${Math.max(1, Math.floor(request.pages))}`, { simple: true }));
    }
  }

  /**
   * At a stop: the checks under way finish and commit first (at most CLOSE_WAIT_MS; their senders may
   * not hear the 200 and send again, which finds a duplicate), so none meets a closed connection;
   * then `PRAGMA optimize` (best effort) and the connection closes.
   */
  async close(): Promise<void> {
    if (this.inFlight.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_WAIT_MS)));
      await Promise.race([Promise.allSettled([...this.inFlight]), waited]);
      clearTimeout(timer);
    }
    try {
      this.db.pragma('optimize');
    } catch {
      // Best effort: a failing disk must not stop a shutdown.
    }
    this.db.close();
  }
}

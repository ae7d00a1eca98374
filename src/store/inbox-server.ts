import { releaseBody } from './bodies';
import type { Db } from './database';
import type { FileDelivery, IncomingDelivery, Inbox, InboxPort, QuarantineInput, ReceiptOutcome, RefusedDelivery } from './inbox';
import type { InboxRequest } from './inbox-protocol';

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
  constructor(
    private readonly inbox: Inbox,
    private readonly db: Db,
  ) {}

  async receive(delivery: IncomingDelivery): Promise<ReceiptOutcome> {
    return withBody(delivery.raw, (raw) => this.inbox.receive({ ...delivery, raw }));
  }

  receiveFile(delivery: FileDelivery): Promise<ReceiptOutcome> {
    return this.inbox.receiveFile(delivery);
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

  /** At a stop: `PRAGMA optimize` (best effort), then the connection closes. */
  close(): void {
    try {
      this.db.pragma('optimize');
    } catch {
      // Best effort: a failing disk must not stop a shutdown.
    }
    this.db.close();
  }
}

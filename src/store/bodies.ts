import type { Db } from './database';

/**
 * The bytes of each inbox row, kept in chunks of at most 1 MiB (inbox_bodies). better-sqlite3 copies a
 * bound blob (SQLITE_TRANSIENT) and SQLite builds a record around it; in chunks those copies are 1 MiB
 * at a time instead of the whole 43 MB of a large publication, and reading one back fills a single
 * buffer of the final size.
 */
export const BODY_CHUNK_BYTES = 1 << 20;

/** Bodies smaller than this are left to the collector (they may share a pooled ArrayBuffer anyway). */
const RELEASE_FROM_BYTES = 64 * 1024;

/**
 * Frees a large body's memory now instead of at its thread's next full collection. The inbox thread is
 * idle after storing a delivery, so a 43 MB body moved to it stayed allocated through the whole apply
 * that followed, beside the applier's own copy. Only for a Buffer that owns its whole ArrayBuffer
 * (a body read here, or moved from the receiver); every view of it is empty afterwards, so call it
 * once nothing will read the body again.
 */
export function releaseBody(body: Uint8Array): void {
  const buffer = body.buffer;
  if (!(buffer instanceof ArrayBuffer) || body.byteOffset !== 0 || body.byteLength !== buffer.byteLength || buffer.byteLength < RELEASE_FROM_BYTES) return;
  // ArrayBuffer.prototype.transfer (ES2024, Node 22+): detaching releases the backing store at once.
  (buffer as ArrayBuffer & { transfer(length: number): ArrayBuffer }).transfer(0);
}

export class BodyStore {
  private readonly insert;
  private readonly chunks;

  constructor(db: Db) {
    this.insert = db.prepare('INSERT INTO inbox_bodies (inbox_id, chunk, body) VALUES (?, ?, ?)');
    this.chunks = db.prepare<[number], { body: Buffer }>('SELECT body FROM inbox_bodies WHERE inbox_id = ? ORDER BY chunk');
  }

  /** Inside the caller's transaction. */
  write(inboxId: number, raw: Buffer): void {
    if (raw.length === 0) {
      this.insert.run(inboxId, 0, raw);
      return;
    }
    for (let chunk = 0, offset = 0; offset < raw.length; chunk++, offset += BODY_CHUNK_BYTES) {
      this.insert.run(inboxId, chunk, raw.subarray(offset, Math.min(raw.length, offset + BODY_CHUNK_BYTES)));
    }
  }

  /** The stored bytes, or null once retention pruned them. `expectedBytes` (inbox.body_bytes) sizes the buffer. */
  read(inboxId: number, expectedBytes?: number): Buffer | null {
    const parts: Buffer[] = [];
    let total = 0;
    let out: Buffer | null = expectedBytes !== undefined && expectedBytes > BODY_CHUNK_BYTES ? Buffer.allocUnsafe(expectedBytes) : null;
    for (const { body } of this.chunks.iterate(inboxId)) {
      if (out && total + body.length <= out.length) body.copy(out, total);
      else {
        if (out) parts.push(out.subarray(0, total));
        out = null;
        parts.push(body);
      }
      total += body.length;
    }
    if (total === 0 && parts.length === 0 && !out) return this.exists(inboxId) ? Buffer.alloc(0) : null;
    if (out) return total === out.length ? out : out.subarray(0, total);
    return parts.length === 1 ? parts[0]! : Buffer.concat(parts, total);
  }

  private exists(inboxId: number): boolean {
    return this.chunks.get(inboxId) !== undefined;
  }
}

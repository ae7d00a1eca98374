import fs from 'node:fs';
import path from 'node:path';
import type { BodyLayout } from '../domain/body';
import { bodyFilePath, readBodyFileRangeInto } from './body-files';
import type { Db } from './database';

/**
 * The bytes of each inbox row, kept in chunks of at most 1 MiB (inbox_bodies). better-sqlite3 copies a
 * bound blob (SQLITE_TRANSIENT) and SQLite builds a record around it; in chunks those copies are 1 MiB
 * at a time instead of the whole of a large publication, and reading one back fills a single
 * buffer of the final size.
 */
export const BODY_CHUNK_BYTES = 1 << 20;

/** Bodies smaller than this are left to the collector (they may share a pooled ArrayBuffer anyway). */
const RELEASE_FROM_BYTES = 64 * 1024;

/**
 * Frees a large body's memory now instead of at its thread's next full collection. The webhook's
 * thread is often idle after storing a delivery, so a large body stayed allocated through the whole
 * apply that followed, beside the applier's own copy. Only for a Buffer that owns its whole ArrayBuffer
 * (a body read here, or received whole); every view of it is empty afterwards, so call it
 * once nothing will read the body again.
 */
export function releaseBody(body: Uint8Array): void {
  releaseBuffer(body, RELEASE_FROM_BYTES);
}

/**
 * Frees the memory of bytes that own their whole ArrayBuffer (and are at least `minBytes` long) at
 * once; anything else (a view into a pool or a larger buffer) is left alone. Returns whether it freed.
 * Every view of the buffer is empty afterwards.
 */
export function releaseBuffer(bytes: Uint8Array, minBytes = 0): boolean {
  const buffer = bytes.buffer;
  if (!(buffer instanceof ArrayBuffer) || bytes.byteOffset !== 0 || bytes.byteLength !== buffer.byteLength || buffer.byteLength < minBytes) return false;
  // ArrayBuffer.prototype.transfer (ES2024, Node 22+): detaching releases the backing store at once.
  (buffer as ArrayBuffer & { transfer(length: number): ArrayBuffer }).transfer(0);
  return true;
}

/**
 * A stored body's bytes, in one of two forms: in agent.db (inbox_bodies, in chunks), or for a large
 * body received as a file of its own (inbox_body_files names it; src/store/body-files.ts). Every
 * reader goes through here, so both forms read the same.
 */
export class BodyStore {
  private readonly insert;
  private readonly insertFile;
  private readonly selectFile;
  /** Body files live beside agent.db. */
  private readonly dataDir: string;
  private readonly chunks;

  private readonly chunkSizes;
  private readonly oneChunk;
  private readonly anyChunk;
  private readonly insertLayout;
  private readonly selectLayout;

  constructor(db: Db) {
    this.dataDir = path.dirname(db.name);
    this.insertFile = db.prepare('INSERT INTO inbox_body_files (inbox_id, file) VALUES (?, ?)');
    this.selectFile = db.prepare<[number], { file: string }>('SELECT file FROM inbox_body_files WHERE inbox_id = ?');
    this.insert = db.prepare('INSERT INTO inbox_bodies (inbox_id, chunk, body) VALUES (?, ?, ?)');
    this.chunks = db.prepare<[number], { body: Buffer }>('SELECT body FROM inbox_bodies WHERE inbox_id = ? ORDER BY chunk');
    // length() of a blob is read from its record header: the chunk's bytes are not loaded.
    this.chunkSizes = db.prepare<[number], { chunk: number; bytes: number }>('SELECT chunk, length(body) AS bytes FROM inbox_bodies WHERE inbox_id = ? ORDER BY chunk');
    this.oneChunk = db.prepare<[number, number], { body: Buffer }>('SELECT body FROM inbox_bodies WHERE inbox_id = ? AND chunk = ?');
    this.anyChunk = db.prepare<[number], { one: number }>('SELECT 1 AS one FROM inbox_bodies WHERE inbox_id = ? LIMIT 1');
    this.insertLayout = db.prepare('INSERT INTO inbox_body_layout (inbox_id, members, items) VALUES (?, ?, ?)');
    this.selectLayout = db.prepare<[number], { members: string; items: Buffer | null }>('SELECT members, items FROM inbox_body_layout WHERE inbox_id = ?');
  }

  /** Where the stored body's parts are (inside the caller's transaction, with `write`). */
  writeLayout(inboxId: number, layout: BodyLayout): void {
    let items: Buffer | null = null;
    if (layout.items) {
      items = Buffer.allocUnsafe(layout.items.length * 16);
      layout.items.forEach((span, i) => {
        items!.writeDoubleLE(span.start, i * 16);
        items!.writeDoubleLE(span.end, i * 16 + 8);
      });
    }
    this.insertLayout.run(inboxId, JSON.stringify(layout.members), items);
  }

  /** The stored body's layout, or null when it has none (stored before agent.db migration 2). */
  layout(inboxId: number): BodyLayout | null {
    const row = this.selectLayout.get(inboxId);
    if (!row) return null;
    const members = JSON.parse(row.members) as [string, number, number][];
    let items: { start: number; end: number }[] | null = null;
    if (row.items) {
      items = [];
      for (let offset = 0; offset + 16 <= row.items.length; offset += 16) items.push({ start: row.items.readDoubleLE(offset), end: row.items.readDoubleLE(offset + 8) });
    }
    return { members, items };
  }

  /**
   * Reads parts of a stored body by byte offset, one chunk at a time; the last chunk read is kept, so
   * parts read in order read each chunk once. The applier reads a body's envelope and items through it
   * as it plans them (with the body's layout, or after scanning a body stored without one), so the
   * whole body is not held through the writes (src/sync/applier.ts). Chunks are located by their
   * stored sizes: a body moved from a 0.1 data folder is one chunk of any size. Null when none of the
   * body is stored.
   */
  ranges(inboxId: number): ((start: number, end: number) => Buffer) | null {
    const file = this.fileOf(inboxId);
    if (file !== null) return this.fileRanges(inboxId, file);
    const chunks = this.chunkSizes.all(inboxId);
    // Nothing stored (retention pruned it): an empty body still has its one empty chunk.
    if (chunks.length === 0) return null;
    const starts: number[] = [];
    let total = 0;
    for (const c of chunks) {
      starts.push(total);
      total += c.bytes;
    }
    let cached: { index: number; bytes: Buffer } | null = null;
    const chunkAt = (index: number): Buffer => {
      if (cached?.index === index) return cached.bytes;
      const row = this.oneChunk.get(inboxId, chunks[index]!.chunk);
      if (!row) throw new RangeError(`chunk ${chunks[index]!.chunk} of body #${inboxId} is no longer stored`);
      cached = { index, bytes: row.body };
      return row.body;
    };
    return (start, end) => {
      if (!(start >= 0 && start <= end && end <= total)) throw new RangeError(`bytes ${start}..${end} are outside body #${inboxId} (${total} bytes)`);
      // The last chunk starting at or before `start`.
      let lo = 0;
      let hi = starts.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (starts[mid]! <= start) lo = mid;
        else hi = mid - 1;
      }
      const parts: Buffer[] = [];
      for (let index = lo, pos = start; pos < end; index++) {
        const chunk = chunkAt(index);
        const to = Math.min(chunk.length, end - starts[index]!);
        parts.push(chunk.subarray(pos - starts[index]!, to));
        pos = starts[index]! + to;
      }
      return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    };
  }

  /** The path of the file holding this body, or null when it is in agent.db (or not stored). */
  fileOf(inboxId: number): string | null {
    const row = this.selectFile.get(inboxId);
    return row ? bodyFilePath(this.dataDir, row.file) : null;
  }

  /**
   * A body file's bytes by offset, read BODY_CHUNK_BYTES at a time into one reused buffer (the last
   * block read is kept): a range within one block is a view of it, good until the next call (its
   * callers turn it into text at once), so an apply leaves no trail of garbage blocks behind it.
   */
  private fileRanges(inboxId: number, file: string): ((start: number, end: number) => Buffer) | null {
    let total: number;
    try {
      total = fs.statSync(file).size;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    const block = Buffer.allocUnsafe(Math.min(BODY_CHUNK_BYTES, total));
    let held: { index: number; bytes: Buffer } | null = null;
    const blockAt = (index: number): Buffer => {
      if (held?.index === index) return held.bytes;
      const start = index * BODY_CHUNK_BYTES;
      const bytes = block.subarray(0, Math.min(BODY_CHUNK_BYTES, total - start));
      readBodyFileRangeInto(file, start, bytes);
      held = { index, bytes };
      return bytes;
    };
    return (start, end) => {
      if (!(start >= 0 && start <= end && end <= total)) throw new RangeError(`bytes ${start}..${end} are outside body #${inboxId} (${total} bytes)`);
      const first = Math.floor(start / BODY_CHUNK_BYTES);
      if (end <= (first + 1) * BODY_CHUNK_BYTES) return blockAt(first).subarray(start - first * BODY_CHUNK_BYTES, end - first * BODY_CHUNK_BYTES);
      // Across blocks: copied out, as the next block overwrites the buffer.
      const out = Buffer.allocUnsafe(end - start);
      for (let pos = start; pos < end; ) {
        const index = Math.floor(pos / BODY_CHUNK_BYTES);
        const to = Math.min(end, (index + 1) * BODY_CHUNK_BYTES);
        blockAt(index).copy(out, pos - start, pos - index * BODY_CHUNK_BYTES, to - index * BODY_CHUNK_BYTES);
        pos = to;
      }
      return out;
    };
  }

  /** Inside the caller's transaction: the body is the named file (already flushed to the disk). */
  writeFile(inboxId: number, name: string): void {
    this.insertFile.run(inboxId, name);
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
    const file = this.fileOf(inboxId);
    if (file !== null) {
      try {
        return fs.readFileSync(file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw err;
      }
    }
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
    return this.anyChunk.get(inboxId) !== undefined;
  }
}

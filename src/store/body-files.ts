import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { crashPoint } from '../crash-points';
import type { ByteSource } from '../domain/json-scan-stream';
import { StorageFailure } from '../errors';
import type { Db } from './database';
import { syncFolder } from './fsync';

/**
 * Large bodies in files of their own (issue 29). A body over webhook.fileBodyFromBytes is written to
 * <dataDir>/bodies/<random>.body as it arrives, so the receiver never holds it whole; the file and its
 * folder are flushed to the disk before the inbox row that names it (inbox_body_files) is committed,
 * and the 200 goes out only after that commit. A crash leaves at worst a file no row names (the sender
 * had no 200 and sends again): `sweepBodyFiles` removes those at the next start.
 */

export const BODY_FILES_FOLDER = 'bodies';
const NAME = /^[0-9a-f]{32}\.body$/;

export function bodyFilesDir(dataDir: string): string {
  return path.join(dataDir, BODY_FILES_FOLDER);
}

/** The path of a stored body file; refuses any name the agent did not make (it comes from agent.db). */
export function bodyFilePath(dataDir: string, name: string): string {
  if (!NAME.test(name)) throw new Error(`not a body file name: ${JSON.stringify(name)}`);
  return path.join(bodyFilesDir(dataDir), name);
}

/** A body file as handed from the receiver to the inbox: flushed to the disk, not yet named by a row. */
export interface BodyFile {
  readonly name: string;
  readonly bytes: number;
  readonly sha256: string;
}

/** Writes one body to a new file of its own, chunk by chunk, hashing as it goes. */
export class BodyFileSink {
  private readonly hash = createHash('sha256');
  private written = 0;
  private closed = false;

  private constructor(
    private readonly dataDir: string,
    readonly name: string,
    private readonly handle: fs.promises.FileHandle,
  ) {}

  /** Any failure of the file (open, write, flush) is the agent's: a StorageFailure (503). */
  private static async stored<T>(step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (err) {
      throw err instanceof StorageFailure ? err : new StorageFailure(err);
    }
  }

  static create(dataDir: string): Promise<BodyFileSink> {
    return BodyFileSink.stored(() => BodyFileSink.open(dataDir));
  }

  private static async open(dataDir: string): Promise<BodyFileSink> {
    const dir = bodyFilesDir(dataDir);
    await fs.promises.mkdir(dir, { recursive: true, mode: 0o700 });
    const name = `${randomBytes(16).toString('hex')}.body`;
    // Exclusive and owner-only: never through a planted file or link.
    const handle = await fs.promises.open(path.join(dir, name), fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | (fs.constants.O_NOFOLLOW ?? 0), 0o600);
    crashPoint('body-file-created');
    return new BodyFileSink(dataDir, name, handle);
  }

  get bytes(): number {
    return this.written;
  }

  write(chunk: Buffer): Promise<void> {
    return BodyFileSink.stored(() => this.writeAll(chunk));
  }

  private async writeAll(chunk: Buffer): Promise<void> {
    this.hash.update(chunk);
    let offset = 0;
    while (offset < chunk.length) {
      const { bytesWritten } = await this.handle.write(chunk, offset, chunk.length - offset, this.written + offset);
      offset += bytesWritten;
    }
    this.written += chunk.length;
  }

  /** Flushes the file and its folder to the disk and closes it. */
  finish(): Promise<BodyFile> {
    return BodyFileSink.stored(() => this.flush());
  }

  private async flush(): Promise<BodyFile> {
    crashPoint('body-file-written');
    await this.handle.sync();
    await this.handle.close();
    this.closed = true;
    syncFolder(bodyFilesDir(this.dataDir));
    crashPoint('body-file-synced');
    return { name: this.name, bytes: this.written, sha256: this.hash.digest('hex') };
  }

  /** Closes and removes the file (the body was refused or not received to its end). */
  async abort(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      await this.handle.close().catch(() => undefined);
    }
    await fs.promises.rm(path.join(bodyFilesDir(this.dataDir), this.name), { force: true });
  }
}

/**
 * A body already in memory (an import) written to a file of its own as the receiver writes one:
 * flushed with its folder, or removed when writing fails.
 */
export async function writeBodyFile(dataDir: string, raw: Buffer): Promise<BodyFile> {
  const sink = await BodyFileSink.create(dataDir);
  try {
    for (let at = 0; at < raw.length; at += WRITE_PIECE_BYTES) await sink.write(raw.subarray(at, at + WRITE_PIECE_BYTES));
    return await sink.finish();
  } catch (err) {
    // The write's failure is what the caller hears (a StorageFailure: 503), not a failed removal;
    // a file that could not be removed goes at the next start's sweep.
    await sink.abort().catch(() => undefined);
    throw err;
  }
}

/** How much writeBodyFile hands the file at a time. */
const WRITE_PIECE_BYTES = 1 << 20;

/**
 * Removes a body file that no row names any more (after the row's transaction committed). Returns
 * false when it could not be removed: on Windows another program (a virus scanner, an editor) that
 * holds it open without sharing deletion makes Windows refuse. Nothing names it any more, so it is
 * left for the next start's sweep; a removal that fails must not fail what was already committed.
 */
export function removeBodyFile(dataDir: string, name: string): boolean {
  try {
    fs.rmSync(bodyFilePath(dataDir, name), { force: true });
    return true;
  } catch {
    return false;
  }
}

/** What the start-up sweep did: files removed, and files it could not remove (held open elsewhere). */
export interface BodySweep {
  readonly removed: number;
  readonly held: readonly string[];
}

/**
 * At start-up, before the receiver listens: removes every file in <dataDir>/bodies/ that no inbox row
 * names (a crash between writing a body and committing its row, whose sender was never answered 200;
 * or one a prune could not remove). A file it cannot remove is reported, never a reason not to start.
 */
export function sweepBodyFiles(db: Db, dataDir: string): BodySweep {
  const dir = bodyFilesDir(dataDir);
  let entries: string[];
  try {
    entries = fs.readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { removed: 0, held: [] };
    throw err;
  }
  const named = new Set(db.prepare<[], { file: string }>('SELECT file FROM inbox_body_files').all().map((r) => r.file));
  let removed = 0;
  const held: string[] = [];
  for (const entry of entries) {
    if (named.has(entry)) continue;
    try {
      fs.rmSync(path.join(dir, entry), { force: true, recursive: false });
      removed += 1;
    } catch {
      held.push(path.join(dir, entry));
    }
  }
  if (removed > 0) syncFolder(dir);
  return { removed, held };
}

/** Fills `out` with the bytes of a body file from `position` on. */
export function readBodyFileRangeInto(file: string, position: number, out: Buffer): void {
  const length = out.length;
  const fd = fs.openSync(file, 'r');
  try {
    let done = 0;
    while (done < length) {
      const n = fs.readSync(fd, out, done, length - done, position + done);
      if (n === 0) throw new RangeError(`${file} ends at ${position + done} bytes, before ${position + length}`);
      done += n;
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** How much a BodyFileSource reads at a time for small ranges. */
const SOURCE_BLOCK_BYTES = 1 << 20;

/**
 * A body file read by offset, for checking it piece by piece (readBodyFrom): one open file, read into
 * one buffer reused from read to read (what `read` returns is good until the next read, as ByteSource
 * allows), a block at a time for small ranges, so the many small ranges of a body's items read the
 * file a block at a time and a large body leaves no trail of garbage buffers. Close it when done.
 */
export class BodyFileSource implements ByteSource {
  private buffer: Buffer = Buffer.alloc(0);
  /** Which bytes of the file `buffer` holds: [start, start + held). */
  private start = 0;
  private held = 0;

  private constructor(
    private readonly fd: number,
    readonly length: number,
    private readonly file: string,
  ) {}

  static open(file: string): BodyFileSource {
    const fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0));
    try {
      return new BodyFileSource(fd, fs.fstatSync(fd).size, file);
    } catch (err) {
      fs.closeSync(fd);
      throw err;
    }
  }

  read(start: number, end: number): Buffer {
    if (!(start >= 0 && start <= end && end <= this.length)) throw new RangeError(`bytes ${start}..${end} are outside ${this.file} (${this.length} bytes)`);
    if (start < this.start || end > this.start + this.held) {
      const size = Math.max(end - start, Math.min(SOURCE_BLOCK_BYTES, this.length - start));
      if (this.buffer.length < size) this.buffer = Buffer.allocUnsafe(size);
      this.readInto(this.buffer, start, size);
      this.start = start;
      this.held = size;
    }
    return this.buffer.subarray(start - this.start, end - this.start);
  }

  private readInto(out: Buffer, start: number, length: number): void {
    for (let done = 0; done < length; ) {
      const n = fs.readSync(this.fd, out, done, length - done, start + done);
      if (n === 0) throw new RangeError(`${this.file} ends at ${start + done} bytes, before ${start + length}`);
      done += n;
    }
  }

  /** The whole file in a buffer of its own (a refused body kept in quarantine, a rare conflict check). */
  whole(): Buffer {
    const out = Buffer.allocUnsafe(this.length);
    this.readInto(out, 0, this.length);
    return out;
  }

  close(): void {
    this.buffer = Buffer.alloc(0);
    this.held = 0;
    fs.closeSync(this.fd);
  }
}

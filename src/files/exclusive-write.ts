import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Writing a file where another account may write too (a diagnostics zip into a shared folder, a
 * backup set into another disk's folder, the dev publisher's files). Another account could have
 * planted a symlink there, at the target's name or at the name of the half-written file, pointing at
 * a file the agent's account may write (its own databases, or a root-owned file when it runs as
 * root). So a file is only ever created new: opened with O_CREAT|O_EXCL (which never follows a
 * link, even a dangling one) and O_NOFOLLOW, under a name with a random part nobody can guess ahead,
 * written, synced, and then renamed onto the target. rename() replaces a link at the target with the
 * file; it never writes through it.
 */

const EXCLUSIVE = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | (fs.constants.O_NOFOLLOW ?? 0);

/** The name of the file being written for `target`: beside it, unguessable, ending `.partial`. */
export function partialNameFor(target: string): string {
  return `${target}.${crypto.randomBytes(6).toString('hex')}.partial`;
}

/** Opens a new file (never an existing one, never through a link), owner-only by default. */
export function openExclusive(file: string, mode = 0o600): number {
  return fs.openSync(file, EXCLUSIVE, mode);
}

/**
 * Creates a folder that did not exist (never an existing one or a link): the parent folders are
 * created as needed, the last one must be new.
 */
export function makeNewDir(dir: string, mode = 0o700): void {
  fs.mkdirSync(path.dirname(dir), { recursive: true, mode });
  fs.mkdirSync(dir, { mode });
}

function fsyncDir(dir: string): void {
  let fd: number | null = null;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch {
    // Windows cannot open a folder for fsync; the rename is still atomic there.
  } finally {
    if (fd !== null) fs.closeSync(fd);
  }
}

/** Writes `data` to `target` as described above. */
export function writeFileExclusive(target: string, data: string | Uint8Array, mode = 0o600): void {
  fs.mkdirSync(path.dirname(path.resolve(target)), { recursive: true });
  const partial = partialNameFor(target);
  const fd = openExclusive(partial, mode);
  try {
    try {
      fs.writeFileSync(fd, data);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(partial, target);
  } catch (err) {
    fs.rmSync(partial, { force: true });
    throw err;
  }
  fsyncDir(path.dirname(path.resolve(target)));
}

/**
 * A stream into a new file for `target`; `commit()` after the stream closed renames it into place,
 * `abandon()` removes it.
 */
export function createExclusiveStream(target: string, mode = 0o600): { stream: fs.WriteStream; partial: string; commit(): void; abandon(): void } {
  fs.mkdirSync(path.dirname(path.resolve(target)), { recursive: true });
  const partial = partialNameFor(target);
  const fd = openExclusive(partial, mode);
  const stream = fs.createWriteStream('', { fd, autoClose: true, flush: true });
  return {
    stream,
    partial,
    commit() {
      fs.renameSync(partial, target);
      fsyncDir(path.dirname(path.resolve(target)));
    },
    abandon() {
      fs.rmSync(partial, { force: true });
    },
  };
}

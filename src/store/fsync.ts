import fs from 'node:fs';

/**
 * Getting a file's contents, and a folder's entries, onto the disk before going on (a backup set
 * before its rename, the restore's staged files, the 0.1 split's new files, body files).
 *
 * POSIX: fsync(2) the file; after creating, renaming or removing something in a folder, fsync the
 * folder too, or the change may not survive a power cut.
 *
 * Windows: fsync is FlushFileBuffers, which needs a handle opened for writing: on a read-only handle
 * it fails with ERROR_ACCESS_DENIED (Node's EPERM), so a file is opened read-write there (never
 * truncated or written). A folder has no handle FlushFileBuffers accepts, and needs none: NTFS writes
 * its metadata changes (a new name, a rename) through its own log, in order, so after a power cut a
 * rename is either done or not, and never before the changes logged ahead of it. What callers need
 * from it, a rename that lands only after the renamed file's contents are on disk, comes from
 * flushing the file first.
 */

/** The mode to open a file in for flushing it: read-only suffices for fsync(2); FlushFileBuffers needs write access. */
export function flushOpenMode(platform: NodeJS.Platform = process.platform): 'r' | 'r+' {
  return platform === 'win32' ? 'r+' : 'r';
}

/** Flushes a file's bytes (and its size) to the disk. */
export function syncFile(file: string, platform: NodeJS.Platform = process.platform): void {
  const fd = fs.openSync(file, flushOpenMode(platform));
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Flushes a folder's entries (a file created, renamed or removed in it) to the disk; nothing to do on Windows (see above). */
export function syncFolder(dir: string, platform: NodeJS.Platform = process.platform): void {
  if (platform === 'win32') return;
  syncFile(dir, platform);
}

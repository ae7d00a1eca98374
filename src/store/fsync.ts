import fs from 'node:fs';

/** Flushes a file's bytes (and its size) to the disk. */
export function syncFile(file: string): void {
  const fd = fs.openSync(file, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Flushes a folder's entries (a file created, renamed or removed in it) to the disk. Skipped on
 * Windows: a folder cannot be opened for fsync there (EPERM), and NTFS journals its entries itself, so
 * a created or renamed file's entry is durable once the file's own data is flushed.
 */
export function syncFolder(dir: string): void {
  if (process.platform === 'win32') return;
  syncFile(dir);
}

import fs from 'node:fs';
import path from 'node:path';
import { AppError } from '../errors';
import { newToken } from './security';

export const TOKEN_FILE = 'admin-token';

/** Where the per-install token lives: config `admin.tokenFile` (relative to dataDir) or <dataDir>/admin-token. */
export function tokenFilePath(dataDir: string, configured: string | null): string {
  return path.resolve(dataDir, configured ?? TOKEN_FILE);
}

/**
 * Reads the per-install admin token, creating it (random, mode 0600) on first use. The token is the
 * only credential of the status window, so it is never logged; a file that others can read is
 * tightened rather than trusted as is.
 */
export function loadOrCreateToken(file: string): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  try {
    const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o600);
    try {
      fs.writeSync(fd, `${newToken()}\n`);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  if (process.platform !== 'win32') {
    const mode = fs.statSync(file).mode & 0o777;
    if ((mode & 0o077) !== 0) fs.chmodSync(file, 0o600);
  }
  const token = fs.readFileSync(file, 'utf8').trim();
  if (!/^[A-Za-z0-9_-]{32,}$/.test(token)) {
    throw new AppError('admin_token_file_invalid', 500, `${file} does not hold a valid admin token; delete it and restart to make a new one`);
  }
  return token;
}

import fs from 'node:fs';
import path from 'node:path';
import { AppError } from '../errors';
import { newToken } from './security';
import { writeFileExclusive } from '../files/exclusive-write';

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
    const stat = fs.lstatSync(file);
    const uid = process.getuid?.();
    // Another account's token (or one it may write) is that account's key to the window: refused, never used.
    if (!stat.isFile() || (uid !== undefined && stat.uid !== uid) || (stat.mode & 0o022) !== 0) {
      throw new AppError(
        'admin_token_file_foreign',
        500,
        `refusing to use ${file}: it is not a file that only the agent's account could have written (owner uid ${stat.uid}, mode ${(stat.mode & 0o777).toString(8)}); delete it and restart to make a new one`,
      );
    }
    if ((stat.mode & 0o077) !== 0) fs.chmodSync(file, 0o600);
  }
  const token = fs.readFileSync(file, 'utf8').trim();
  if (!/^[A-Za-z0-9_-]{32,}$/.test(token)) {
    throw new AppError('admin_token_file_invalid', 500, `${file} does not hold a valid admin token; delete it and restart to make a new one`);
  }
  return token;
}

function writeTokenFile(file: string, token: string): void {
  // A new file renamed over the old: a reader sees the old token or the new one, never half of one.
  // Created owner-only, under a name nobody can guess or plant a link at (admin.tokenFile may name a
  // folder others can write).
  writeFileExclusive(file, `${token}\n`, 0o600);
}

/**
 * Replaces the admin token (`admin-url --rotate`). A running agent notices the new file on its next
 * request: every open session and every unused login link then stops working.
 */
export function rotateToken(file: string): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const token = newToken();
  writeTokenFile(file, token);
  return token;
}

/**
 * The current token, re-read when the file changes (rotated by the CLI in another process). A stat
 * per request is cheap next to the request itself.
 */
export class TokenSource {
  private token: string;
  private seen: string;

  constructor(
    readonly file: string,
    private readonly onChange: (token: string) => void = () => undefined,
  ) {
    this.token = loadOrCreateToken(file);
    this.seen = this.signature();
    onChange(this.token);
  }

  private signature(): string {
    try {
      const st = fs.statSync(this.file);
      return `${st.ino}:${st.size}:${st.mtimeMs}`;
    } catch {
      return 'missing';
    }
  }

  current(): string {
    const now = this.signature();
    if (now !== this.seen) {
      // Deleted (the old way to reset it) or replaced: load or create, as at start-up.
      this.token = loadOrCreateToken(this.file);
      this.seen = this.signature();
      this.onChange(this.token);
    }
    return this.token;
  }
}

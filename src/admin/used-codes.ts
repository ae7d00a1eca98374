import fs from 'node:fs';
import path from 'node:path';

/**
 * Login codes already traded for a session, kept until they expire anyway: in an owner-only file in
 * the data folder, so a used login link (from the browser's history, a terminal's scrollback, a
 * journal) does not work again after the agent restarts. A code is `<expires>.<nonce>.<mac>`; only
 * the nonce and its expiry are kept. A file that cannot be read counts as "nothing used yet" only
 * when it does not exist: anything else refuses every code (a login then needs the file fixed).
 */
export class UsedLoginCodes {
  constructor(readonly file: string) {}

  static fileIn(dataDir: string): string {
    return path.join(dataDir, 'login-codes-used.json');
  }

  private read(now: number): Map<string, number> {
    let text: string;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
      throw err;
    }
    const parsed = JSON.parse(text) as Record<string, unknown>;
    const out = new Map<string, number>();
    for (const [nonce, expires] of Object.entries(parsed)) if (typeof expires === 'number' && expires > now) out.set(nonce, expires);
    return out;
  }

  /** Records `nonce` as used; false when it already was (the code must then be refused). */
  use(nonce: string, expiresAt: number, now: number = Date.now()): boolean {
    const used = this.read(now);
    if (used.has(nonce)) return false;
    used.set(nonce, expiresAt);
    const temp = `${this.file}.${process.pid}.tmp`;
    fs.writeFileSync(temp, JSON.stringify(Object.fromEntries(used)), { mode: 0o600 });
    fs.renameSync(temp, this.file);
    return true;
  }
}

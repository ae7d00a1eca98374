import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after } from 'node:test';
import Database from 'better-sqlite3';
import { REPO_ROOT, startWindows, waitFor, winPath, type WindowsOptions } from './wine';

/** What the Windows lane's suites share beyond running processes (wine.ts): folders, deliveries, a till. */

/** A fresh folder (Z:\tmp\... on the Windows side), removed when the test file ends. */
export function laneDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `pos-sync-win-${prefix}-`));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export const SAMPLES = path.join(REPO_ROOT, 'test', 'fixtures', 'menu-cycles');

export function sample(n: 1 | 2 | 3): Buffer {
  const name = fs.readdirSync(SAMPLES).filter((f) => f.endsWith('.json')).sort()[n - 1]!;
  return fs.readFileSync(path.join(SAMPLES, name));
}

export async function post(url: string, body: Buffer | string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  const res = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
  return { status: res.status, body: await res.text() };
}

/** Reads one of the data folder's files from this side (read-only, as another till would). */
export function readDb<T>(file: string, fn: (db: Database.Database) => T): T {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    return fn(db);
  } finally {
    db.close();
  }
}

/** Whether a write transaction is open on a till file right now (an apply under way): BEGIN IMMEDIATE without waiting. */
export function applyInProgress(tillFile: string): boolean {
  const db = new Database(tillFile, { fileMustExist: true, timeout: 0 });
  try {
    db.exec('BEGIN IMMEDIATE');
    db.exec('ROLLBACK');
    return false;
  } catch (err) {
    if ((err as { code?: string }).code === 'SQLITE_BUSY') return true;
    throw err;
  } finally {
    db.close();
  }
}

export function lastSequence(dataDir: string, location: number): number | null {
  return readDb(path.join(dataDir, 'pos-sync.db'), (db) => (db.prepare('SELECT last_change_sequence AS s FROM pos_sync_state WHERE location_id = ?').get(location) as { s: number | null } | undefined)?.s ?? null);
}

export function sha256(file: string): string | null {
  try {
    return crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
  } catch {
    return null;
  }
}

/** Every file of a folder (not recursing) with its content hash: "left every file as it was". */
export function folderState(dir: string): Record<string, string | null> {
  return Object.fromEntries(
    fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => [e.name, sha256(path.join(dir, e.name))]),
  );
}

export interface TillRow {
  readonly location: number;
  readonly sequence: number | null;
  readonly prices: number;
  readonly distinctPrices: number;
  readonly price: number | null;
}

export interface TillProcess {
  readonly pid: number;
  /** Stops it (it closes the file) and returns what it saw. */
  stop(): Promise<{ reads: number; errors: string[]; seen: TillRow[] }>;
  /** Ends it at once (a failed test's clean-up, when its folder may be gone). */
  kill(): Promise<void>;
}

/** test/windows/fixtures/till.cjs as a Windows process holding `dbFile` open; resolves once it has the file open. */
export async function startTill(dbFile: string, work: string, options: WindowsOptions): Promise<TillProcess> {
  const stopFile = path.join(work, `till-stop-${Date.now()}-${Math.random().toString(36).slice(2)}`);
  const outFile = `${stopFile}.json`;
  const p = startWindows([winPath(path.join(__dirname, 'fixtures', 'till.cjs')), winPath(REPO_ROOT), winPath(dbFile), winPath(stopFile), winPath(outFile)], options);
  let exited: number | null | undefined;
  void p.exited.then((c) => (exited = c));
  await waitFor('the Windows till to open the file', () => {
    if (p.stdout().startsWith('ready')) return true;
    if (exited !== undefined) throw new Error(`the till exited (${exited}): ${p.stderr()}`);
    return false;
  });
  return {
    pid: p.pid,
    async kill() {
      if (exited === undefined) process.kill(p.pid, 'SIGKILL');
      await p.exited;
    },
    async stop() {
      fs.writeFileSync(stopFile, '');
      const code = await p.exited;
      if (code !== 0) throw new Error(`the till ended with ${code}: ${p.stderr()}`);
      return JSON.parse(fs.readFileSync(outFile, 'utf8')) as { reads: number; errors: string[]; seen: TillRow[] };
    },
  };
}

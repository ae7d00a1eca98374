import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { isBusyError } from '../store/database';
import type { AgentService } from '../agent';
import { AppError } from '../errors';
import { pidFile } from './paths';
import { makePrivateFile, PRIVATE_FILE_MODE } from './private-files';

/**
 * One agent per data folder, enforced by an operating-system lock held for the agent's life.
 *
 * The lock is SQLite's own: `agent.lock` is a tiny database opened with `locking_mode=EXCLUSIVE`,
 * and one write takes its EXCLUSIVE lock, which is then kept until the connection closes. That is a
 * real kernel lock (fcntl byte-range locks on POSIX, LockFileEx on Windows), so it works the same on
 * both, and the kernel drops it when the holder dies, even by SIGKILL or power loss: there is never a
 * stale lock to clean up. The alternative considered, the npm package proper-lockfile, is not an OS
 * lock: it makes a folder and refreshes its mtime, and another process declares it stale after a
 * timeout, so a killed agent blocks its restart for that long and a paused (or slow) one can be
 * declared dead while it still writes. Node has no flock of its own.
 *
 * One caveat of POSIX locks: closing *any* descriptor of the file in the holding process drops the
 * lock. SQLite guards its own connections against that, so nothing else in the agent may open
 * agent.lock (diagnostics and backups never read it).
 */
export const LOCK_FILE = 'agent.lock';

export function lockFile(dataDir: string): string {
  return path.join(dataDir, LOCK_FILE);
}

/** The locks this process holds, by data folder. */
const heldHere = new Map<string, InstanceLock>();

/** A held instance lock; `release()` (or the process ending) frees it. */
export class InstanceLock {
  constructor(
    private readonly db: Database.Database,
    readonly file: string,
    private readonly dataDir: string,
  ) {
    heldHere.set(dataDir, this);
  }

  get held(): boolean {
    return this.db.open;
  }

  release(): void {
    if (heldHere.get(this.dataDir) === this) heldHere.delete(this.dataDir);
    if (this.db.open) this.db.close();
  }
}

/** Whether this process already holds the data folder's lock (serve took it before opening the database). */
export function holdsInstanceLock(dataDir: string): boolean {
  return heldHere.get(path.resolve(dataDir))?.held === true;
}

/**
 * Takes the data folder's lock, or returns null while another process holds it. `waitMs` rides out
 * the instant a `status` probe holds it (a probe holds it for microseconds).
 */
export function tryAcquireInstanceLock(dataDir: string, holder: string, waitMs = 2_000): InstanceLock | null {
  const file = lockFile(dataDir);
  const db = new Database(file, { timeout: waitMs });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    // The rollback journal (not WAL): an EXCLUSIVE lock then keeps out readers too, so a probe sees it.
    db.pragma('journal_mode = DELETE');
    db.pragma('synchronous = FULL');
    db.exec('BEGIN EXCLUSIVE');
    db.exec('CREATE TABLE IF NOT EXISTS holder (pid INTEGER NOT NULL, what TEXT NOT NULL, since TEXT NOT NULL)');
    db.exec('DELETE FROM holder');
    db.prepare('INSERT INTO holder (pid, what, since) VALUES (?, ?, ?)').run(process.pid, holder, new Date().toISOString());
    db.exec('COMMIT');
    // chmod, not open: opening the file here would drop the lock just taken (see the caveat above).
    makePrivateFile(file);
    return new InstanceLock(db, file, path.resolve(dataDir));
  } catch (err) {
    db.close();
    if (isBusyError(err)) return null;
    throw err;
  }
}

/** Whether some process holds the data folder's lock (an agent, or a compact or restore). */
export function isInstanceLocked(dataDir: string): boolean {
  const file = lockFile(dataDir);
  if (!fs.existsSync(file)) return false;
  let db: Database.Database;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true, timeout: 0 });
  } catch (err) {
    return isBusyError(err);
  }
  try {
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    return false;
  } catch (err) {
    return isBusyError(err);
  } finally {
    db.close();
  }
}

export interface InstanceRecord {
  readonly pid: number;
  readonly hostname: string;
  readonly startedAt: string;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else, which still means "running".
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readPidFile(dataDir: string): InstanceRecord | null {
  try {
    const record = JSON.parse(fs.readFileSync(pidFile(dataDir), 'utf8')) as InstanceRecord;
    return typeof record.pid === 'number' && record.hostname === os.hostname() ? record : null;
  } catch {
    return null;
  }
}

/**
 * The agent running on this data folder, if any. The lock says whether one runs; the pid file only
 * says which (a pid file alone can outlive its process, or name a recycled pid).
 */
export function runningAgent(dataDir: string): InstanceRecord | null {
  if (!isInstanceLocked(dataDir)) return null;
  const record = readPidFile(dataDir);
  if (record && isAlive(record.pid)) return record;
  // Held, but by a process without a pid file: an offline operation (compact, restore) in progress.
  return { pid: 0, hostname: os.hostname(), startedAt: 'unknown (another command holds the data folder)' };
}

/**
 * How a person stops the agent on this platform: the ways it runs there (the desktop app, the service
 * the installer or the package sets up, `serve` in a console window).
 */
export function howToStopAgent(platform: NodeJS.Platform = process.platform): string {
  if (platform === 'win32') return 'quit the desktop app from its tray icon, stop the service with `net stop pos-sync-agent` in a Command Prompt run as administrator, or press Ctrl+C in the window running `serve`';
  if (platform === 'linux') return 'quit the desktop app, stop the service with `sudo systemctl stop pos-sync-agent`, or press Ctrl-C where `serve` runs';
  return 'quit the desktop app, or press Ctrl-C where `serve` runs';
}

function inUseMessage(dataDir: string, what: string): string {
  const record = readPidFile(dataDir);
  const who = record && isAlive(record.pid) ? `an agent (pid ${record.pid}, started ${record.startedAt})` : 'another agent or command (compact, restore)';
  return `${who} is running on ${dataDir}: stop it (${howToStopAgent()}) before ${what}`;
}

/**
 * Holds the data folder's lock for an offline operation (restore, compact), so no agent can start in
 * the middle of it; refuses while an agent (or another such operation) holds it.
 */
export function holdDataFolder(dataDir: string, what: string): InstanceLock {
  fs.mkdirSync(dataDir, { recursive: true });
  const lock = tryAcquireInstanceLock(dataDir, what, 0);
  if (!lock) throw new AppError('agent_running', 409, inUseMessage(dataDir, what));
  return lock;
}

/** Refuses while an agent has the data folder (without taking it). */
export function assertNoRunningAgent(dataDir: string, what: string): void {
  if (isInstanceLocked(dataDir)) throw new AppError('agent_running', 409, inUseMessage(dataDir, what));
}

/** The lock for `serve`: taken before the database is opened, held until the agent has stopped. */
export function acquireAgentLock(dataDir: string): InstanceLock {
  const lock = tryAcquireInstanceLock(dataDir, 'serve');
  if (!lock) {
    throw new AppError('agent_running', 409, `one agent per data folder: ${inUseMessage(dataDir, 'starting another')}`);
  }
  return lock;
}

/**
 * Writes <dataDir>/agent.pid while the agent runs, so `restore` and `compact` in another process can
 * tell that the database is in use. A pid left behind by a crash is ignored once that process is gone.
 */
export class InstanceService implements AgentService {
  readonly name = 'instance';
  private file: string | null = null;
  /** Taken here only when whoever started the agent did not take it first (an embedded agent). */
  private lock: InstanceLock | null = null;

  async start(agent: { config: { dataDir: string } }): Promise<void> {
    if (!holdsInstanceLock(agent.config.dataDir)) this.lock = acquireAgentLock(agent.config.dataDir);
    this.file = pidFile(agent.config.dataDir);
    const record: InstanceRecord = { pid: process.pid, hostname: os.hostname(), startedAt: new Date().toISOString() };
    fs.writeFileSync(this.file, `${JSON.stringify(record)}\n`, { mode: PRIVATE_FILE_MODE });
  }

  async stop(): Promise<void> {
    if (!this.file) return;
    try {
      const record = JSON.parse(fs.readFileSync(this.file, 'utf8')) as InstanceRecord;
      if (record.pid === process.pid) fs.rmSync(this.file, { force: true });
    } catch {
      // Already gone.
    }
    this.file = null;
    this.lock?.release();
    this.lock = null;
  }
}

/** Removes the pid file if it is this process's (synchronous: the crash handler's last act). */
export function removeOwnPidFile(dataDir: string): void {
  const record = readPidFile(dataDir);
  if (record?.pid === process.pid) fs.rmSync(pidFile(dataDir), { force: true });
}

import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { AdminAlertProvider, AdminPanelProvider, OperationsAlert, PanelView } from '../admin/extensions';
import type { Agent, AgentService } from '../agent';
import type { Config } from '../config/schema';
import { operatorName } from '../core';
import { AppError, describeError } from '../errors';
import type { Logger } from '../log';
import { appliedMigrations, configureWriter, databasePath, openDatabase, type Db } from '../store/database';
import { TILL_MIGRATIONS as MIGRATIONS } from '../store/migrations';
import { holdDataFolder } from './instance';
import { makePrivateDir, makePrivateFile } from './private-files';
import { formatBytes } from './disk';
import { backupAlerts, backupPanel, localTime } from './panels';
import { backupDir } from './paths';

/** Backup files are `pos-sync-<UTC timestamp>.db`, so name order is age order. */
const BACKUP_NAME = /^pos-sync-(\d{8}T\d{6}(?:\d{3})?Z)\.db$/;

export interface BackupFile {
  readonly file: string;
  readonly name: string;
  readonly bytes: number;
  /** When it was taken (from its name). */
  readonly takenAt: string;
}

export function backupName(at: Date): string {
  return `pos-sync-${at.toISOString().replace(/[-:]/g, '').replace('.', '')}.db`;
}

function takenAtOf(name: string): string | null {
  const m = BACKUP_NAME.exec(name);
  if (!m) return null;
  const t = m[1]!;
  return `${t.slice(0, 4)}-${t.slice(4, 6)}-${t.slice(6, 8)}T${t.slice(9, 11)}:${t.slice(11, 13)}:${t.slice(13, 15)}.${t.length > 16 ? t.slice(15, 18) : '000'}Z`;
}

/** Backups in a folder, newest first. Files that do not follow our naming are never touched. */
export function listBackups(dir: string): BackupFile[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  const out: BackupFile[] = [];
  for (const name of names) {
    const takenAt = takenAtOf(name);
    if (takenAt === null) continue;
    const file = path.join(dir, name);
    try {
      out.push({ file, name, bytes: fs.statSync(file).size, takenAt });
    } catch {
      // Removed meanwhile.
    }
  }
  return out.sort((a, b) => (a.name < b.name ? 1 : a.name > b.name ? -1 : 0));
}

/** Which backups to delete so that `keep` remain (pure: newest-first list in, victims out). */
export function backupsToDelete<T extends { name: string }>(newestFirst: readonly T[], keep: number): T[] {
  return newestFirst.slice(Math.max(1, keep));
}

function fsyncFile(file: string): void {
  const fd = fs.openSync(file, 'r+');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * An online backup through SQLite's backup API (the agent and the till keep working meanwhile),
 * written under a temporary name and renamed when complete, so a half-written file never looks like
 * a backup. Then the oldest beyond `keep` are deleted.
 */
export async function backupDatabase(db: Db, dir: string, keep: number, now: Date = new Date()): Promise<BackupFile> {
  makePrivateDir(dir);
  const name = backupName(now);
  const file = path.join(dir, name);
  const partial = `${file}.partial`;
  fs.rmSync(partial, { force: true });
  try {
    await db.backup(partial);
    // Backups hold everything the databases hold (staff records too): owner-only like them.
    makePrivateFile(partial);
    fsyncFile(partial);
    fs.renameSync(partial, file);
  } catch (err) {
    fs.rmSync(partial, { force: true });
    throw err;
  }
  for (const old of backupsToDelete(listBackups(dir), keep)) fs.rmSync(old.file, { force: true });
  return { file, name, bytes: fs.statSync(file).size, takenAt: now.toISOString() };
}

export interface CandidateCheck {
  readonly ok: boolean;
  readonly problems: string[];
  readonly migrations: { version: number; name: string }[];
  /** Per location: the ChangeSequence the restored agent will resume from. */
  readonly locations: { locationId: number; lastChangeSequence: number | null }[];
}

/**
 * Checks a file before it may replace the database: it opens as SQLite, passes `integrity_check`,
 * is a pos-sync-agent database, and holds no migration this build does not know.
 */
export function checkBackupFile(file: string): CandidateCheck {
  const problems: string[] = [];
  let db: Db;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
  } catch (err) {
    return { ok: false, problems: [`cannot open ${file}: ${describeError(err)}`], migrations: [], locations: [] };
  }
  try {
    let integrity: string[];
    try {
      integrity = (db.pragma('integrity_check(20)') as { integrity_check: string }[]).map((r) => r.integrity_check);
    } catch (err) {
      return { ok: false, problems: [`not a readable SQLite database: ${describeError(err)}`], migrations: [], locations: [] };
    }
    if (integrity.length !== 1 || integrity[0] !== 'ok') problems.push(`integrity_check failed: ${integrity.join('; ')}`);
    const migrations = appliedMigrations(db).map((m) => ({ version: m.version, name: m.name }));
    const known = new Map(MIGRATIONS.map((m) => [m.version, m.name]));
    if (!migrations.some((m) => m.version === 1 && m.name === known.get(1))) problems.push('not a pos-sync-agent database (no core migration)');
    const unknown = migrations.filter((m) => known.get(m.version) !== m.name);
    if (unknown.length > 0) {
      problems.push(`it has migrations this agent does not know (${unknown.map((u) => `${u.version}-${u.name}`).join(', ')}): it was made by a newer version`);
    }
    let locations: CandidateCheck['locations'] = [];
    if (problems.length === 0) {
      locations = (db.prepare('SELECT location_id, last_change_sequence FROM locations ORDER BY location_id').all() as {
        location_id: number;
        last_change_sequence: number | null;
      }[]).map((l) => ({ locationId: l.location_id, lastChangeSequence: l.last_change_sequence }));
    }
    return { ok: problems.length === 0, problems, migrations, locations };
  } finally {
    db.close();
  }
}

export interface RestoreResult {
  readonly restoredFrom: string;
  /** The database as it was before the restore (itself a backup; restore it to undo). */
  readonly previousSavedAs: string | null;
  readonly check: CandidateCheck;
}

/**
 * Replaces the agent's database with a checked backup. Refuses while an agent runs on the data folder
 * or another program (the till) holds the database open, since swapping a file under an open
 * connection would corrupt what it sees. The current database is first saved beside the backups.
 * The restored agent resumes each location's chain from the restored ChangeSequence: updates
 * delivered since then are missing, so later deliveries wait as gaps (shown by `status`) until head
 * office resends the missing ones.
 */
export async function restoreDatabase(config: Readonly<Config>, candidate: string, now: Date = new Date()): Promise<RestoreResult> {
  const source = path.resolve(candidate);
  const check = checkBackupFile(source);
  if (!check.ok) throw new AppError('backup_refused', 422, `refusing to restore ${source}: ${check.problems.join('; ')}`);
  // Held to the end, so no agent can start on a half-restored folder.
  const lock = holdDataFolder(config.dataDir, 'restoring');
  try {
    return await restoreLocked(config, source, check, now);
  } finally {
    lock.release();
  }
}

async function restoreLocked(config: Readonly<Config>, source: string, check: CandidateCheck, now: Date): Promise<RestoreResult> {
  const target = databasePath(config.dataDir);
  if (path.resolve(target) === source) throw new AppError('backup_refused', 422, 'that file is the live database itself');
  let previousSavedAs: string | null = null;
  if (fs.existsSync(target)) {
    const current = new Database(target, { fileMustExist: true });
    try {
      configureWriter(current);
      const dir = backupDir(config);
      fs.mkdirSync(dir, { recursive: true });
      previousSavedAs = path.join(dir, `pre-restore-${backupName(now).slice('pos-sync-'.length)}`);
      await current.backup(previousSavedAs);
      makePrivateFile(previousSavedAs);
      current.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      current.close();
    }
    // The last connection to close removes the WAL; if it is still there, someone else has the file open.
    if (fs.existsSync(`${target}-wal`)) {
      throw new AppError(
        'database_in_use',
        409,
        `another program (the till?) has ${target} open: close it and retry (the current database was saved as ${previousSavedAs})`,
      );
    }
  }
  fs.mkdirSync(config.dataDir, { recursive: true });
  const incoming = `${target}.restoring`;
  fs.copyFileSync(source, incoming);
  // copyFile copies the source's mode; the live database is owner-only whatever the backup's was.
  makePrivateFile(incoming);
  fsyncFile(incoming);
  fs.rmSync(`${target}-shm`, { force: true });
  fs.renameSync(incoming, target);
  // Bring it to this build's schema and record who restored what.
  const db = openDatabase(target);
  try {
    db.prepare('INSERT INTO audit_log (at, actor, action, details) VALUES (?, ?, ?, ?)').run(
      now.toISOString(),
      operatorName(),
      'restore',
      JSON.stringify({ from: source, previousSavedAs, locations: check.locations }),
    );
  } finally {
    db.close();
  }
  return { restoredFrom: source, previousSavedAs, check };
}

/**
 * When the next scheduled backup is due (pure). Daily mode: the first `time` (machine-local) after the
 * last backup; a time missed while the machine was off or asleep makes it due at once. Interval mode:
 * `intervalHours` after the last one. No backup yet: due now.
 */
export function nextBackupDue(last: Date | null, options: { time: string; intervalHours: number | null }, now: Date): Date {
  if (last === null) return now;
  if (options.intervalHours !== null) return new Date(last.getTime() + options.intervalHours * 3_600_000);
  const [hh, mm] = options.time.split(':').map(Number) as [number, number];
  const due = new Date(last);
  due.setHours(hh, mm, 0, 0);
  if (due.getTime() <= last.getTime()) due.setDate(due.getDate() + 1);
  return due;
}

export interface BackupState {
  readonly dir: string;
  readonly lastBackup: BackupFile | null;
  readonly nextDueAt: string | null;
  readonly lastError: string | null;
  readonly running: boolean;
}

/** Takes the scheduled backups while the agent runs (AgentService 'backup'). */
export class BackupService implements AgentService, AdminPanelProvider, AdminAlertProvider {
  readonly name = 'backup';
  private agent: Agent | null = null;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<BackupFile | null> | null = null;
  private lastError: string | null = null;

  constructor(
    private readonly config: Readonly<Config>,
    private readonly log: Logger,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  async start(agent: Agent): Promise<void> {
    this.agent = agent;
    this.timer = setInterval(() => void this.tick(), this.config.backup.checkIntervalMinutes * 60_000);
    this.timer.unref();
    // A backup missed while the machine was off is taken soon after start, not at the next check.
    setImmediate(() => void this.tick());
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running?.catch(() => null);
    this.agent = null;
  }

  state(): BackupState {
    const dir = backupDir(this.config);
    const lastBackup = listBackups(dir)[0] ?? null;
    return {
      dir,
      lastBackup,
      nextDueAt: nextBackupDue(lastBackup ? new Date(lastBackup.takenAt) : null, this.config.backup, this.clock()).toISOString(),
      lastError: this.lastError,
      running: this.running !== null,
    };
  }

  adminPanel(): PanelView {
    return backupPanel(this.state(), this.config.backup.keep, this.clock(), localTime);
  }

  async runAdminAction(id: string, actor: string): Promise<{ message: string }> {
    if (id !== 'backup-now') throw new AppError('not_found', 404, `backups have no action ${id}`);
    this.log.info(`backup requested from the status window by ${actor}`);
    const backup = await this.backupNow();
    if (!backup) throw new AppError('backup_failed', 500, `the backup failed: ${this.lastError ?? 'the database is not open'}`);
    return { message: `Backup written: ${backup.file} (${formatBytes(backup.bytes)}).` };
  }

  adminAlerts(): OperationsAlert[] {
    return backupAlerts(this.state(), this.clock());
  }

  /** Takes a backup now (the window's button and the schedule). */
  async backupNow(): Promise<BackupFile | null> {
    if (this.running) return this.running;
    const db = this.agent?.core.tillDb;
    if (!db?.open) return null;
    this.running = backupDatabase(db, backupDir(this.config), this.config.backup.keep, this.clock())
      .then((b) => {
        this.lastError = null;
        this.log.info(`backup written: ${b.file} (${b.bytes} bytes)`);
        return b;
      })
      .catch((err: unknown) => {
        this.lastError = describeError(err);
        this.log.error(`backup failed: ${this.lastError}`);
        return null;
      })
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  private async tick(): Promise<void> {
    if (!this.agent || this.running) return;
    const now = this.clock();
    const last = listBackups(backupDir(this.config))[0];
    if (nextBackupDue(last ? new Date(last.takenAt) : null, this.config.backup, now).getTime() <= now.getTime()) await this.backupNow();
  }
}

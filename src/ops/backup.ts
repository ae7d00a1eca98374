import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { AdminAlertProvider, AdminPanelProvider, OperationsAlert, PanelView } from '../admin/extensions';
import type { Agent, AgentService } from '../agent';
import type { Config } from '../config/schema';
import { operatorName } from '../core';
import { AppError, describeError } from '../errors';
import type { Logger } from '../log';
import { AGENT_FILE, appliedMigrations, MIGRATIONS_FOR, STAFF_FILE, STORE_FILES, storeFilePath, tableExists, TILL_FILE, type Db, type StoreFileKind } from '../store/database';
import { LEGACY_SINGLE_FILE_MIGRATIONS } from '../store/migrations';
import { closeStore, openStore } from '../store/store';
import { holdDataFolder } from './instance';
import { makePrivateDir, makePrivateFile } from './private-files';
import { backupAlerts, backupPanel, formatBytes, localTime } from './panels';
import { backupDir } from './paths';
import type { BackupFile, BackupState } from './states';

/**
 * A backup is a set: a folder `backup-<UTC timestamp>` holding agent.db and pos-sync.db (and staff.db
 * when backup.includeStaff), with a manifest. 0.1 wrote single files `pos-sync-<UTC timestamp>.db`;
 * they are still listed and restorable (the next start splits the restored file, src/store/split.ts).
 * Names sort by age.
 */
/** The UTC time in every name the agent gives a backup (see stamp). */
const STAMP = String.raw`(\d{8}T\d{6}(?:\d{3})?Z)`;
const SET_NAME = new RegExp(`^backup-${STAMP}$`);
const SINGLE_FILE_NAME = new RegExp(`^pos-sync-${STAMP}\\.db$`);
const MANIFEST = 'manifest.json';

function stamp(at: Date): string {
  return at.toISOString().replace(/[-:]/g, '').replace('.', '');
}

export function backupName(at: Date): string {
  return `backup-${stamp(at)}`;
}

function takenAtOf(name: string): { takenAt: string; kind: BackupFile['kind'] } | null {
  const m = SET_NAME.exec(name) ?? SINGLE_FILE_NAME.exec(name);
  if (!m) return null;
  const t = m[1]!;
  return {
    takenAt: `${t.slice(0, 4)}-${t.slice(4, 6)}-${t.slice(6, 8)}T${t.slice(9, 11)}:${t.slice(11, 13)}:${t.slice(13, 15)}.${t.length > 16 ? t.slice(15, 18) : '000'}Z`,
    kind: name.startsWith('backup-') ? 'set' : 'single-file',
  };
}

function sizeOf(file: string): number {
  const stat = fs.statSync(file);
  if (!stat.isDirectory()) return stat.size;
  return fs.readdirSync(file).reduce((sum, f) => sum + fs.statSync(path.join(file, f)).size, 0);
}

/** Backups in a folder, newest first. Anything that does not follow our naming is never touched. */
export function listBackups(dir: string): BackupFile[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  const out: BackupFile[] = [];
  for (const name of names) {
    const parsed = takenAtOf(name);
    if (parsed === null) continue;
    const file = path.join(dir, name);
    try {
      out.push({ file, name, bytes: sizeOf(file), ...parsed });
    } catch {
      // Removed meanwhile.
    }
  }
  return out.sort((a, b) => (a.takenAt < b.takenAt ? 1 : a.takenAt > b.takenAt ? -1 : a.name < b.name ? 1 : -1));
}

/** Which backups to delete so that `keep` remain (pure: newest-first list in, victims out). */
export function backupsToDelete<T extends { name: string }>(newestFirst: readonly T[], keep: number): T[] {
  return newestFirst.slice(Math.max(1, keep));
}

function fsyncPath(file: string): void {
  // Windows cannot open a folder for fsync; its renames are durable on NTFS.
  if (process.platform === 'win32' && fs.statSync(file).isDirectory()) return;
  const fd = fs.openSync(file, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

export interface BackupSources {
  readonly agent: Db;
  readonly till: Db;
  /** staff.db, only when the backup includes it (backup.includeStaff). */
  readonly staff?: Db | null;
}

/**
 * An online backup set through SQLite's backup API (the agent and the till keep working meanwhile).
 * agent.db is copied first, then pos-sync.db: the applier commits the till file before agent.db, so
 * an update the copied agent.db calls applied is always in the copied till file; the reverse case (in
 * the till file, still pending in agent.db) is what Applier.reconcile() finishes on the first start
 * after a restore. Written under a temporary name and renamed when complete; then the oldest beyond
 * `keep` are deleted.
 */
export async function backupDatabase(sources: BackupSources, dir: string, keep: number, now: Date = new Date()): Promise<BackupFile> {
  makePrivateDir(dir);
  const name = backupName(now);
  const folder = path.join(dir, name);
  await writeBackupSet(sources, folder, now);
  for (const old of backupsToDelete(listBackups(dir), keep)) fs.rmSync(old.file, { recursive: true, force: true });
  return { file: folder, name, bytes: sizeOf(folder), takenAt: now.toISOString(), kind: 'set' };
}

export interface SetConsistency {
  readonly problems: string[];
  /** Updates the till file has applied whose inbox row agent.db still shows pending: the agent finishes them on start (Applier.reconcile). */
  readonly reconcilable: number[];
}

/**
 * Do a till file and an agent.db belong together? Every update the till file lists as applied
 * (applied_updates) must be the same update (location and ChangeSequence, not merely the same number)
 * in agent.db's inbox, either 'applied' or still 'pending' (a crash, or a backup, between the apply's
 * two commits: the agent's reconcile finishes it); and every inbox row agent.db calls applied must be
 * in the till file. Done in SQL over the two files attached.
 */
export function checkSetConsistency(tillFile: string, agentFile: string): SetConsistency {
  const db = new Database(tillFile, { readonly: true, fileMustExist: true });
  try {
    db.prepare('ATTACH DATABASE ? AS agent').run(agentFile);
    const missing = db
      .prepare(
        `SELECT a.inbox_id, a.location_id, a.change_sequence, i.state, i.location_id AS inbox_location, i.change_sequence AS inbox_sequence
         FROM main.applied_updates a LEFT JOIN agent.inbox i ON i.id = a.inbox_id
         WHERE i.id IS NULL OR i.location_id <> a.location_id OR i.change_sequence <> a.change_sequence OR i.state NOT IN ('applied', 'pending')
         ORDER BY a.inbox_id LIMIT 10`,
      )
      .all() as { inbox_id: number; location_id: number; change_sequence: number; state: string | null; inbox_location: number | null; inbox_sequence: number | null }[];
    const unapplied = db
      .prepare(
        `SELECT i.id, i.location_id, i.change_sequence FROM agent.inbox i
         WHERE i.state = 'applied' AND NOT EXISTS (SELECT 1 FROM main.applied_updates a WHERE a.inbox_id = i.id)
         ORDER BY i.id LIMIT 10`,
      )
      .all() as { id: number; location_id: number; change_sequence: number }[];
    const reconcilable = (
      db
        .prepare(
          `SELECT a.inbox_id FROM main.applied_updates a
           JOIN agent.inbox i ON i.id = a.inbox_id AND i.location_id = a.location_id AND i.change_sequence = a.change_sequence
           WHERE i.state = 'pending' ORDER BY a.inbox_id`,
        )
        .all() as { inbox_id: number }[]
    ).map((r) => r.inbox_id);
    const problems = [
      ...missing.map((r) =>
        r.state === null || r.inbox_location !== r.location_id || r.inbox_sequence !== r.change_sequence
          ? `pos-sync.db has update #${r.inbox_id} (location ${r.location_id}, ChangeSequence ${r.change_sequence}) applied, which agent.db does not hold`
          : `pos-sync.db has update #${r.inbox_id} applied, which agent.db calls ${r.state}`,
      ),
      ...unapplied.map((r) => `agent.db calls update #${r.id} (location ${r.location_id}, ChangeSequence ${r.change_sequence}) applied; pos-sync.db does not have it`),
    ];
    return { problems, reconcilable };
  } finally {
    db.close();
  }
}

/** One file's online copy, made self-contained (rollback journal: no -wal/-shm needed beside it). */
async function copyOut(db: Db, target: string): Promise<void> {
  await db.backup(target);
  const copy = new Database(target);
  try {
    // A backup is durable or it is not a backup: FULL, like every writable connection of the agent.
    copy.pragma('synchronous = FULL');
    copy.pragma('journal_mode = DELETE');
  } finally {
    copy.close();
  }
  makePrivateFile(target);
  fsyncPath(target);
}

/** How often a set is retaken when an update was received and applied between its two copies. */
export const CONSISTENCY_ATTEMPTS = 5;

/**
 * One backup set into `folder` (built as `<folder>.partial`, renamed when complete). agent.db is
 * copied first, then pos-sync.db: an apply that commits between the two copies is in the till copy
 * with its inbox row still 'pending' in the agent.db copy, which is consistent (the restored agent
 * finishes it). The one case that is not (an update received *and* applied between the copies) is
 * found by checkSetConsistency, and the pair is taken again.
 */
export async function writeBackupSet(sources: BackupSources, folder: string, now: Date): Promise<void> {
  const partial = `${folder}.partial`;
  fs.rmSync(partial, { recursive: true, force: true });
  try {
    const files: { file: string; db: Db; kind: StoreFileKind }[] = [
      { file: AGENT_FILE, db: sources.agent, kind: 'agent' },
      { file: TILL_FILE, db: sources.till, kind: 'till' },
      ...(sources.staff ? [{ file: STAFF_FILE, db: sources.staff, kind: 'staff' as const }] : []),
    ];
    let problems: string[] = [];
    for (let attempt = 1; attempt <= CONSISTENCY_ATTEMPTS; attempt++) {
      fs.rmSync(partial, { recursive: true, force: true });
      makePrivateDir(partial);
      await copyOut(sources.agent, path.join(partial, AGENT_FILE));
      await copyOut(sources.till, path.join(partial, TILL_FILE));
      problems = checkSetConsistency(path.join(partial, TILL_FILE), path.join(partial, AGENT_FILE)).problems;
      if (problems.length === 0) break;
    }
    if (problems.length > 0) throw new AppError('backup_failed', 500, `the backup's files did not agree after ${CONSISTENCY_ATTEMPTS} attempts: ${problems.join('; ')}`);
    if (sources.staff) await copyOut(sources.staff, path.join(partial, STAFF_FILE));
    const locations = sources.till.prepare('SELECT location_id AS locationId, last_change_sequence AS lastChangeSequence FROM locations ORDER BY location_id').all();
    const manifest = {
      takenAt: now.toISOString(),
      files: files.map((f) => ({ file: f.file, kind: f.kind, migrations: appliedMigrations(f.db).map((m) => `${m.version}-${m.name}`) })),
      includesStaff: Boolean(sources.staff),
      locations,
    };
    fs.writeFileSync(path.join(partial, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
    fsyncPath(path.join(partial, MANIFEST));
    fs.renameSync(partial, folder);
    fsyncPath(path.dirname(folder));
  } catch (err) {
    fs.rmSync(partial, { recursive: true, force: true });
    throw err;
  }
}

export interface CandidateCheck {
  readonly ok: boolean;
  readonly kind: BackupFile['kind'];
  readonly problems: string[];
  readonly migrations: { file: string; version: number; name: string }[];
  /** Per location: the ChangeSequence the restored agent will resume from. */
  readonly locations: { locationId: number; lastChangeSequence: number | null }[];
  readonly includesStaff: boolean;
}

function openChecked(file: string, problems: string[]): Db | null {
  try {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      const integrity = (db.pragma('integrity_check(20)') as { integrity_check: string }[]).map((r) => r.integrity_check);
      if (integrity.length !== 1 || integrity[0] !== 'ok') problems.push(`${path.basename(file)}: integrity_check failed: ${integrity.join('; ')}`);
    } catch (err) {
      problems.push(`${path.basename(file)}: not a readable SQLite database: ${describeError(err)}`);
      db.close();
      return null;
    }
    return db;
  } catch (err) {
    problems.push(`cannot open ${file}: ${describeError(err)}`);
    return null;
  }
}

function checkMigrations(db: Db, file: string, known: readonly { version: number; name: string }[], problems: string[], out: CandidateCheck['migrations']): void {
  const names = new Map(known.map((m) => [m.version, m.name]));
  const applied = appliedMigrations(db);
  out.push(...applied.map((m) => ({ file, version: m.version, name: m.name })));
  if (!applied.some((m) => m.version === 1 && m.name === names.get(1))) problems.push(`${file} is not a pos-sync-agent ${file} (no migration 1-${names.get(1)})`);
  const unknown = applied.filter((m) => names.get(m.version) !== m.name);
  if (unknown.length > 0) problems.push(`${file} has migrations this agent does not know (${unknown.map((u) => `${u.version}-${u.name}`).join(', ')}): it was made by a newer version`);
}

function locationsOf(db: Db): CandidateCheck['locations'] {
  return (db.prepare('SELECT location_id, last_change_sequence FROM locations ORDER BY location_id').all() as { location_id: number; last_change_sequence: number | null }[]).map((l) => ({
    locationId: l.location_id,
    lastChangeSequence: l.last_change_sequence,
  }));
}

/**
 * Checks a backup before it may replace the live files: a set's files each open, pass
 * `integrity_check` and hold only migrations this build knows, and agree with each other (every
 * update agent.db calls applied is in the till file); a 0.1 single file is checked as one.
 */
export function checkBackupFile(candidate: string): CandidateCheck {
  const problems: string[] = [];
  const migrations: CandidateCheck['migrations'] = [];
  let stat: fs.Stats;
  try {
    stat = fs.statSync(candidate);
  } catch (err) {
    return { ok: false, kind: 'set', problems: [`cannot open ${candidate}: ${describeError(err)}`], migrations, locations: [], includesStaff: false };
  }
  if (!stat.isDirectory()) {
    const db = openChecked(candidate, problems);
    if (!db) return { ok: false, kind: 'single-file', problems, migrations, locations: [], includesStaff: false };
    try {
      checkMigrations(db, TILL_FILE, LEGACY_SINGLE_FILE_MIGRATIONS, problems, migrations);
      const locations = problems.length === 0 ? locationsOf(db) : [];
      return { ok: problems.length === 0, kind: 'single-file', problems, migrations, locations, includesStaff: true };
    } finally {
      db.close();
    }
  }
  const includesStaff = fs.existsSync(path.join(candidate, STAFF_FILE));
  const opened: Partial<Record<StoreFileKind, Db>> = {};
  try {
    for (const kind of ['agent', 'till', ...(includesStaff ? ['staff' as const] : [])] as StoreFileKind[]) {
      const file = STORE_FILES[kind];
      if (!fs.existsSync(path.join(candidate, file))) {
        problems.push(`the set has no ${file}`);
        continue;
      }
      const db = openChecked(path.join(candidate, file), problems);
      if (!db) continue;
      opened[kind] = db;
      checkMigrations(db, file, MIGRATIONS_FOR[kind], problems, migrations);
    }
    let locations: CandidateCheck['locations'] = [];
    if (problems.length === 0 && opened.till && opened.agent) {
      locations = locationsOf(opened.till);
      const consistency = checkSetConsistency(path.join(candidate, TILL_FILE), path.join(candidate, AGENT_FILE));
      for (const problem of consistency.problems) problems.push(`${problem}: the files are not from the same set`);
    }
    return { ok: problems.length === 0, kind: 'set', problems, migrations, locations, includesStaff };
  } finally {
    for (const db of Object.values(opened)) db.close();
  }
}

/** Written before a restore swaps the files in, removed after: still there means a restore was cut short. */
export const RESTORE_JOURNAL = 'restore-in-progress.json';

export function restoreJournalFile(dataDir: string): string {
  return path.join(dataDir, RESTORE_JOURNAL);
}

/** The restore that was cut short on this data folder, if any. */
export function interruptedRestore(dataDir: string): { from: string; startedAt: string } | null {
  try {
    const parsed = JSON.parse(fs.readFileSync(restoreJournalFile(dataDir), 'utf8')) as { from?: unknown; startedAt?: unknown };
    return { from: String(parsed.from), startedAt: String(parsed.startedAt) };
  } catch (err) {
    // Unreadable but present (cut short while writing it): still a restore that did not finish.
    return fs.existsSync(restoreJournalFile(dataDir)) ? { from: '(unknown)', startedAt: describeError(err) } : null;
  }
}

export interface RestoreResult {
  readonly restoredFrom: string;
  /** The live files as they were before the restore (itself a backup set; restore it to undo). */
  readonly previousSavedAs: string | null;
  readonly check: CandidateCheck;
}

/**
 * Replaces the agent's files with a checked backup. Refuses while an agent runs on the data folder
 * or another program (the till) holds pos-sync.db open, since swapping a file under an open
 * connection would corrupt what it sees. The live files are first saved beside the backups. The
 * restored agent resumes each location's chain from the restored ChangeSequence: updates delivered
 * since then are missing, so later deliveries wait as gaps (shown by `status`) until head office
 * resends the missing ones. A set without staff.db leaves the live staff cache as it is.
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
  const live = (kind: StoreFileKind): string => storeFilePath(config.dataDir, kind);
  if ([live('till'), live('agent'), path.resolve(config.dataDir)].includes(source)) throw new AppError('backup_refused', 422, 'that is the live data itself');
  let previousSavedAs: string | null = null;
  if (fs.existsSync(live('till')) && fs.existsSync(live('agent'))) {
    const current = openStore(config.dataDir);
    try {
      const dir = backupDir(config);
      makePrivateDir(dir);
      // The whole live set, staff cache included, under a name rotation never deletes.
      previousSavedAs = path.join(dir, `pre-restore-${stamp(now)}`);
      await writeBackupSet({ agent: current.agent, till: current.till, staff: current.staff }, previousSavedAs, now);
      for (const db of [current.till, current.agent, current.staff]) db.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      closeStore(current, { optimize: false });
    }
    // The last connection to close removes the WAL; if it is still there, someone else has the file open.
    if (fs.existsSync(`${live('till')}-wal`)) {
      throw new AppError('database_in_use', 409, `another program (the till?) has ${live('till')} open: close it and retry (the current files were saved as ${previousSavedAs})`);
    }
  }
  fs.mkdirSync(config.dataDir, { recursive: true });
  /** A backup file copied in full next to the live one (`*.restoring`), owner-only and on disk. */
  const stage = (from: string, kind: StoreFileKind): [staged: string, target: string] => {
    const target = live(kind);
    const incoming = `${target}.restoring`;
    fs.copyFileSync(from, incoming);
    // copyFile copies the source's mode; the live files are owner-only whatever the backup's was.
    makePrivateFile(incoming);
    fsyncPath(incoming);
    return [incoming, target];
  };
  // Every file is staged before any live file is touched, so the swaps run back to back; the journal
  // names the backup should the machine stop between two swaps (start-up refuses until the same
  // restore is run again, and `ops status` shows it).
  const incoming: [string, string][] =
    check.kind === 'single-file'
      ? [stage(source, 'till')]
      : [
          stage(path.join(source, AGENT_FILE), 'agent'),
          stage(path.join(source, TILL_FILE), 'till'),
          ...(check.includesStaff ? [stage(path.join(source, STAFF_FILE), 'staff')] : []),
        ];
  const journal = restoreJournalFile(config.dataDir);
  fs.writeFileSync(journal, `${JSON.stringify({ from: source, startedAt: now.toISOString() })}\n`, { mode: 0o600 });
  fsyncPath(journal);
  for (const [staged, target] of incoming) {
    for (const sidecar of ['-wal', '-shm']) fs.rmSync(`${target}${sidecar}`, { force: true });
    fs.renameSync(staged, target);
  }
  if (check.kind === 'single-file') {
    // A 0.1 backup: it becomes the till file again and the next open splits it into the three files.
    for (const kind of ['agent', 'staff'] as const) for (const suffix of ['', '-wal', '-shm']) fs.rmSync(`${live(kind)}${suffix}`, { force: true });
  }
  fsyncPath(config.dataDir);
  fs.rmSync(journal, { force: true });
  fsyncPath(config.dataDir);
  // Bring the files to this build's schema (splitting a 0.1 file) and record who restored what.
  const store = openStore(config.dataDir);
  try {
    store.agent.prepare('INSERT INTO audit_log (at, actor, action, details) VALUES (?, ?, ?, ?)').run(
      now.toISOString(),
      operatorName(),
      'restore',
      JSON.stringify({ from: source, kind: check.kind, previousSavedAs, locations: check.locations, includesStaff: check.includesStaff }),
    );
  } finally {
    closeStore(store, { optimize: false });
  }
  for (const kind of ['till', 'agent', 'staff'] as const) if (fs.existsSync(live(kind))) makePrivateFile(live(kind));
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
    const core = this.agent?.core;
    if (!core?.isOpen) return null;
    const sources = { agent: core.agentDb, till: core.tillDb, staff: this.config.backup.includeStaff ? core.staffDb : null };
    this.running = backupDatabase(sources, backupDir(this.config), this.config.backup.keep, this.clock())
      .then((b) => {
        this.lastError = null;
        this.log.info(`backup written: ${b.file} (${b.bytes} bytes${this.config.backup.includeStaff ? ', staff cache included' : ''})`);
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

/** A folder of one set the agent wrote: a routine set or the live set saved before a restore. */
const SET_FOLDER = new RegExp(`^(?:backup|pre-restore)-${STAMP}(?:\\.partial)?$`);
/** A file the agent wrote that holds 0.1's whole single file, staff tables included. */
const LEGACY_FILE = new RegExp(`^(?:pos-sync|pre-0\\.2-split)-${STAMP}\\.db$`);

export interface StaffCopiesPurged {
  /** Sets (routine or pre-restore, or one left half-written by a crash) whose staff.db was deleted. */
  readonly sets: string[];
  /** 0.1 single files (routine backups of 0.1, or the copy kept by the 0.2 upgrade) whose staff tables were emptied. */
  readonly legacyFiles: string[];
  /** Copies that could not be purged (a file another program holds, no permission...), with why: purge them by hand. */
  readonly failed: { readonly file: string; readonly error: string }[];
}

/**
 * `staff purge` deletes the live cache; this deletes the copies the agent itself made of it, so that
 * "purged" means gone from the agent's folders (docs/staff.md, "Personal data"): a set's staff.db
 * (kept when backup.includeStaff is on, and always in the `pre-restore-*` set a restore saves), and
 * the staff tables of 0.1 single files (0.1's routine backups and the `pre-0.2-split-*.db` copy of
 * the upgrade). The menu and inbox in them stay restorable: a set without staff.db restores without
 * touching the live cache, and a 0.1 file's staff tables are simply empty. Only names the agent
 * writes are touched; copies made by other programs are not the agent's to find.
 */
export function purgeStaffCopies(folders: readonly string[]): StaffCopiesPurged {
  const sets: string[] = [];
  const legacyFiles: string[] = [];
  const failed: { file: string; error: string }[] = [];
  for (const dir of [...new Set(folders.map((f) => path.resolve(f)))]) {
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names.sort()) {
      const entry = path.join(dir, name);
      // One copy that cannot be purged (another program holds it, or rotation deleted it meanwhile)
      // does not stop the others; it is reported.
      try {
        if (SET_FOLDER.test(name)) {
          const staffFile = path.join(entry, STAFF_FILE);
          if (!fs.existsSync(staffFile)) continue;
          // The manifest first: a purge cut short leaves a set whose manifest already disowns staff.db, and the next purge deletes the file.
          rewriteManifestWithoutStaff(path.join(entry, MANIFEST));
          for (const file of [staffFile, `${staffFile}-wal`, `${staffFile}-shm`, `${staffFile}-journal`]) fs.rmSync(file, { force: true });
          fsyncPath(entry);
          sets.push(entry);
        } else if (LEGACY_FILE.test(name) && emptyLegacyStaffTables(entry)) {
          legacyFiles.push(entry);
        }
      } catch (err) {
        if (fs.existsSync(entry)) failed.push({ file: entry, error: describeError(err) });
      }
    }
  }
  return { sets, legacyFiles, failed };
}

function rewriteManifestWithoutStaff(file: string): void {
  let manifest: { files?: { kind?: string }[]; includesStaff?: boolean; staffPurgedAt?: string };
  try {
    manifest = JSON.parse(fs.readFileSync(file, 'utf8')) as typeof manifest;
  } catch {
    // A half-written set has none, and a set without a readable manifest is still checked file by file on restore.
    return;
  }
  manifest.files = (manifest.files ?? []).filter((f) => f.kind !== 'staff');
  manifest.includesStaff = false;
  manifest.staffPurgedAt = new Date().toISOString();
  const partial = `${file}.partial`;
  fs.writeFileSync(partial, `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
  fsyncPath(partial);
  fs.renameSync(partial, file);
}

/** Empties a 0.1 file's staff tables and rebuilds it so no free page keeps their rows; false when it holds none. */
function emptyLegacyStaffTables(file: string): boolean {
  const db = new Database(file, { fileMustExist: true });
  try {
    db.pragma('synchronous = FULL');
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'staff\\_%' ESCAPE '\\'").all() as { name: string }[]).map((t) => t.name);
    const rows = tables.reduce((n, t) => n + (db.prepare(`SELECT count(*) AS n FROM "${t}"`).get() as { n: number }).n, 0);
    if (rows === 0) return false;
    db.pragma('secure_delete = ON');
    const stat4 = tableExists(db, 'sqlite_stat4');
    db.transaction(() => {
      for (const t of tables) db.prepare(`DELETE FROM "${t}"`).run();
      // ANALYZE's samples of index keys (names among them), where SQLite was built with STAT4.
      if (stat4) db.prepare("DELETE FROM sqlite_stat4 WHERE tbl LIKE 'staff\\_%' ESCAPE '\\'").run();
    })();
    db.exec('VACUUM');
    return true;
  } finally {
    db.close();
  }
}

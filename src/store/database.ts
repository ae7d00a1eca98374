import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { AppError } from '../errors';
import { AGENT_MIGRATIONS, STAFF_MIGRATIONS, TILL_MIGRATIONS, type Migration } from './migrations';

export type Db = Database.Database;

const preparedByConnection = new WeakMap<Db, Map<string, Database.Statement>>();

/**
 * The statement for `sql` on this connection, prepared on first use and kept with the connection.
 * For code that runs per apply, per drain or per poll outside a class that holds its statements: a
 * statement prepared on each call keeps its native memory until V8 happens to collect its small
 * wrapper, so a long backlog would grow the process with every call
 * (test/integration/prepared-statements.test.ts guards it; docs/performance.md).
 */
export function preparedStatement<P extends unknown[] | object = unknown[], R = unknown>(db: Db, sql: string): Database.Statement<P, R> {
  let statements = preparedByConnection.get(db);
  if (!statements) {
    statements = new Map();
    preparedByConnection.set(db, statements);
  }
  let statement = statements.get(sql);
  if (!statement) {
    statement = db.prepare(sql);
    statements.set(sql, statement);
  }
  return statement as unknown as Database.Statement<P, R>;
}

/**
 * The agent keeps three SQLite files in its data folder, one per trust boundary (docs/operations.md):
 * - pos-sync.db: the till's file: the POS contract only (menu rows, views, applied sequence);
 * - agent.db: inbox, deliveries, quarantine, warnings, audit log, operations state (owner-only);
 * - staff.db: the staff cache, personal data (owner-only, left out of routine backups by default).
 */
export const TILL_FILE = 'pos-sync.db';
export const AGENT_FILE = 'agent.db';
export const STAFF_FILE = 'staff.db';
/** The till's file keeps the 0.1 name so existing till set-ups keep working. */
export const DATABASE_FILE = TILL_FILE;

export type StoreFileKind = 'till' | 'agent' | 'staff';

export const STORE_FILES: Readonly<Record<StoreFileKind, string>> = { till: TILL_FILE, agent: AGENT_FILE, staff: STAFF_FILE };

export const MIGRATIONS_FOR: Readonly<Record<StoreFileKind, readonly Migration[]>> = {
  till: TILL_MIGRATIONS,
  agent: AGENT_MIGRATIONS,
  staff: STAFF_MIGRATIONS,
};

/** The till's file (the one a POS opens). */
export function databasePath(dataDir: string): string {
  return path.join(dataDir, TILL_FILE);
}

export function storeFilePath(dataDir: string, kind: StoreFileKind): string {
  return path.join(dataDir, STORE_FILES[kind]);
}

/**
 * Page cache of each agent.db connection, in KiB (SQLite as better-sqlite3 builds it keeps a far
 * larger one). agent.db's large traffic is bodies streamed through once, in chunks (store/bodies.ts),
 * when a delivery is stored and when it is applied; a cache cannot speed that up, and three full ones
 * (the webhook's thread, the main thread, the applier thread) held pages nobody would read again. Its small
 * rows and indexes fit well within this.
 */
export const AGENT_DB_CACHE_KIB = 2048;

/**
 * Page cache of each writer connection to pos-sync.db, in KiB. The range rows arrive in key order, so
 * the indexes' pages are visited in order and the cache need not hold a whole index; this size keeps a
 * margin for menus with less orderly keys, and an update that overlays existing ranges reads them
 * through it (`npm run bench` weighs the apply against a plain insert).
 */
export const TILL_DB_CACHE_KIB = 8192;

/** How long a writer connection waits for another connection's lock before SQLite gives up with SQLITE_BUSY. */
export const WRITER_BUSY_TIMEOUT_MS = 10_000;

/**
 * What a writer connection does with the file's journal: `wal` puts it in WAL mode; `keep` leaves the
 * mode the file has (a new, empty file is put in WAL mode).
 */
export type WriterJournal = 'wal' | 'keep';

/**
 * Connection settings for a writer. synchronous=FULL (better-sqlite3 leaves SQLite's WAL default of
 * NORMAL, which can lose the last commits on power loss) makes a COMMIT durable before we answer 200.
 *
 * WAL lets the till read while we write. openDatabase puts agent.db and staff.db in WAL mode (`wal`).
 * The till's file, and any file another caller configures (`compact`), keeps its mode (`keep`, the
 * default): for the till's file the agent decides it, WAL from its start and a rollback journal at a
 * clean stop when another account's till reads the file (src/ops/private-files.ts,
 * till.readerGroup), so a command run while no agent runs leaves the file as that till can read it.
 */
export function configureWriter(db: Db, options: { autoCheckpoint?: boolean; journal?: WriterJournal } = {}): void {
  // First: every statement below, a switch to WAL included, then waits for another connection's lock
  // instead of failing with "database is locked".
  db.pragma(`busy_timeout = ${WRITER_BUSY_TIMEOUT_MS}`);
  if (options.journal === 'wal' || db.pragma('page_count', { simple: true }) === 0) db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  // Let the WAL be checkpointed back regularly so readers do not slow down on a long WAL. The
  // receiver's connection turns this off: a checkpoint after a large body would run on the HTTP event
  // loop; the applier's thread checkpoints agent.db instead (src/sync/applier.ts).
  db.pragma(`wal_autocheckpoint = ${options.autoCheckpoint === false ? 0 : 1000}`);
  db.pragma('journal_size_limit = 67108864');
}

export interface OpenOptions {
  /** Run missing migrations (the agent does; read-only tools do not). */
  migrate?: boolean;
  /** Which file this is (decides the migrations); default the till's. */
  kind?: StoreFileKind;
  /** Migrations to use instead of the kind's (tests of the refusal path). */
  migrations?: readonly Migration[];
  /** See configureWriter. */
  autoCheckpoint?: boolean;
}

/** Opens (creating if needed) one of the agent's files, migrated to this build's schema. */
export function openDatabase(file: string, options: OpenOptions = {}): Db {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file);
  try {
    const kind = options.kind ?? 'till';
    configureWriter(db, { journal: kind === 'till' ? 'keep' : 'wal', ...(options.autoCheckpoint === undefined ? {} : { autoCheckpoint: options.autoCheckpoint }) });
    if (kind === 'agent') db.pragma(`cache_size = -${AGENT_DB_CACHE_KIB}`);
    if (kind === 'till') db.pragma(`cache_size = -${TILL_DB_CACHE_KIB}`);
    migrate(db, options.migrations ?? MIGRATIONS_FOR[kind], options.migrate ?? true, path.basename(file));
    if (kind === 'till' && options.migrate !== false) dropIndexSamples(db);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

/**
 * Removes ANALYZE's samples of index keys (sqlite_stat4) from a file, keeping its summary statistics
 * (sqlite_stat1, which the till's lookups need). With samples present, SQLite plans a prepared
 * statement again whenever a value bound to a sampled column changes: every till lookup by another
 * PLU was parsed and planned anew, measurably slower on the L menu (docs/performance.md). The
 * agent's own `PRAGMA optimize` gathers no samples; a full
 * `ANALYZE` run by hand does, so the till's file is checked each time a writer opens it. Returns how
 * many samples it removed (usually none, and then it writes nothing; also none when another
 * connection holds the write lock or the file is read-only for this user).
 */
export function dropIndexSamples(db: Db): number {
  if (!tableExists(db, 'sqlite_stat4') || db.prepare('SELECT 1 FROM sqlite_stat4 LIMIT 1').get() === undefined) return 0;
  // Best effort, and never a wait: a command opening the file while the applier writes (or a user who
  // may not write it) leaves the samples for the next open rather than waiting for the lock or failing.
  const busyTimeout = db.pragma('busy_timeout', { simple: true }) as number;
  db.pragma('busy_timeout = 0');
  try {
    const removed = db.prepare('DELETE FROM sqlite_stat4').run().changes;
    // Reload the statistics this connection plans with (the others reload at their next schema change or open).
    db.exec('ANALYZE sqlite_schema');
    return removed;
  } catch (err) {
    if (isBusyError(err) || sqliteCode(err).startsWith('SQLITE_READONLY')) return 0;
    throw err;
  } finally {
    db.pragma(`busy_timeout = ${busyTimeout}`);
  }
}

export function tableExists(db: Db, name: string, schema = 'main'): boolean {
  return db.prepare(`SELECT 1 FROM ${schema}.sqlite_master WHERE type = 'table' AND name = ?`).get(name) !== undefined;
}

function sqliteCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

/** SQLite said another connection holds the lock it needs (SQLITE_BUSY or SQLITE_LOCKED, any extended code). */
export function isBusyError(err: unknown): boolean {
  const code = sqliteCode(err);
  return code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED');
}

/** A read-only connection, as the till would open it. */
export function openReadOnly(file: string): Db {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  // Every connection runs with FULL (test/faults/synchronous.test.ts asserts it); a reader never commits,
  // but this keeps one rule with no exceptions to reason about.
  db.pragma('synchronous = FULL');
  return db;
}

export function appliedMigrations(db: Db): { version: number; name: string; applied_at: string }[] {
  if (!tableExists(db, 'schema_migrations')) return [];
  return db.prepare('SELECT version, name, applied_at FROM schema_migrations ORDER BY version').all() as {
    version: number;
    name: string;
    applied_at: string;
  }[];
}

/**
 * Refuses a database that has migrations this build does not know: it was written by a newer agent,
 * and writing to it with older code could corrupt what the newer one relies on. Writes nothing.
 */
export function refuseNewerDatabase(db: Db, migrations: readonly Migration[], fileName: string): void {
  const known = new Map(migrations.map((m) => [m.version, m]));
  const unknown = appliedMigrations(db).filter((d) => known.get(d.version)?.name !== d.name);
  if (unknown.length > 0) {
    throw new AppError(
      'database_newer_than_agent',
      500,
      `${fileName} has migrations this agent does not know (${unknown.map((u) => `${u.version}-${u.name}`).join(', ')}); ` +
        'it was written by a newer version: install that version, or restore a backup made by this one',
    );
  }
}

/**
 * Applies each missing migration in its own transaction and records it, after refusing a database a
 * newer agent wrote (refuseNewerDatabase).
 */
export function migrate(db: Db, migrations: readonly Migration[] = TILL_MIGRATIONS, apply = true, fileName = TILL_FILE): void {
  // Not STRICT: the till's file must stay readable by SQLite builds older than 3.37.
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`);
  refuseNewerDatabase(db, migrations, fileName);
  const done = appliedMigrations(db);
  if (!apply) return;
  const doneVersions = new Set(done.map((d) => d.version));
  for (const migration of migrations) {
    if (doneVersions.has(migration.version)) continue;
    db.transaction(() => {
      db.exec(migration.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
        migration.version,
        migration.name,
        new Date().toISOString(),
      );
    }).immediate();
  }
}

import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { AppError } from '../errors';
import { MIGRATIONS, type Migration } from './migrations';

export type Db = Database.Database;

export const DATABASE_FILE = 'pos-sync.db';

export function databasePath(dataDir: string): string {
  return path.join(dataDir, DATABASE_FILE);
}

/**
 * Connection settings for the one writer. WAL lets the till read while we write; synchronous=FULL
 * (better-sqlite3 leaves SQLite's WAL default of NORMAL, which can lose the last commits on power
 * loss) makes a COMMIT durable before we answer 200.
 */
export function configureWriter(db: Db): void {
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 10000');
  // Let the WAL be checkpointed back regularly so readers do not slow down on a long WAL.
  db.pragma('wal_autocheckpoint = 1000');
  db.pragma('journal_size_limit = 67108864');
}

export interface OpenOptions {
  /** Run missing migrations (the agent does; read-only tools do not). */
  migrate?: boolean;
  /** Extra migrations for tests of the refusal path. */
  migrations?: readonly Migration[];
}

/** Opens (creating if needed) the agent's database, migrated to this build's schema. */
export function openDatabase(file: string, options: OpenOptions = {}): Db {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file);
  try {
    configureWriter(db);
    migrate(db, options.migrations ?? MIGRATIONS, options.migrate ?? true);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
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
  const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
  if (!exists) return [];
  return db.prepare('SELECT version, name, applied_at FROM schema_migrations ORDER BY version').all() as {
    version: number;
    name: string;
    applied_at: string;
  }[];
}

/**
 * Applies each missing migration in its own transaction and records it. Refuses a database that has
 * migrations this build does not know: it was written by a newer agent, and writing to it with older
 * code could corrupt what the newer one relies on.
 */
export function migrate(db: Db, migrations: readonly Migration[] = MIGRATIONS, apply = true): void {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT`);
  const known = new Map(migrations.map((m) => [m.version, m]));
  const done = appliedMigrations(db);
  const unknown = done.filter((d) => known.get(d.version)?.name !== d.name);
  if (unknown.length > 0) {
    throw new AppError(
      'database_newer_than_agent',
      500,
      `the database has migrations this agent does not know (${unknown.map((u) => `${u.version}-${u.name}`).join(', ')}); ` +
        'it was written by a newer version: install that version, or restore a backup made by this one',
    );
  }
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

import fs from 'node:fs';
import Database from 'better-sqlite3';
import { cliCommand } from '../config/invocation';
import { AppError } from '../errors';
import { appVersion } from '../version';
import { appliedMigrations, MIGRATIONS_FOR, refuseNewerDatabase, STORE_FILES, storeFilePath, type Db, type StoreFileKind } from './database';
import { isLegacySingleFile } from './split';

/**
 * Who upgrades a data folder an older version left (docs/operations.md, "Upgrade"): the agent when it
 * starts (`serve`, the service, the desktop app) and `restore`, which rebuilds the folder. Every other
 * command refuses such a folder and changes nothing, so that an installer who checks with `status`
 * that the old agent stopped (or runs one of the new version's commands while it still runs) does not
 * commit the site to the new version: once migrated, the older version refuses the folder.
 */

/** One of the data folder's files that this build would have to migrate (or split) before using it. */
export interface OlderStoreFile {
  readonly kind: StoreFileKind;
  /** Its name in the data folder (`agent.db`). */
  readonly name: string;
  /** This build's migrations it does not have yet, as `version-name`. */
  readonly missing: readonly string[];
  /** 0.1's single file, which the agent's start splits into the three files. */
  readonly legacySingleFile: boolean;
}

/**
 * A connection that reads a file and leaves it, and the folder, as they were. A read-only connection
 * to a WAL file with no `-wal` beside it creates `-wal` and `-shm` and leaves them behind (it may not
 * remove them); a writable one with `query_only` removes them again when it closes as the last
 * connection, and writes nothing else (no journal-mode change, no checkpoint of an empty WAL). When a
 * `-wal` is there (an agent runs, or one stopped without its last checkpoint), a read-only connection
 * uses it as it is.
 */
function openUnchanged(file: string): Db {
  const walThere = fs.existsSync(`${file}-wal`);
  const db = new Database(file, { fileMustExist: true, readonly: walThere, timeout: 5_000 });
  try {
    // Never commits; the one rule for every connection (test/faults/synchronous.test.ts).
    db.pragma('synchronous = FULL');
    if (!walThere) db.pragma('query_only = ON');
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

/**
 * The data folder's files this build would migrate before using them, read without creating or
 * changing anything (no file, no `schema_migrations` row, no journal mode). A missing or empty file is
 * not listed (opening it makes a new one). Throws `database_newer_than_agent` for a file a newer
 * version wrote, as opening it would.
 */
export function olderStoreFiles(dataDir: string): OlderStoreFile[] {
  const older: OlderStoreFile[] = [];
  for (const kind of ['till', 'agent', 'staff'] as const) {
    const file = storeFilePath(dataDir, kind);
    if (!fs.existsSync(file) || fs.statSync(file).size === 0) continue;
    const name = STORE_FILES[kind];
    const db = openUnchanged(file);
    try {
      if (kind === 'till' && isLegacySingleFile(db)) {
        older.push({ kind, name, missing: [], legacySingleFile: true });
        continue;
      }
      // A file with no table at all is one an open began and never migrated: opening it makes it new.
      if (db.prepare('SELECT 1 FROM sqlite_master LIMIT 1').get() === undefined) continue;
      const migrations = MIGRATIONS_FOR[kind];
      refuseNewerDatabase(db, migrations, name);
      const applied = new Set(appliedMigrations(db).map((m) => m.version));
      const missing = migrations.filter((m) => !applied.has(m.version)).map((m) => `${m.version}-${m.name}`);
      if (missing.length > 0) older.push({ kind, name, missing, legacySingleFile: false });
    } finally {
      db.close();
    }
  }
  return older;
}

/**
 * The refusal of a command on a folder an older version left (`site_not_upgraded`, as for an unsplit
 * 0.1 folder: cli/site-check.ts). `note` adds what the caller knows (an agent running on it).
 */
export function olderDataError(dataDir: string, files: readonly OlderStoreFile[], note = ''): AppError {
  const what = files
    .map((f) => (f.legacySingleFile ? `${f.name} is 0.1's single file, to be split` : `${f.name} needs migration${f.missing.length === 1 ? '' : 's'} ${f.missing.join(', ')}`))
    .join('; ');
  return new AppError(
    'site_not_upgraded',
    409,
    `${dataDir} was last used by an older version of the agent (${what}; this is ${appVersion()}). ` +
      `Start the agent (${cliCommand('serve')}, or the service) to upgrade it first, or use the older version's commands; nothing was changed.` +
      (note ? ` ${note}` : ''),
    { dataDir, files: files.map((f) => ({ file: f.name, missing: f.missing, legacySingleFile: f.legacySingleFile })) },
  );
}

/** Throws olderDataError when the folder has files this build would migrate; reads only (olderStoreFiles). */
export function refuseOlderData(dataDir: string, note = ''): void {
  const older = olderStoreFiles(dataDir);
  if (older.length > 0) throw olderDataError(dataDir, older, note);
}

import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { AGENT_FILE, migrate, STAFF_FILE, tableExists, TILL_FILE, type Db } from './database';
import { AGENT_MIGRATIONS, STAFF_MIGRATIONS, TILL_MIGRATIONS } from './migrations';
import * as till001 from '../till/migrations/001-contract';
import { syncFile, syncFolder } from './fsync';

/**
 * The one-time move from 0.1's single file to the three files of 0.2 (docs/operations.md, "Upgrading
 * from 0.1"). Run on the first start of 0.2, before anything else opens the data folder.
 *
 * Nothing is lost, and a crash at any instant is safe:
 * 1. The whole 0.1 file is copied (VACUUM INTO) to backups/pre-0.2-split-<time>.db first.
 * 2. agent.db and staff.db are built under temporary names from the 0.1 file and renamed into place
 *    only when complete. While the till's file still has the 0.1 layout, nothing newer exists, so a
 *    restart after a crash here simply builds them again.
 * 3. The till's file is rewritten in place in one transaction (it keeps its name and inode, so a till
 *    holding it open, even on Windows, is not disturbed): the menu tables are recreated without STRICT,
 *    and the inbox, audit and staff tables are dropped.
 * 4. secure_delete and a VACUUM make sure no page of the file still holds the dropped personal data.
 */

const LEGACY_AGENT_TABLES = ['inbox', 'deliveries', 'quarantine', 'update_warnings', 'audit_log'] as const;
const LEGACY_STAFF_TABLES = [
  'staff_employees',
  'staff_employments',
  'staff_divisions',
  'staff_sources',
  'staff_locations',
  'staff_accrual',
  'staff_submitted_residency',
  'staff_sync_state',
] as const;
const LEGACY_VIEWS = ['pos_prices', 'pos_availability', 'pos_prices_today', 'pos_availability_today', 'pos_sync_state'] as const;
const LEGACY_MENU_TABLES = ['items', 'price_ranges', 'availability_ranges', 'locations'] as const;

export interface SplitReport {
  readonly backupFile: string;
  readonly inboxRows: number;
  readonly staffEmployees: number;
  readonly priceRanges: number;
}

/** True when the file has 0.1's single-file layout (its migration 1 is 'core' and it holds the inbox). */
export function isLegacySingleFile(db: Db): boolean {
  if (!tableExists(db, 'schema_migrations') || !tableExists(db, 'inbox')) return false;
  const first = db.prepare('SELECT name FROM schema_migrations WHERE version = 1').get() as { name: string } | undefined;
  return first?.name === 'core';
}

function columnsOf(db: Db, schema: string, table: string): string[] {
  return (db.prepare(`PRAGMA ${schema}.table_info("${table}")`).all() as { name: string }[]).map((c) => c.name);
}

/** Copies every column the two tables share (the 0.1 table may lack columns added since). */
function copyTable(db: Db, table: string, into = table): number {
  const target = new Set(columnsOf(db, 'main', into));
  const shared = columnsOf(db, 'legacy', table).filter((c) => target.has(c));
  const list = shared.map((c) => `"${c}"`).join(', ');
  return db.prepare(`INSERT INTO main."${into}" (${list}) SELECT ${list} FROM legacy."${table}"`).run().changes;
}

function removeWithSidecars(file: string): void {
  for (const f of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) fs.rmSync(f, { force: true });
}

/** Builds one of the new owner-only files from the 0.1 file, under a temporary name, then renames it in. */
function buildFromLegacy(legacyFile: string, target: string, build: (db: Db) => void, migrations: Parameters<typeof migrate>[1]): void {
  const partial = `${target}.partial`;
  removeWithSidecars(partial);
  const db = new Database(partial);
  try {
    // DELETE journal while building: one self-contained file to rename; WAL is switched on when the agent opens it.
    db.pragma('journal_mode = DELETE');
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = OFF');
    migrate(db, migrations, true, path.basename(target));
    db.prepare('ATTACH DATABASE ? AS legacy').run(legacyFile);
    db.transaction(() => build(db)).immediate();
    db.exec('DETACH DATABASE legacy');
  } finally {
    db.close();
  }
  syncFile(partial);
  removeWithSidecars(target);
  fs.renameSync(partial, target);
  syncFolder(path.dirname(target));
}

/** Where the upgrade keeps 0.1's whole file (`pre-0.2-split-<time>.db`): always here, whatever backup.dir says. */
export function legacySplitBackupDir(dataDir: string): string {
  return path.join(dataDir, 'backups');
}

/**
 * Splits a 0.1 data folder if its till file still has the single-file layout; returns null when there
 * is nothing to do (a new folder, or one already split).
 */
export function splitLegacyIfNeeded(dataDir: string, now: Date = new Date()): SplitReport | null {
  const tillFile = path.join(dataDir, TILL_FILE);
  if (!fs.existsSync(tillFile)) return null;
  const till = new Database(tillFile);
  try {
    till.pragma('busy_timeout = 10000');
    till.pragma('synchronous = FULL');
    if (!isLegacySingleFile(till)) return null;
    // 1. The whole 0.1 file, as it is, before anything changes.
    const backups = legacySplitBackupDir(dataDir);
    fs.mkdirSync(backups, { recursive: true });
    const backupFile = path.join(backups, `pre-0.2-split-${now.toISOString().replace(/[-:.]/g, '')}.db`);
    fs.rmSync(backupFile, { force: true });
    till.prepare('VACUUM INTO ?').run(backupFile);
    syncFile(backupFile);

    // 2. agent.db and staff.db, complete or not at all.
    let inboxRows = 0;
    buildFromLegacy(
      tillFile,
      path.join(dataDir, AGENT_FILE),
      (db) => {
        for (const table of LEGACY_AGENT_TABLES) {
          const n = copyTable(db, table);
          if (table === 'inbox') {
            inboxRows = n;
            // 0.2 keeps the bytes apart from the row (inbox_bodies), so a state change never rewrites them.
            db.exec('INSERT INTO main.inbox_bodies (inbox_id, chunk, body) SELECT id, 0, body FROM legacy.inbox WHERE body IS NOT NULL');
            db.exec('UPDATE main.inbox SET body_kept = 0 WHERE id IN (SELECT id FROM legacy.inbox WHERE body IS NULL)');
          }
        }
        db.exec(`INSERT INTO main.known_locations (location_id, location_name, first_seen_at)
                 SELECT location_id, location_name, first_seen_at FROM legacy.locations`);
        db.prepare('INSERT INTO main.audit_log (at, actor, action, details) VALUES (?, ?, ?, ?)').run(
          now.toISOString(),
          'pos-sync-agent',
          'split-data-files',
          JSON.stringify({ from: TILL_FILE, backup: path.basename(backupFile) }),
        );
      },
      AGENT_MIGRATIONS,
    );
    let staffEmployees = 0;
    buildFromLegacy(
      tillFile,
      path.join(dataDir, STAFF_FILE),
      (db) => {
        for (const table of LEGACY_STAFF_TABLES) {
          if (!tableExists(db, table, 'legacy')) continue;
          const n = copyTable(db, table);
          if (table === 'staff_employees') staffEmployees = n;
        }
      },
      STAFF_MIGRATIONS,
    );

    // 3. The till's file, in place, in one transaction.
    till.pragma('secure_delete = ON');
    till.pragma('foreign_keys = OFF');
    let priceRanges = 0;
    till
      .transaction(() => {
        for (const view of LEGACY_VIEWS) till.exec(`DROP VIEW IF EXISTS ${view}`);
        // Indexes keep their names through a rename; drop them so the new tables can take the names.
        const indexes = till
          .prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN (${LEGACY_MENU_TABLES.map(() => '?').join(', ')})`)
          .all(...LEGACY_MENU_TABLES) as { name: string }[];
        for (const { name } of indexes) till.exec(`DROP INDEX "${name}"`);
        for (const table of LEGACY_MENU_TABLES) till.exec(`ALTER TABLE ${table} RENAME TO legacy_${table}`);
        till.exec('DROP TABLE schema_migrations');
        till.exec(till001.sql);
        till.exec(`INSERT INTO items (location_id, item_id, plu, item_name, item_type, updated_by)
                   SELECT location_id, item_id, plu, item_name, item_type, updated_by FROM legacy_items ORDER BY rowid`);
        priceRanges = till
          .prepare(`INSERT INTO price_ranges (id, location_id, item_id, tariff_name, date_from, date_to, price_model, tax_code, tax_rate,
                                              sell_price_minor, sell_price, currency, source_inbox_id)
                    SELECT id, location_id, item_id, tariff_name, date_from, date_to, price_model, tax_code, tax_rate,
                           sell_price_minor, sell_price, currency, source_inbox_id FROM legacy_price_ranges`)
          .run().changes;
        till.exec(`INSERT INTO availability_ranges (id, location_id, item_id, meal_period, date_from, date_to, status, source_inbox_id)
                   SELECT id, location_id, item_id, meal_period, date_from, date_to, status, source_inbox_id FROM legacy_availability_ranges`);
        till.exec(`INSERT INTO locations (location_id, location_name, currency, last_change_sequence, last_applied_at, waiting_updates, warnings)
                   SELECT l.location_id, l.location_name, l.currency, l.last_change_sequence, l.last_applied_at,
                          (SELECT count(*) FROM inbox w WHERE w.location_id = l.location_id AND w.state = 'pending'),
                          (SELECT count(*) FROM update_warnings u WHERE u.location_id = l.location_id AND u.acknowledged_at IS NULL)
                   FROM legacy_locations l`);
        till.exec(`INSERT INTO applied_updates (inbox_id, location_id, change_sequence, applied_at, apply_ms, baseline, forced, rows_written)
                   SELECT id, location_id, change_sequence, applied_at, coalesce(apply_ms, 0), baseline, forced, 0
                   FROM inbox WHERE state = 'applied' AND applied_at IS NOT NULL`);
        for (const table of LEGACY_MENU_TABLES) till.exec(`DROP TABLE legacy_${table}`);
        // Children first (update_warnings and deliveries refer to inbox).
        for (const table of ['update_warnings', 'deliveries', 'inbox', 'quarantine', 'audit_log', ...LEGACY_STAFF_TABLES]) {
          till.exec(`DROP TABLE IF EXISTS ${table}`);
        }
        migrate(till, [], true, TILL_FILE);
        till.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
          TILL_MIGRATIONS[0]!.version,
          TILL_MIGRATIONS[0]!.name,
          now.toISOString(),
        );
      })
      .immediate();

    // 4. No free page keeps what was dropped (secure_delete zeroed them; VACUUM also gives the space back).
    till.exec('VACUUM');
    till.pragma('wal_checkpoint(TRUNCATE)');
    return { backupFile, inboxRows, staffEmployees, priceRanges };
  } finally {
    till.close();
  }
}

/** Opens nothing; used by tests and `diagnose` to tell which layout a file has. */
export function describeLayout(file: string): 'missing' | 'legacy-single-file' | 'split' {
  if (!fs.existsSync(file)) return 'missing';
  const db = new Database(file, { readonly: true });
  try {
    return isLegacySingleFile(db) ? 'legacy-single-file' : 'split';
  } finally {
    db.close();
  }
}


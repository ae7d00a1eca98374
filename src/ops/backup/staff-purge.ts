import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describeError } from '../../errors';
import { STAFF_FILE, tableExists, TILL_FILE } from '../../store/database';

import { fsyncPath, MANIFEST, STAMP } from './files';

/** Removing staff data from backups already written (`staff purge`), sets and 0.1 single files alike. */

/** A folder of one set the agent wrote: a routine set or the live set saved before a restore. */
const SET_FOLDER = new RegExp(`^(?:backup|pre-restore)-${STAMP}(?:\\.[0-9a-f]+)?(?:\\.partial)?$`);
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
          // A 0.1 data folder's one file, kept whole by a restore into it (ops/backup/restore.ts).
          const till = path.join(entry, TILL_FILE);
          if (fs.existsSync(till) && emptyLegacyStaffTables(till)) legacyFiles.push(till);
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

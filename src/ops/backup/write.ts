import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { AppError } from '../../errors';
import { AGENT_FILE, appliedMigrations, STAFF_FILE, TILL_FILE, type Db, type StoreFileKind } from '../../store/database';
import { makeNewDir, partialNameFor } from '../../files/exclusive-write';
import { makePrivateDir, makePrivateFile } from '../private-files';
import type { BackupFile } from '../states';

import { backupName, backupsToDelete, fsyncPath, listBackups, MANIFEST, sizeOf } from './files';
import { copyBodyFilesIntoSet } from './body-files';
import { checkSetConsistency } from './consistency';

/** Writing a backup set: online copies of each file, retaken until they agree, then renamed into place. */

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
 * One backup set into `folder` (built as `<folder>.<random>.partial`, renamed when complete). agent.db is
 * copied first, then pos-sync.db: an apply that commits between the two copies is in the till copy
 * with its inbox row still 'pending' in the agent.db copy, which is consistent (the restored agent
 * finishes it). The one case that is not (an update received *and* applied between the copies) is
 * found by checkSetConsistency, and the pair is taken again.
 */
export async function writeBackupSet(sources: BackupSources, folder: string, now: Date): Promise<void> {
  // backup.dir may be a folder others can write: built under an unguessable name, created new (never
  // an existing folder or a planted link to one), then renamed into place (files/exclusive-write.ts).
  const partial = partialNameFor(folder);
  try {
    const files: { file: string; db: Db; kind: StoreFileKind }[] = [
      { file: AGENT_FILE, db: sources.agent, kind: 'agent' },
      { file: TILL_FILE, db: sources.till, kind: 'till' },
      ...(sources.staff ? [{ file: STAFF_FILE, db: sources.staff, kind: 'staff' as const }] : []),
    ];
    let problems: string[] = [];
    for (let attempt = 1; attempt <= CONSISTENCY_ATTEMPTS; attempt++) {
      fs.rmSync(partial, { recursive: true, force: true });
      makeNewDir(partial);
      await copyOut(sources.agent, path.join(partial, AGENT_FILE));
      await copyOut(sources.till, path.join(partial, TILL_FILE));
      problems = checkSetConsistency(path.join(partial, TILL_FILE), path.join(partial, AGENT_FILE)).problems;
      if (problems.length === 0) break;
    }
    if (problems.length > 0) throw new AppError('backup_failed', 500, `the backup's files did not agree after ${CONSISTENCY_ATTEMPTS} attempts: ${problems.join('; ')}`);
    // The large payloads agent.db's copy names (files of their own beside it).
    copyBodyFilesIntoSet(path.dirname(sources.agent.name), partial);
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

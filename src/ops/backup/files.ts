import fs from 'node:fs';
import path from 'node:path';
import { syncFile, syncFolder } from '../../store/fsync';
import type { BackupFile } from '../states';

/**
 * A backup is a set: a folder `backup-<UTC timestamp>` holding agent.db and pos-sync.db (and staff.db
 * when backup.includeStaff), with a manifest. 0.1 wrote single files `pos-sync-<UTC timestamp>.db`;
 * they are still listed and restorable (the next start splits the restored file, src/store/split.ts).
 * Names sort by age.
 */
/** The UTC time in every name the agent gives a backup (see stamp). */
export const STAMP = String.raw`(\d{8}T\d{6}(?:\d{3})?Z)`;
const SET_NAME = new RegExp(`^backup-${STAMP}$`);
const SINGLE_FILE_NAME = new RegExp(`^pos-sync-${STAMP}\\.db$`);
export const MANIFEST = 'manifest.json';

export function stamp(at: Date): string {
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

export function sizeOf(file: string): number {
  const stat = fs.statSync(file);
  if (!stat.isDirectory()) return stat.size;
  // A set's bodies/ folder (large payloads) counts with it.
  return fs.readdirSync(file).reduce((sum, f) => sum + sizeOf(path.join(file, f)), 0);
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

/** Flushes a file, or a folder's entries, to the disk (src/store/fsync.ts: folders are skipped on Windows). */
export function fsyncPath(file: string): void {
  if (fs.statSync(file).isDirectory()) syncFolder(file);
  else syncFile(file);
}

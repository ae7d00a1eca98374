import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { BODY_FILES_FOLDER, bodyFilePath } from '../../store/body-files';
import { AGENT_FILE } from '../../store/database';
import { syncFile, syncFolder } from '../../store/fsync';
import { makeFolderStep, removeEmptyFolderStep, renameStep, type SwapStep } from './swap';

/**
 * Large payloads are files of their own beside agent.db (<dataDir>/bodies/, src/store/body-files.ts),
 * named by its inbox_body_files rows: a backup set and a restore carry them with agent.db. A body file
 * never changes once written (it is only created, then removed by retention), so a hard link is a
 * complete copy where the backup folder is on the same disk; elsewhere it is copied.
 */

/** The files a copy of agent.db names (none for a file older than agent.db migration 4). */
function namedFiles(agentFile: string): string[] {
  const db = new Database(agentFile, { readonly: true, fileMustExist: true });
  try {
    const has = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'inbox_body_files'").get();
    return has ? db.prepare<[], { file: string }>('SELECT file FROM inbox_body_files').all().map((r) => r.file) : [];
  } finally {
    db.close();
  }
}

/** Links `from` to `to`, or copies it where a link cannot be made (another disk); flushed either way. */
function linkOrCopy(from: string, to: string): void {
  try {
    fs.linkSync(from, to);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw err;
    fs.copyFileSync(from, to, fs.constants.COPYFILE_EXCL);
    syncFile(to);
  }
}

/**
 * Into a backup set being written (`setDir`, whose agent.db copy is complete): every body file that
 * copy names, from `liveDataDir`. A body retention removed since the copy was taken (only applied,
 * stale, superseded or conflicting ones are ever removed) is marked pruned in the copy, as it now is
 * in the live data.
 */
export function copyBodyFilesIntoSet(liveDataDir: string, setDir: string): number {
  const agentCopy = path.join(setDir, AGENT_FILE);
  const names = namedFiles(agentCopy);
  if (names.length === 0) return 0;
  const into = path.join(setDir, BODY_FILES_FOLDER);
  fs.mkdirSync(into, { recursive: true, mode: 0o700 });
  const gone: string[] = [];
  for (const name of names) {
    try {
      linkOrCopy(bodyFilePath(liveDataDir, name), bodyFilePath(setDir, name));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      gone.push(name);
    }
  }
  if (gone.length > 0) {
    const db = new Database(agentCopy);
    // The set's copy keeps its journal mode; its one write commits durably like every other.
    db.pragma('synchronous = FULL');
    try {
      const row = db.prepare<[string], { inbox_id: number }>('SELECT inbox_id FROM inbox_body_files WHERE file = ?');
      db.transaction(() => {
        for (const name of gone) {
          const id = row.get(name)?.inbox_id;
          if (id === undefined) continue;
          db.prepare('DELETE FROM inbox_body_files WHERE inbox_id = ?').run(id);
          db.prepare('DELETE FROM inbox_body_layout WHERE inbox_id = ?').run(id);
          db.prepare('UPDATE inbox SET body_kept = 0 WHERE id = ?').run(id);
        }
      })();
    } finally {
      db.close();
    }
    syncFile(agentCopy);
  }
  syncFolder(into);
  return names.length - gone.length;
}

/** The body files a set's agent.db names that its bodies/ folder lacks (a set is refused with any). */
export function missingBodyFiles(setDir: string): string[] {
  return namedFiles(path.join(setDir, AGENT_FILE)).filter((name) => !fs.existsSync(bodyFilePath(setDir, name)));
}

/**
 * Stages a set's body files beside the live folder (`<dataDir>/bodies.restoring`), before any live
 * file is touched; `bodyFileSwapSteps` puts them in place with the other files.
 */
export function stageBodyFiles(setDir: string | null, dataDir: string): string {
  const staged = path.join(dataDir, `${BODY_FILES_FOLDER}.restoring`);
  fs.rmSync(staged, { recursive: true, force: true });
  fs.mkdirSync(staged, { mode: 0o700 });
  if (setDir !== null) {
    for (const name of namedFiles(path.join(setDir, AGENT_FILE))) linkOrCopy(bodyFilePath(setDir, name), path.join(staged, name));
  }
  syncFolder(staged);
  return staged;
}

/** Where the live body files wait while a restore puts the set's in place; deleted once they are in. */
export const BODY_FILES_ASIDE = `${BODY_FILES_FOLDER}.replaced`;

/**
 * The restore's steps for the body files (swap.ts): every live one moved aside one by one (so a file
 * another program holds open is the step that fails, and is named), the emptied folder removed, and
 * then, in `into`, the staged folder renamed into its place.
 */
export function bodyFileSwapSteps(staged: string, dataDir: string): { aside: SwapStep[]; into: SwapStep[] } {
  const live = path.join(dataDir, BODY_FILES_FOLDER);
  const aside = path.join(dataDir, BODY_FILES_ASIDE);
  const into = [renameStep(staged, live)];
  if (!fs.existsSync(live)) return { aside: [], into };
  return {
    aside: [makeFolderStep(aside), ...fs.readdirSync(live).map((name) => renameStep(path.join(live, name), path.join(aside, name))), removeEmptyFolderStep(live)],
    into,
  };
}

/**
 * Deletes the body files a restore moved aside (or one cut short left). A file another program still
 * holds (Windows) stays, to go with the next restore: nothing reads that folder.
 */
export function removeAsideBodyFiles(dataDir: string): void {
  try {
    fs.rmSync(path.join(dataDir, BODY_FILES_ASIDE), { recursive: true, force: true });
  } catch {
    // Left for the next restore (see above).
  }
}

import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Config } from '../../config/schema';
import { operatorName } from '../../core';
import { AppError, describeError } from '../../errors';
import { silentLogger, type Logger } from '../../log';
import { AGENT_FILE, STAFF_FILE, storeFilePath, TILL_FILE, type StoreFileKind } from '../../store/database';
import { closeStore, openStore } from '../../store/store';
import { holdDataFolder } from '../instance';
import { applyTillReaderAccess, leaveTillFileReadable, makePrivateDir, makePrivateFile } from '../private-files';
import { backupDir } from '../paths';

import { fsyncPath, stamp } from './files';
import { writeBackupSet } from './write';
import { checkBackupFile, type CandidateCheck } from './candidate';
import { bodyFileSwapSteps, removeAsideBodyFiles, stageBodyFiles } from './body-files';
import { renameStep, runAllOrNothing, SwapRefused, SwapStuck, type SwapStep } from './swap';

/** Restoring a backup: the live set saved first, the files swapped in under a journal, under the data folder's lock. */

/** Written before a restore swaps the files in, removed after: still there means a restore was cut short. */
export const RESTORE_JOURNAL = 'restore-in-progress.json';

export function restoreJournalFile(dataDir: string): string {
  return path.join(dataDir, RESTORE_JOURNAL);
}

/** What a live file is renamed to while a restore replaces it; deleted once the restored files are in. */
const ASIDE_SUFFIX = '.replaced';

/** Error codes of a file another program holds (Windows: open without FILE_SHARE_DELETE, or a folder in use). */
const IN_USE = new Set(['EPERM', 'EBUSY', 'EACCES']);

/**
 * Every rename of the swap, in order (swap.ts): each live file it replaces (with its -wal and -shm)
 * aside as `*.replaced`, each live body file aside into `bodies.replaced/`, then the staged files and
 * the staged bodies/ folder into place. Windows refuses to rename a file another program has open (a
 * till, a backup or antivirus program reading pos-sync.db, a viewer on a body file): the renames done
 * are then undone, so the folder is as it was, never half restored. (POSIX renames an open file; the
 * restore's earlier -wal check is what finds a till there.)
 */
function swapSteps(replaced: readonly string[], staged: readonly (readonly [string, string])[], stagedBodies: string, dataDir: string): SwapStep[] {
  const aside: SwapStep[] = [];
  for (const file of replaced) {
    for (const name of [file, `${file}-wal`, `${file}-shm`]) if (fs.existsSync(name)) aside.push(renameStep(name, `${name}${ASIDE_SUFFIX}`));
  }
  const bodies = bodyFileSwapSteps(stagedBodies, dataDir);
  return [...aside, ...bodies.aside, ...staged.map(([from, to]) => renameStep(from, to)), ...bodies.into];
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
 * resends the missing ones. A set without staff.db leaves the live staff cache as it is. The restored
 * till's file is left as a stopped agent leaves it: readable by till.readerGroup (`log` tells), with a
 * rollback journal for that reader.
 */
export async function restoreDatabase(config: Readonly<Config>, candidate: string, now: Date = new Date(), log: Logger = silentLogger): Promise<RestoreResult> {
  const source = path.resolve(candidate);
  const check = checkBackupFile(source);
  if (!check.ok) throw new AppError('backup_refused', 422, `refusing to restore ${source}: ${check.problems.join('; ')}`);
  // Held to the end, so no agent can start on a half-restored folder.
  const lock = holdDataFolder(config.dataDir, 'restoring');
  try {
    return await restoreLocked(config, source, check, now, log);
  } finally {
    lock.release();
  }
}

async function restoreLocked(config: Readonly<Config>, source: string, check: CandidateCheck, now: Date, log: Logger): Promise<RestoreResult> {
  const live = (kind: StoreFileKind): string => storeFilePath(config.dataDir, kind);
  if ([live('till'), live('agent'), path.resolve(config.dataDir)].includes(source)) throw new AppError('backup_refused', 422, 'that is the live data itself');
  let previousSavedAs: string | null = null;
  if (fs.existsSync(live('till')) && fs.existsSync(live('agent'))) {
    // As they are: a folder an older version left is saved aside at its own schema, so that the
    // older version's restore can still take the copy (this restore upgrades what it puts in place).
    const current = openStore(config.dataDir, { migrate: false });
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
  } else if ((['till', 'agent', 'staff'] as const).some((kind) => fs.existsSync(live(kind)))) {
    // Files this version has not opened as a set yet: a 0.1 data folder not split (pos-sync.db alone,
    // which holds all of 0.1's data), or what is left of one. Each is kept whole, as it is, before
    // anything replaces it (a 0.1 file saved so is restored like a 0.1 backup).
    const dir = backupDir(config);
    makePrivateDir(dir);
    previousSavedAs = path.join(dir, `pre-restore-${stamp(now)}`);
    makePrivateDir(previousSavedAs);
    for (const kind of ['till', 'agent', 'staff'] as const) {
      if (!fs.existsSync(live(kind))) continue;
      const db = new Database(live(kind), { fileMustExist: true, timeout: 2_000 });
      try {
        // Only read here, but the one rule for every writable connection (test/faults/synchronous.test.ts).
        db.pragma('synchronous = FULL');
        await db.backup(path.join(previousSavedAs, path.basename(live(kind))));
      } finally {
        db.close();
      }
      makePrivateFile(path.join(previousSavedAs, path.basename(live(kind))));
      fsyncPath(path.join(previousSavedAs, path.basename(live(kind))));
    }
    fsyncPath(previousSavedAs);
    // A 0.1 folder's one file: named itself, as `restore` takes it back (a 0.1 backup is one file).
    const saved = fs.readdirSync(previousSavedAs);
    if (saved.length === 1 && saved[0] === path.basename(live('till'))) previousSavedAs = path.join(previousSavedAs, saved[0]);
    if (fs.existsSync(`${live('till')}-wal`)) {
      throw new AppError('database_in_use', 409, `another program (the till?) has ${live('till')} open: close it and retry (the current files were saved in ${previousSavedAs})`);
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
  // The set's large payloads (files beside agent.db), staged like the files; a 0.1 file has none.
  const stagedBodies = stageBodyFiles(check.kind === 'set' ? source : null, config.dataDir);
  const journal = restoreJournalFile(config.dataDir);
  fs.writeFileSync(journal, `${JSON.stringify({ from: source, startedAt: now.toISOString() })}\n`, { mode: 0o600 });
  fsyncPath(journal);
  // A 0.1 backup becomes the till file again and the next open splits it: the live agent.db and staff.db go.
  const replaced = [...incoming.map(([, target]) => target), ...(check.kind === 'single-file' ? [live('agent'), live('staff')] : [])];
  try {
    runAllOrNothing(swapSteps(replaced, incoming, stagedBodies, config.dataDir));
  } catch (err) {
    if (err instanceof SwapStuck) {
      // Half swapped: the journal stays, so start-up refuses and `ops status` says to run it again.
      throw new AppError(
        'restore_interrupted',
        409,
        `another program has ${err.path} or ${err.undoPath} open (${err.failure.code ?? err.failure.message}, ${err.undoFailure.code ?? err.undoFailure.message}): ` +
          `the data folder is half restored; close that program and run the same restore again before starting the agent`,
      );
    }
    for (const [file] of incoming) fs.rmSync(file, { force: true });
    fs.rmSync(stagedBodies, { recursive: true, force: true });
    fs.rmSync(journal, { force: true });
    if (!(err instanceof SwapRefused)) throw err;
    if (!IN_USE.has(err.failure.code ?? '')) throw err.failure;
    throw new AppError(
      'database_in_use',
      409,
      `another program (the till, a backup or antivirus program, a file viewer?) has ${err.path} open: close it and run the restore again; ` +
        `no file was changed${previousSavedAs ? ` (the current files were also saved as ${previousSavedAs})` : ''}`,
    );
  }
  // Also what a restore cut short by a crash left aside (the journal made start-up wait for this run).
  for (const kind of ['till', 'agent', 'staff'] as const) for (const suffix of ['', '-wal', '-shm']) fs.rmSync(`${live(kind)}${suffix}${ASIDE_SUFFIX}`, { force: true });
  removeAsideBodyFiles(config.dataDir);
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
  // The till's exception, as at the agent's start, and its journal as a stopped agent leaves it: the
  // till reads the restored file before the agent runs again. The restore itself is done by now, so a
  // failure here is told, not thrown.
  try {
    applyTillReaderAccess(config, log);
  } catch (err) {
    log.warn(`the restored till's file could not be given to till.readerGroup (the agent's next start tries again): ${describeError(err)}`);
  }
  leaveTillFileReadable(config, log);
  return { restoredFrom: source, previousSavedAs, check };
}

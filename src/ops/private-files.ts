import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Config } from '../config/schema';
import type { ConfigProblem } from '../errors';
import type { Logger } from '../log';
import { isBusyError, WRITER_BUSY_TIMEOUT_MS } from '../store/database';
import { walkFolder } from './folder-walk';

/**
 * Everything the agent writes is private to its account: databases and their -wal/-shm, backups,
 * logs, tunnel-state.json, the pid and lock files, the diagnostics zip, tokens and secrets. Staff
 * records (e-mails, NI numbers, share codes) live in these files, so another local account must not
 * read them.
 *
 * Three layers, so a file is private even where one layer is missed:
 * 1. `restrictUmask()` at process start: POSIX creates every new file 0600 and folder 0700, including
 *    the files SQLite and electron-log create (they pass 0644/0666 and rely on the umask).
 * 2. Explicit modes where this code creates files (`PRIVATE_FILE_MODE`), and `securePrivateData()`
 *    at start-up, which tightens files left by older versions or created under another umask.
 * 3. On Windows (no umask), an ACL on the data folder granting only the owner, SYSTEM and
 *    Administrators, inherited by everything created inside it (`applyWindowsPrivateAcl`), on a
 *    folder the agent's account owns.
 *
 * The one exception is the till's own file, `pos-sync.db` with its `-wal` and `-shm` (a WAL reader
 * needs both): `till.readerGroup` may read those three, nothing else (`applyTillReaderAccess`).
 */

export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIR_MODE = 0o700;
/** The till's file with read access for the reader group; everything else stays owner-only. */
export const TILL_READER_FILE_MODE = 0o640;
/**
 * The data folder when a till reader is configured: the group may traverse it (x) to open the files
 * it was given by name, but not list it (no r) nor create or delete anything (no w). The setgid bit
 * makes files SQLite re-creates in it (a new -wal or -shm after a restart) belong to that group, so
 * the reader keeps access without the agent re-applying it.
 */
export const TILL_READER_DIR_MODE = 0o2710;

/** The till's file and the two files a WAL reader of it needs. Only these may be shared. */
export const TILL_FILES: readonly string[] = ['pos-sync.db', 'pos-sync.db-wal', 'pos-sync.db-shm'];

const POSIX = process.platform !== 'win32';

/** Call first thing in a process that writes agent files: new files 0600, new folders 0700. */
export function restrictUmask(): void {
  // Windows ignores the umask; the data folder's ACL does this job there.
  if (POSIX) process.umask(0o077);
}

/**
 * Creates (if needed) a folder only the owner can use, and tightens an existing one. A folder in the
 * till reader's mode (TILL_READER_DIR_MODE) keeps it: only the data folder is given that mode, by
 * start-up from `till.readerGroup` (which also takes it away again when the key is removed), and a
 * command that makes sure the folder exists must not shut the till out of it.
 */
export function makePrivateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  if (POSIX) tighten(dir, PRIVATE_DIR_MODE, TILL_READER_DIR_MODE);
}

/** Makes an existing file owner-only (a no-op on Windows, where the folder's ACL applies). */
export function makePrivateFile(file: string): void {
  if (POSIX) tighten(file, PRIVATE_FILE_MODE);
}

function ownedByUs(stat: fs.Stats): boolean {
  return typeof process.getuid !== 'function' || stat.uid === process.getuid();
}

/**
 * chmod to `mode` when the current mode is neither it nor `alsoKept`, on files this account owns
 * (others' are left alone).
 */
function tighten(target: string, mode: number, alsoKept: number = mode): void {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(target);
  } catch {
    return;
  }
  if (stat.isSymbolicLink() || !ownedByUs(stat)) return;
  const current = stat.mode & 0o7777;
  if (current !== mode && current !== alsoKept) fs.chmodSync(target, mode);
}

/**
 * Owner-only for what is already in the agent's folders (files from an older version, or written
 * under a looser umask): the data folder and its sub-folders two levels down, plus the log and backup
 * folders when configured elsewhere. The till's files are handled by `applyTillReaderAccess`.
 */
export function securePrivateData(config: Readonly<Config>, extraDirs: readonly string[] = []): void {
  if (!POSIX) return;
  const walk = (dir: string, depth: number): void => {
    tighten(dir, dir === config.dataDir && config.till.readerGroup ? TILL_READER_DIR_MODE : PRIVATE_DIR_MODE);
    walkFolder(dir, depth, (file, stat) => {
      if (stat.isDirectory()) {
        tighten(file, PRIVATE_DIR_MODE);
      } else if (stat.isFile() && !(config.till.readerGroup && path.dirname(file) === config.dataDir && TILL_FILES.includes(path.basename(file)))) {
        tighten(file, PRIVATE_FILE_MODE);
      }
      return true;
    });
  };
  walk(config.dataDir, 2);
  for (const dir of extraDirs) if (fs.existsSync(dir)) walk(dir, 0);
}

// ---- the till's reader ----

/** Resolves `till.readerGroup` to a gid (POSIX): a number as is, a name through the system's group database. */
export function resolveGroup(group: string): number | null {
  if (/^\d+$/.test(group)) return Number(group);
  // Node has no getgrnam; getent asks NSS (files, LDAP, sssd) the way the system does.
  const result = spawnSync('getent', ['group', group], { encoding: 'utf8', timeout: 5_000 });
  if (result.status !== 0) return null;
  const gid = Number(result.stdout.split(':')[2]);
  return Number.isInteger(gid) ? gid : null;
}

/** What is wrong with `till.readerGroup` before anything starts (empty: nothing). */
export function tillReaderProblems(config: Readonly<Config>): ConfigProblem[] {
  const group = config.till.readerGroup;
  if (group === null || !POSIX) return [];
  const gid = resolveGroup(group);
  if (gid === null) return [{ field: 'till.readerGroup', message: `there is no group "${group}" on this machine: create it (groupadd ${group}) or give its numeric gid` }];
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const member = typeof process.getgroups === 'function' && (process.getgroups() as number[]).includes(gid);
  if (!root && !member && process.getgid?.() !== gid) {
    return [
      {
        field: 'till.readerGroup',
        message: `this account (${os.userInfo().username}) is not a member of group ${group}, so it cannot give that group the till's file: add it (usermod -aG ${group} ${os.userInfo().username}) and log in again`,
      },
    ];
  }
  return [];
}

/**
 * Gives the till's reader read access to exactly `pos-sync.db`, `-wal` and `-shm` (those that exist;
 * SQLite creates a missing -wal/-shm with the database file's mode, in a folder whose group it
 * inherits) and the data folder the traverse right it needs. With no reader configured the three are
 * owner-only like every other file.
 */
export function applyTillReaderAccess(config: Readonly<Config>, log: Logger): void {
  const group = config.till.readerGroup;
  const files = TILL_FILES.map((f) => path.join(config.dataDir, f)).filter((f) => fs.existsSync(f));
  if (!POSIX) {
    if (group === null) return;
    for (const file of files) runIcacls(windowsTillReaderAclArgs(file, group), log);
    return;
  }
  if (group === null) {
    for (const file of files) tighten(file, PRIVATE_FILE_MODE);
    return;
  }
  const gid = resolveGroup(group);
  if (gid === null) throw new Error(`till.readerGroup: no group ${group}`);
  fs.chownSync(config.dataDir, -1, gid);
  fs.chmodSync(config.dataDir, TILL_READER_DIR_MODE);
  for (const file of files) {
    fs.chownSync(file, -1, gid);
    fs.chmodSync(file, TILL_READER_FILE_MODE);
  }
  log.info(`till.readerGroup: group ${group} may read ${TILL_FILES.join(', ')} in ${config.dataDir}; every other file is owner-only`);
}

/** The till's file in `dataDir`. */
function tillFile(config: Readonly<Config>): string {
  return path.join(config.dataDir, TILL_FILES[0]!);
}

/**
 * The till's file as the agent leaves it whenever it is not running: after a clean stop, after a start
 * that failed, and after a restore. With a till reader configured the file is switched from WAL to a
 * rollback journal: in WAL mode the last connection to close deletes -wal and -shm, and a reader that
 * may not create files in the folder then cannot open the database at all (SQLITE_READONLY_DIRECTORY)
 * until the agent runs again; a rollback-journal file needs nothing but read access. Without one it is
 * put in WAL mode, the agent's own (a restored backup has a rollback journal). The agent's next start switches it to WAL
 * (`switchTillFileToWal`); other commands keep the mode it has (configureWriter in
 * src/store/database.ts). If the till holds the file open at that moment, the switch is not possible
 * and not needed: SQLite keeps -wal and -shm while any connection is open.
 */
export function leaveTillFileReadable(config: Readonly<Config>, log: Logger): void {
  const file = tillFile(config);
  if (!fs.existsSync(file)) return;
  const wanted = config.till.readerGroup === null ? 'wal' : 'delete';
  try {
    const db = new Database(file, { fileMustExist: true, timeout: 2_000 });
    try {
      db.pragma('synchronous = FULL');
      db.pragma(`journal_mode = ${wanted.toUpperCase()}`);
    } finally {
      db.close();
    }
  } catch (err) {
    if (isBusyError(err)) log.info(`the till's file keeps its journal mode while the agent is stopped: another program (the till?) has it open`);
    else log.warn(`could not leave the till's file readable for a stopped agent: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/** How often the wait for a reader of the till's file is told in the log again, in attempts. */
const TELL_WAIT_EVERY = 6;

/**
 * At the agent's start, before its connections open: the till's file into WAL mode, in which the till
 * reads while the agent writes. The switch needs the file to itself for a moment, so a till holding a
 * read transaction (possible while the file has a rollback journal, see `leaveTillFileReadable`) makes
 * it wait: each attempt waits the writers' busy timeout, set before the switch, then it tries again,
 * however long the reader takes, rather than fail the start; the log says a reader holds the file at
 * the first attempt that fails and now and then after. A missing file is left to the agent, which
 * creates it in WAL mode.
 */
export async function switchTillFileToWal(config: Readonly<Config>, log: Logger, busyTimeoutMs: number = WRITER_BUSY_TIMEOUT_MS): Promise<void> {
  const file = tillFile(config);
  if (!fs.existsSync(file)) return;
  const db = new Database(file, { fileMustExist: true, timeout: busyTimeoutMs });
  try {
    db.pragma('synchronous = FULL');
    for (let attempt = 0; ; attempt++) {
      try {
        const mode = db.pragma('journal_mode = WAL', { simple: true });
        if (mode !== 'wal') throw new Error(`${file} cannot be put in WAL mode (SQLite keeps it in ${String(mode)} mode)`);
        if (attempt > 0) log.info(`${file}: the reader let go; the agent starts`);
        return;
      } catch (err) {
        if (!isBusyError(err)) throw err;
        if (attempt % TELL_WAIT_EVERY === 0) {
          log.warn(`${file}: another program (the till?) holds a read transaction on it, so the agent cannot switch it to WAL mode and start yet: waiting for it to finish`);
        }
        // Let the event loop run (signals, the desktop app's messages) between attempts.
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
  } finally {
    db.close();
  }
}

// ---- Windows ----

/** Well-known SIDs, so the ACL does not depend on the language of Windows ("SYSTEM", "Administratoren"...). */
export const SID_SYSTEM = '*S-1-5-18';
export const SID_ADMINISTRATORS = '*S-1-5-32-544';

/** The account the agent runs as, in the form icacls takes (DOMAIN\user, or user). */
export function windowsAccountName(env: NodeJS.ProcessEnv = process.env, username: string = os.userInfo().username): string {
  return env.USERDOMAIN ? `${env.USERDOMAIN}\\${username}` : username;
}

/**
 * icacls arguments making `target` private: inherited entries removed (`/inheritance:r`), and full
 * control only for the owner, SYSTEM (services, backup software) and Administrators. On a folder the
 * grants are inheritable by files (OI) and sub-folders (CI), so what the agent creates inside later is
 * private with no further call. Pure, so it is tested where Windows cannot run.
 */
export function windowsPrivateAclArgs(target: string, options: { owner: string; directory: boolean }): string[] {
  const inherit = options.directory ? '(OI)(CI)' : '';
  return [target, '/inheritance:r', '/grant:r', `${options.owner}:${inherit}F`, `${SID_SYSTEM}:${inherit}F`, `${SID_ADMINISTRATORS}:${inherit}F`, '/Q'];
}

/**
 * icacls arguments making the agent's account the owner of `target`. The owner may always change an
 * ACL: a folder another account made (any account may create one under %ProgramData% before the
 * installer runs) stayed that account's to open again, whatever entries the agent granted.
 */
export function windowsOwnerArgs(target: string, owner: string): string[] {
  return [target, '/setowner', owner, '/Q'];
}

/**
 * icacls arguments dropping the entries written on everything inside `folder` (`/reset` of its
 * contents: each then has only what it inherits, the folder's private grants). Never the folder
 * itself: a reset folder inherits its parent's entries until it is made private again.
 */
export function windowsResetContentsArgs(folder: string): string[] {
  return [path.win32.join(folder, '*'), '/reset', '/T', '/C', '/Q'];
}

/** Groups every account on a PC belongs to (by SID): an entry for one on the folder itself is removed. */
export const BROAD_SIDS = ['*S-1-1-0', '*S-1-5-11', '*S-1-5-32-545', '*S-1-5-32-546', '*S-1-5-4'] as const;

/** icacls arguments removing the grants to BROAD_SIDS written on `target` itself. */
export function windowsRemoveBroadArgs(target: string): string[] {
  return [target, '/remove:g', ...BROAD_SIDS, '/Q'];
}

/**
 * icacls arguments adding read access for the till's account or group to one of the till's files.
 * Windows grants "bypass traverse checking" to everyone, so the folder needs no entry for it.
 */
export function windowsTillReaderAclArgs(file: string, reader: string): string[] {
  return [file, '/grant', `${reader}:(R)`, '/Q'];
}

function runIcacls(args: readonly string[], log: Logger): void {
  const result = spawnSync('icacls', args, { encoding: 'utf8', windowsHide: true, timeout: 30_000 });
  if (result.status !== 0) {
    throw new Error(`icacls ${args.join(' ')} failed (${result.status ?? result.error?.message}): ${(result.stderr || result.stdout).trim()}`);
  }
  log.debug(`icacls ${args.join(' ')}`);
}

/** One icacls call of `applyWindowsPrivateAcl`, and what its failure means. */
export interface WindowsAclStep {
  readonly args: string[];
  /** `stop`: start-up stops. Otherwise the log says that the folder `dir` kept what these words name, and start-up goes on. */
  readonly onFailure: 'stop' | { readonly warning: string };
}

/**
 * The icacls calls that make `dir` private, in order (see `applyWindowsPrivateAcl`). On the data
 * folder with a till reader (`tillReader`: the reader and the till's files there now), the reader's
 * grants follow straight after the reset of the folder's contents that drops them: the till is shut
 * out for that moment only, not until the agent has started, nor for good after a start that failed.
 * Pure, so it is tested where Windows cannot run.
 */
export function windowsPrivateAclSteps(
  dir: string,
  options: { owner: string; hasContents: boolean; tillReader: { reader: string; files: readonly string[] } | null },
): WindowsAclStep[] {
  const steps: WindowsAclStep[] = [
    { args: windowsOwnerArgs(dir, options.owner), onFailure: { warning: `could not make ${options.owner} its owner, so the account that owns it may still change its permissions` } },
    { args: windowsPrivateAclArgs(dir, { owner: options.owner, directory: true }), onFailure: 'stop' },
    // The folder is private from here on: what follows only removes more, and a failure of it is said,
    // not a reason to stop; except the till's grants, which the till needs.
    { args: windowsRemoveBroadArgs(dir), onFailure: { warning: 'could not remove the grants to Everyone, Users and the like written on it' } },
  ];
  if (options.hasContents) steps.push({ args: windowsResetContentsArgs(dir), onFailure: { warning: 'could not remove the permissions written on the files in it' } });
  if (options.tillReader) for (const file of options.tillReader.files) steps.push({ args: windowsTillReaderAclArgs(file, options.tillReader.reader), onFailure: 'stop' });
  return steps;
}

/** The till's reader and its files in `dir`, when `dir` is the data folder and a reader is configured. */
function tillReaderIn(dir: string, config: Pick<Config, 'dataDir' | 'till'> | null): { reader: string; files: string[] } | null {
  if (config === null || config.till.readerGroup === null || path.resolve(dir) !== path.resolve(config.dataDir)) return null;
  return { reader: config.till.readerGroup, files: TILL_FILES.map((f) => path.join(dir, f)).filter((f) => fs.existsSync(f)) };
}

/**
 * Windows: the data folder (and the log and backup folders elsewhere) private, inherited by their
 * contents. In an order that never leaves a folder open: owned by the agent's account (an owner can
 * always change an ACL, so a folder another account made stayed that account's to open again); then
 * made private (inherited entries removed, full control for the owner, SYSTEM and Administrators);
 * then the grants to groups every account is in written on the folder itself removed; then every
 * entry written on its contents dropped, so they inherit the folder's, and the till reader's grants
 * given back at once (`config`'s till.readerGroup). A folder whose owner the agent's account cannot
 * become keeps its owner, and one whose extra entries cannot be removed keeps them, and the log says
 * so; a folder that cannot be made private stops start-up. An entry another account gave one named
 * account on the folder itself stays: `icacls` cannot remove what it is not named
 * (docs/operations.md, "Private files").
 */
export function applyWindowsPrivateAcl(dirs: readonly string[], log: Logger, config: Pick<Config, 'dataDir' | 'till'> | null = null): void {
  if (POSIX) return;
  const owner = windowsAccountName();
  for (const dir of dirs) {
    if (!fs.existsSync(dir)) continue;
    const steps = windowsPrivateAclSteps(dir, { owner, hasContents: fs.readdirSync(dir).length > 0, tillReader: tillReaderIn(dir, config) });
    for (const step of steps) {
      try {
        runIcacls(step.args, log);
      } catch (err) {
        if (step.onFailure === 'stop') throw err;
        log.warn(`${dir}: ${step.onFailure.warning}: ${(err as Error).message}`);
      }
    }
  }
}

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Config } from '../config/schema';
import type { ConfigProblem } from '../errors';
import type { Logger } from '../log';
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

/** Creates (if needed) a folder only the owner can use, and tightens an existing one. */
export function makePrivateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  if (POSIX) tighten(dir, PRIVATE_DIR_MODE);
}

/** Makes an existing file owner-only (a no-op on Windows, where the folder's ACL applies). */
export function makePrivateFile(file: string): void {
  if (POSIX) tighten(file, PRIVATE_FILE_MODE);
}

function ownedByUs(stat: fs.Stats): boolean {
  return typeof process.getuid !== 'function' || stat.uid === process.getuid();
}

/** chmod to `mode` when the current mode differs, on files this account owns (others' are left alone). */
function tighten(target: string, mode: number): void {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(target);
  } catch {
    return;
  }
  if (stat.isSymbolicLink() || !ownedByUs(stat)) return;
  if ((stat.mode & 0o7777) !== mode) fs.chmodSync(target, mode);
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

/**
 * At a clean stop, with a till reader configured: switch the till's file from WAL to a rollback
 * journal. In WAL mode the last connection to close deletes -wal and -shm, and a reader that may not
 * create files in the folder then cannot open the database at all (SQLITE_READONLY_DIRECTORY) until
 * the agent runs again; a rollback-journal file needs nothing but read access. The next start switches
 * back to WAL (configureWriter). If the till holds the file open at that moment, the switch is not
 * possible and not needed: SQLite keeps -wal and -shm while any connection is open.
 */
export function leaveTillFileReadable(config: Readonly<Config>, log: Logger): void {
  if (config.till.readerGroup === null) return;
  const file = path.join(config.dataDir, TILL_FILES[0]!);
  if (!fs.existsSync(file)) return;
  try {
    const db = new Database(file, { fileMustExist: true, timeout: 2_000 });
    try {
      db.pragma('synchronous = FULL');
      const mode = db.pragma('journal_mode = DELETE', { simple: true });
      if (mode !== 'delete') log.info(`the till's file stays in ${String(mode)} mode while the agent is stopped (the till has it open)`);
    } finally {
      db.close();
    }
  } catch (err) {
    log.warn(`could not leave the till's file readable for a stopped agent: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
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

/**
 * Windows: the data folder (and the log and backup folders elsewhere) private, inherited by their
 * contents. In an order that never leaves a folder open: owned by the agent's account (an owner can
 * always change an ACL, so a folder another account made stayed that account's to open again); then
 * made private (inherited entries removed, full control for the owner, SYSTEM and Administrators);
 * then the grants to groups every account is in written on the folder itself removed; then every
 * entry written on its contents dropped, so they inherit the folder's. A folder whose owner the
 * agent's account cannot become keeps its owner, and one whose extra entries cannot be removed keeps
 * them, and the log says so; a folder that cannot be made private stops start-up. An entry another account gave one named account on the folder itself
 * stays: `icacls` cannot remove what it is not named (docs/operations.md, "Private files").
 */
export function applyWindowsPrivateAcl(dirs: readonly string[], log: Logger): void {
  if (POSIX) return;
  const owner = windowsAccountName();
  for (const dir of dirs) {
    if (!fs.existsSync(dir)) continue;
    try {
      runIcacls(windowsOwnerArgs(dir, owner), log);
    } catch (err) {
      log.warn(`${dir}: could not make ${owner} its owner, so the account that owns it may still change its permissions: ${(err as Error).message}`);
    }
    runIcacls(windowsPrivateAclArgs(dir, { owner, directory: true }), log);
    // The folder is private from here on: what follows only removes more, and a failure of it is said,
    // not a reason to stop.
    const tighten = (args: string[], what: string): void => {
      try {
        runIcacls(args, log);
      } catch (err) {
        log.warn(`${dir}: could not remove ${what}: ${(err as Error).message}`);
      }
    };
    tighten(windowsRemoveBroadArgs(dir), 'the grants to Everyone, Users and the like written on it');
    if (fs.readdirSync(dir).length > 0) tighten(windowsResetContentsArgs(dir), 'the permissions written on the files in it');
  }
}

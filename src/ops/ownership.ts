import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Config } from '../config/schema';
import type { ConfigProblem } from '../errors';
import { tokenFilePath } from '../admin/token';
import { walkFolder } from './folder-walk';
import { backupDir, logDir } from './paths';

/**
 * The agent's folders must be its own, the way ssh refuses a key file or ~/.ssh that another account
 * could have written. A data folder that another account created (or may write) can hold that
 * account's `admin-token`, a planted symlink where `agent.sock` goes, or a database it prepared: using
 * it as it is hands that account the status window and the till. So before anything is opened, every
 * folder and file the agent keeps must:
 * - belong to the agent's account (the folders above the data folder may also belong to root), and
 * - not be writable by group or others (a folder above may be, with the sticky bit, as /tmp is).
 * Group *read* access is left to the tightening step (securePrivateData), which removes it, except on
 * the till's file for `till.readerGroup`. POSIX only: on Windows the data folder's ACL does this job.
 */

interface Offence {
  readonly file: string;
  readonly why: string;
}

function userName(uid: number): string {
  if (uid === process.getuid?.()) return os.userInfo().username;
  // Node has no getpwuid for another user; /etc/passwd covers local accounts, the number the rest.
  try {
    for (const line of fs.readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const [name, , id] = line.split(':');
      if (id !== undefined && Number(id) === uid && name) return `${name} (uid ${uid})`;
    }
  } catch {
    // No passwd file: the number is enough.
  }
  return `uid ${uid}`;
}

function mode(stat: fs.Stats): string {
  return (stat.mode & 0o7777).toString(8).padStart(4, '0');
}

function offenceOf(file: string, stat: fs.Stats, uid: number, allowRoot: boolean): Offence | null {
  if (stat.uid !== uid && !(allowRoot && stat.uid === 0)) return { file, why: `belongs to ${userName(stat.uid)}, not to the agent's account ${os.userInfo().username}` };
  if (stat.isSymbolicLink()) return null;
  const sticky = (stat.mode & 0o1000) !== 0 && stat.isDirectory();
  if ((stat.mode & 0o022) !== 0 && !(allowRoot && sticky)) return { file, why: `may be written by ${(stat.mode & 0o002) !== 0 ? 'every account' : 'its group'} (mode ${mode(stat)})` };
  return null;
}

/** The folders above `dir` (the real path), from `/` down. */
function ancestors(dir: string): string[] {
  const out: string[] = [];
  let current = path.dirname(dir);
  for (;;) {
    out.unshift(current);
    const up = path.dirname(current);
    if (up === current) return out;
    current = up;
  }
}

/** What in `dir` (and below, `depth` levels) is not the agent's own. */
function walk(dir: string, depth: number, uid: number, out: Offence[]): void {
  walkFolder(dir, depth, (file, stat) => {
    const offence = offenceOf(file, stat, uid, false);
    if (offence) out.push(offence);
    return offence === null;
  });
}

function folderOffences(dir: string, depth: number, uid: number): Offence[] {
  let real: string;
  try {
    real = fs.realpathSync(dir);
  } catch {
    // Not there yet: the agent creates it, its own, in the nearest folder above that is there, which
    // (and every folder above it) must be such that no other account could replace what it creates.
    return missingFolderOffences(path.resolve(dir), uid);
  }
  const out: Offence[] = [];
  for (const up of ancestors(real)) {
    const offence = offenceOf(up, fs.statSync(up), uid, true);
    if (offence) out.push(offence);
  }
  if (real !== path.resolve(dir)) {
    // The configured path is a link: the link itself must be the agent's too (or root's).
    const link = offenceOf(path.resolve(dir), fs.lstatSync(dir), uid, true);
    if (link) out.push(link);
  }
  const self = offenceOf(real, fs.statSync(real), uid, false);
  if (self) out.push(self);
  else walk(real, depth, uid, out);
  return out;
}

/** folderOffences of a folder not there yet: the nearest folder above it that is, and those above that. */
function missingFolderOffences(dir: string, uid: number): Offence[] {
  let base = path.dirname(dir);
  for (;;) {
    try {
      base = fs.realpathSync(base);
      break;
    } catch {
      const up = path.dirname(base);
      if (up === base) return [];
      base = up;
    }
  }
  const out: Offence[] = [];
  for (const up of [...ancestors(base), base]) {
    const offence = offenceOf(up, fs.statSync(up), uid, true);
    if (offence) out.push(offence);
  }
  return out;
}

const SHOWN = 5;

function problemFor(field: string, dir: string, offences: readonly Offence[]): ConfigProblem {
  const user = os.userInfo().username;
  const listed = offences.slice(0, SHOWN).map((o) => `${o.file} ${o.why}`);
  const more = offences.length > SHOWN ? `; and ${offences.length - SHOWN} more` : '';
  const foreign = offences.some((o) => o.why.startsWith('belongs'));
  const fix = foreign
    ? `if you made it and trust what is in it, run: chown -R ${user} '${dir}' && chmod -R go-w '${dir}'; otherwise move it aside and let the agent create a new one (restore a backup into it)`
    : `run: chmod -R go-w '${dir}'` + (offences.some((o) => !o.file.startsWith(dir)) ? ` (and chmod go-w on the folders named above it)` : '');
  return { field, message: `refusing to use ${dir}, which another account could have changed: ${listed.join('; ')}${more}. Fix: ${fix}` };
}

/** Problems with folders the agent keeps that are not its own (empty on Windows). */
export function ownershipProblems(config: Readonly<Config>, platform: NodeJS.Platform = process.platform): ConfigProblem[] {
  const uid = process.getuid?.();
  if (platform === 'win32' || uid === undefined) return [];
  const problems: ConfigProblem[] = [];
  const data = folderOffences(config.dataDir, 2, uid);
  if (data.length > 0) problems.push(problemFor('dataDir', config.dataDir, data));
  const inside = (dir: string): boolean => !path.relative(config.dataDir, dir).startsWith('..') && !path.isAbsolute(path.relative(config.dataDir, dir));
  // The secrets and the window's token, when configured outside the data folder: in a folder another
  // account may write, it could replace them with values it knows (a webhook token of its own).
  for (const [field, dir] of [
    ['log.dir', logDir(config)],
    ['backup.dir', backupDir(config)],
    ['secrets.file', path.dirname(path.resolve(config.dataDir, config.secrets.file ?? 'secrets.json'))],
    ['admin.tokenFile', path.dirname(tokenFilePath(config.dataDir, config.admin.tokenFile))],
  ] as const) {
    if (inside(dir)) continue;
    const offences = folderOffences(dir, 0, uid);
    if (offences.length > 0) problems.push(problemFor(field, dir, offences));
  }
  return problems;
}

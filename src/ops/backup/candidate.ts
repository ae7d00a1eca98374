import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describeError } from '../../errors';
import { AGENT_FILE, appliedMigrations, MIGRATIONS_FOR, STAFF_FILE, STORE_FILES, TILL_FILE, type Db, type StoreFileKind } from '../../store/database';
import { LEGACY_SINGLE_FILE_MIGRATIONS } from '../../store/migrations';
import type { BackupFile } from '../states';

import { checkSetConsistency } from './consistency';
import { missingBodyFiles } from './body-files';

/** Whether a file or set offered for restore is a backup this agent can restore, and what it holds (read-only). */

export interface CandidateCheck {
  readonly ok: boolean;
  readonly kind: BackupFile['kind'];
  readonly problems: string[];
  readonly migrations: { file: string; version: number; name: string }[];
  /** Per location: the ChangeSequence the restored agent will resume from. */
  readonly locations: { locationId: number; lastChangeSequence: number | null }[];
  readonly includesStaff: boolean;
}

function openChecked(file: string, problems: string[]): Db | null {
  try {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      const integrity = (db.pragma('integrity_check(20)') as { integrity_check: string }[]).map((r) => r.integrity_check);
      if (integrity.length !== 1 || integrity[0] !== 'ok') problems.push(`${path.basename(file)}: integrity_check failed: ${integrity.join('; ')}`);
    } catch (err) {
      problems.push(`${path.basename(file)}: not a readable SQLite database: ${describeError(err)}`);
      db.close();
      return null;
    }
    return db;
  } catch (err) {
    problems.push(`cannot open ${file}: ${describeError(err)}`);
    return null;
  }
}

function checkMigrations(db: Db, file: string, known: readonly { version: number; name: string }[], problems: string[], out: CandidateCheck['migrations']): void {
  const names = new Map(known.map((m) => [m.version, m.name]));
  const applied = appliedMigrations(db);
  out.push(...applied.map((m) => ({ file, version: m.version, name: m.name })));
  if (!applied.some((m) => m.version === 1 && m.name === names.get(1))) problems.push(`${file} is not a pos-sync-agent ${file} (no migration 1-${names.get(1)})`);
  const unknown = applied.filter((m) => names.get(m.version) !== m.name);
  if (unknown.length > 0) problems.push(`${file} has migrations this agent does not know (${unknown.map((u) => `${u.version}-${u.name}`).join(', ')}): it was made by a newer version`);
}

function locationsOf(db: Db): CandidateCheck['locations'] {
  return (db.prepare('SELECT location_id, last_change_sequence FROM locations ORDER BY location_id').all() as { location_id: number; last_change_sequence: number | null }[]).map((l) => ({
    locationId: l.location_id,
    lastChangeSequence: l.last_change_sequence,
  }));
}

/**
 * Checks a backup before it may replace the live files: a set's files each open, pass
 * `integrity_check` and hold only migrations this build knows, and agree with each other (every
 * update agent.db calls applied is in the till file); a 0.1 single file is checked as one.
 */
export function checkBackupFile(candidate: string): CandidateCheck {
  const problems: string[] = [];
  const migrations: CandidateCheck['migrations'] = [];
  let stat: fs.Stats;
  try {
    stat = fs.statSync(candidate);
  } catch (err) {
    return { ok: false, kind: 'set', problems: [`cannot open ${candidate}: ${describeError(err)}`], migrations, locations: [], includesStaff: false };
  }
  if (!stat.isDirectory()) {
    const db = openChecked(candidate, problems);
    if (!db) return { ok: false, kind: 'single-file', problems, migrations, locations: [], includesStaff: false };
    try {
      checkMigrations(db, TILL_FILE, LEGACY_SINGLE_FILE_MIGRATIONS, problems, migrations);
      const locations = problems.length === 0 ? locationsOf(db) : [];
      return { ok: problems.length === 0, kind: 'single-file', problems, migrations, locations, includesStaff: true };
    } finally {
      db.close();
    }
  }
  const includesStaff = fs.existsSync(path.join(candidate, STAFF_FILE));
  const opened: Partial<Record<StoreFileKind, Db>> = {};
  try {
    for (const kind of ['agent', 'till', ...(includesStaff ? ['staff' as const] : [])] as StoreFileKind[]) {
      const file = STORE_FILES[kind];
      if (!fs.existsSync(path.join(candidate, file))) {
        problems.push(`the set has no ${file}`);
        continue;
      }
      const db = openChecked(path.join(candidate, file), problems);
      if (!db) continue;
      opened[kind] = db;
      checkMigrations(db, file, MIGRATIONS_FOR[kind], problems, migrations);
    }
    let locations: CandidateCheck['locations'] = [];
    if (problems.length === 0 && opened.till && opened.agent) {
      locations = locationsOf(opened.till);
      const consistency = checkSetConsistency(path.join(candidate, TILL_FILE), path.join(candidate, AGENT_FILE));
      for (const problem of consistency.problems) problems.push(`${problem}: the files are not from the same set`);
      const missing = missingBodyFiles(candidate);
      if (missing.length > 0) problems.push(`agent.db names ${missing.length} body file${missing.length === 1 ? '' : 's'} the set's bodies/ folder lacks (${missing.slice(0, 3).join(', ')})`);
    }
    return { ok: problems.length === 0, kind: 'set', problems, migrations, locations, includesStaff };
  } finally {
    for (const db of Object.values(opened)) db.close();
  }
}

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { ZipFile } from 'yazl';
import { maskConfig } from '../config/load';
import type { Config } from '../config/schema';
import { describeError } from '../errors';
import { redactor } from '../log';
import { bodyFilePath, bodyFilesDir } from '../store/body-files';
import { appliedMigrations, MIGRATIONS_FOR, storeFilePath, type Db, type StoreFileKind } from '../store/database';
import { locationStatuses, recentDeliveries } from '../store/queries';
import { listBackups } from './backup/files';
import { clockState, siteTimezonesOnDisk } from './clock-service';
import { clockWatch, machineTimezone } from '../clock';
import { TZ_TABLE_RELEASE } from '../domain/utc-offsets';
import { checkDisk } from './disk';
import { runningAgent } from './instance';
import { createExclusiveStream } from '../files/exclusive-write';
import { backupDir, logDir, secretsFile } from './paths';
import { readTunnelState } from './tunnel';
import { appVersion } from '../version';

/**
 * The support bundle: what support asks for first, as one zip — masked configuration, versions,
 * recent logs, sync state, database health, disk, tunnel and backups. Deliberately without personal
 * data: no staff tables (only their row counts), no payload or quarantine bodies, no delivery senders,
 * no audit actors, no host or user names; e-mail addresses and National Insurance numbers are scrubbed
 * from the log excerpts, and every registered secret is redacted.
 */

/** Tables whose row counts are reported; contents never are. */
const COUNTED_TABLES = ['locations', 'known_locations', 'applied_updates', 'inbox', 'inbox_bodies', 'inbox_body_files', 'deliveries', 'quarantine', 'items', 'price_ranges', 'availability_ranges', 'update_warnings', 'audit_log'];
const LOG_TAIL_BYTES = 1024 * 1024;

/** Removes what could identify a person from free text (log lines), after secret redaction. */
export function scrubPersonalData(text: string): string {
  return redactor
    .redact(text)
    .replace(/[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g, '<email>')
    // National Insurance numbers as people and systems write them: together, or spaced, hyphenated or
    // dotted in pairs (test/unit/ops/scrub-personal-data.test.ts).
    .replace(/\b[A-Z]{2}[ .-]?\d{2}[ .-]?\d{2}[ .-]?\d{2}[ .-]?[A-D]\b/gi, '<NI number>')
    // Network addresses of senders (and X-Forwarded-For chains): they can identify a person. This
    // machine's own loopback addresses say nothing about anyone and help support read the lines.
    .replace(/(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w.])/g, (ip) => (ip.startsWith('127.') ? ip : '<ip>'))
    .replace(/(?<![\w:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:])/g, (ip) => (ip === '::1' || (!ip.includes('::') && ip.split(':').length < 4) ? ip : '<ip>'));
}

function betterSqliteVersion(): string {
  try {
    return (require('better-sqlite3/package.json') as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

function tail(file: string, bytes: number): Buffer {
  const size = fs.statSync(file).size;
  const fd = fs.openSync(file, 'r');
  try {
    const length = Math.min(size, bytes);
    const buffer = Buffer.alloc(length);
    fs.readSync(fd, buffer, 0, length, size - length);
    return buffer;
  } finally {
    fs.closeSync(fd);
  }
}

function bodyFilesReport(db: Db): { named: number; present: number; bytes: number; unnamedFiles: number } {
  const dataDir = path.dirname(db.name);
  const named = db.prepare<[], { file: string }>('SELECT file FROM inbox_body_files').all().map((r) => r.file);
  let present = 0;
  let bytes = 0;
  for (const name of named) {
    try {
      bytes += fs.statSync(bodyFilePath(dataDir, name)).size;
      present += 1;
    } catch {
      // Counted as missing.
    }
  }
  let onDisk: string[] = [];
  try {
    onDisk = fs.readdirSync(bodyFilesDir(dataDir));
  } catch {
    onDisk = [];
  }
  const namedSet = new Set(named);
  return { named: named.length, present, bytes, unnamedFiles: onDisk.filter((f) => !namedSet.has(f)).length };
}

function databaseReport(db: Db, kind: StoreFileKind): Record<string, unknown> {
  const MIGRATIONS = MIGRATIONS_FOR[kind];
  const tables = new Set((db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((t) => t.name));
  const counts: Record<string, number> = {};
  for (const table of [...COUNTED_TABLES, ...[...tables].filter((t) => t.startsWith('staff_')).sort()]) {
    if (tables.has(table)) counts[table] = (db.prepare(`SELECT count(*) AS n FROM "${table}"`).get() as { n: number }).n;
  }
  const inboxBodies = tables.has('inbox')
    ? (db.prepare('SELECT count(DISTINCT inbox_id) AS kept, coalesce(sum(length(body)), 0) AS bytes FROM inbox_bodies').get() as { kept: number; bytes: number })
    : null;
  // Large bodies kept as files of their own (src/store/body-files.ts): how many and their size, and
  // whether each file a row names is there.
  const bodyFiles = tables.has('inbox_body_files') ? bodyFilesReport(db) : null;
  const known = new Map(MIGRATIONS.map((m) => [m.version, m.name]));
  return {
    bodyFiles,
    integrityCheck: (db.pragma('integrity_check(50)') as { integrity_check: string }[]).map((r) => r.integrity_check),
    migrations: appliedMigrations(db).map((m) => ({ ...m, knownToThisBuild: known.get(m.version) === m.name })),
    migrationsThisBuildKnows: MIGRATIONS.map((m) => ({ version: m.version, name: m.name })),
    journalMode: db.pragma('journal_mode', { simple: true }),
    autoVacuum: db.pragma('auto_vacuum', { simple: true }),
    pageSize: db.pragma('page_size', { simple: true }),
    pageCount: db.pragma('page_count', { simple: true }),
    freelistPages: db.pragma('freelist_count', { simple: true }),
    rowCounts: counts,
    inboxBodiesKept: inboxBodies,
  };
}

function syncReport(till: Db, db: Db, config: Readonly<Config>): Record<string, unknown> {
  return {
    locations: locationStatuses(till, db, config.sync.baseline),
    // Without senders: an address can be personal data, and support needs the sequence, not the caller.
    // Parser messages quote the start of a refused body: keep the message, drop the quotes.
    recentDeliveries: recentDeliveries(db, 200).map((d) => ({
      ...d,
      sender: d.sender === null ? null : '(omitted)',
      reason: d.reason === null ? null : d.reason.replace(/"[^"]*"/g, '"…"'),
    })),
    quarantine: db.prepare('SELECT id, received_at, source, content_type, body_bytes, error_id, field FROM quarantine ORDER BY id DESC LIMIT 100').all(),
    recentOperatorActions: db.prepare('SELECT id, at, action FROM audit_log ORDER BY id DESC LIMIT 100').all(),
  };
}

export interface DiagnosticsResult {
  readonly file: string;
  readonly bytes: number;
  readonly entries: string[];
}

/** Writes the support bundle to `out` (a .zip). Works with or without a running agent. */
export async function writeDiagnostics(config: Readonly<Config>, out: string, now: Date = new Date()): Promise<DiagnosticsResult> {
  const zip = new ZipFile();
  const entries: string[] = [];
  const add = (name: string, content: string | Buffer): void => {
    zip.addBuffer(Buffer.isBuffer(content) ? content : Buffer.from(content), name, { mtime: now });
    entries.push(name);
  };
  // Scrubbed value by value (not the JSON text), so the redactor's key patterns cannot mangle `"token": null`.
  const json = (value: unknown): string =>
    `${JSON.stringify(value, (_key, v: unknown) => (typeof v === 'string' ? scrubPersonalData(v) : v), 2)}\n`;

  add(
    'README.txt',
    [
      `pos-sync-agent diagnostics, ${now.toISOString()}`,
      '',
      'config.json      the effective configuration, secrets masked',
      'versions.json    agent, Node, Electron, better-sqlite3 and SQLite versions, OS, timezone data',
      'database.json    integrity check, migrations, sizes, row counts (no contents)',
      'sync-state.json  per-location chain state, recent deliveries (no bodies, no senders), quarantine summary',
      'operations.json  disk space, tunnel state, backups, clock and timezone checks, running agent',
      'logs/            the end of each log file (secrets redacted, e-mail addresses and NI numbers scrubbed)',
      '',
      'No personal data: staff records, payload bodies and sender addresses are not included.',
    ].join('\n'),
  );
  add('config.json', json(maskConfig(config)));

  // Each of the three files (counts only: no row of staff.db or of a payload goes into the zip).
  let sqliteVersion = 'unknown';
  const opened: Partial<Record<StoreFileKind, Db>> = {};
  const reports: Record<string, unknown> = {};
  for (const kind of ['till', 'agent', 'staff'] as const) {
    const dbFile = storeFilePath(config.dataDir, kind);
    if (!fs.existsSync(dbFile)) {
      reports[kind] = { file: dbFile, error: 'no database yet' };
      continue;
    }
    try {
      const db = new Database(dbFile, { readonly: true, fileMustExist: true });
      opened[kind] = db;
      db.pragma('busy_timeout = 5000');
      sqliteVersion = (db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;
      reports[kind] = { file: dbFile, bytes: fs.statSync(dbFile).size, ...databaseReport(db, kind) };
    } catch (err) {
      reports[kind] = { file: dbFile, error: describeError(err) };
    }
  }
  add('database.json', json(reports));
  try {
    if (opened.till && opened.agent) add('sync-state.json', json(syncReport(opened.till, opened.agent, config)));
  } catch (err) {
    add('sync-state.json', json({ error: describeError(err) }));
  } finally {
    for (const db of Object.values(opened)) db.close();
  }

  add(
    'versions.json',
    json({
      app: appVersion(),
      node: process.versions.node,
      electron: process.versions.electron ?? null,
      chrome: process.versions.chrome ?? null,
      betterSqlite3: betterSqliteVersion(),
      sqlite: sqliteVersion,
      platform: process.platform,
      arch: process.arch,
      osRelease: os.release(),
      machineTimezone: machineTimezone(),
      // The tz release of the agent's timezone table, and of this runtime's ICU (used only outside the table).
      tzTable: TZ_TABLE_RELEASE,
      tzIcu: process.versions.tz ?? null,
      uptimeSeconds: Math.round(os.uptime()),
    }),
  );

  const backups = listBackups(backupDir(config));
  add(
    'operations.json',
    json({
      runningAgent: runningAgent(config.dataDir) ? { running: true } : { running: false },
      disk: checkDisk(config, now),
      tunnel: readTunnelState(config.dataDir),
      backups: { dir: backupDir(config), files: backups.map((b) => ({ name: b.name, bytes: b.bytes, takenAt: b.takenAt })) },
      clock: clockState(config, machineTimezone(), clockWatch.observations(), now, siteTimezonesOnDisk(config)),
      secretsFileExists: fs.existsSync(secretsFile(config)),
    }),
  );

  const logs = logDir(config);
  let logFiles: string[] = [];
  try {
    logFiles = fs.readdirSync(logs).filter((f) => /\.(log|old\.log)$|\.log\.\d+$/.test(f) || f.endsWith('.log'));
  } catch {
    // No logs yet.
  }
  for (const name of logFiles.sort()) {
    try {
      add(`logs/${name}`, scrubPersonalData(tail(path.join(logs, name), LOG_TAIL_BYTES).toString('utf8')));
    } catch (err) {
      add(`logs/${name}.error.txt`, describeError(err));
    }
  }

  // `--out` may name a folder others can write: the zip is a new file (never through a planted link), renamed into place.
  const file = createExclusiveStream(out);
  try {
    await new Promise<void>((resolve, reject) => {
      file.stream.on('error', reject);
      zip.outputStream.on('error', reject);
      file.stream.on('close', () => resolve());
      zip.outputStream.pipe(file.stream);
      zip.end();
    });
    file.commit();
  } catch (err) {
    file.abandon();
    throw err;
  }
  return { file: path.resolve(out), bytes: fs.statSync(out).size, entries };
}

export function defaultDiagnosticsFile(config: Readonly<Config>, now: Date = new Date()): string {
  return path.join(config.dataDir, 'diagnostics', `pos-sync-diagnostics-${now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}.zip`);
}

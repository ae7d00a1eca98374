/**
 * Every bench's figures as data: each run writes one JSON file, bench/results/<bench>/<UTC time>.json,
 * with what it measured on (machine, Node, each SQLite, the commit and whether the tree had changes)
 * beside the figures. `npm run docs:figures` renders the docs' current-figures tables from the latest
 * file of each bench (bench/figures.ts), and a unit test holds the docs to that rendering. A run with
 * `--no-record` writes nothing (a quick check that should not replace the figures).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';

export const RESULTS_DIR = path.join(__dirname, 'results');

export interface BenchRecord<F = unknown> {
  readonly bench: string;
  /** The bench's own arguments (what followed `npm run bench:… --`), so its command can be shown as run. */
  readonly args?: readonly string[];
  /** When the run ended (ISO 8601, UTC). */
  readonly date: string;
  readonly commit: string;
  /** The tree had uncommitted changes: the figures are of something no commit holds. */
  readonly dirty: boolean;
  readonly machine: { readonly cpus: number; readonly cpuModel: string; readonly memoryBytes: number; readonly platform: string };
  /** The machine's one-minute load average when the bench started and when it ended (other jobs share it). */
  readonly loadAverage?: { readonly start: number; readonly end: number };
  readonly node: string;
  readonly sqlite: { readonly betterSqlite3: string; readonly nodeSqlite: string | null };
  readonly figures: F;
}

function git(args: string[]): string {
  try {
    return execFileSync('git', args, { cwd: path.join(__dirname, '..'), encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
}

function sqliteVersions(): BenchRecord['sqlite'] {
  const db = new Database(':memory:');
  const betterSqlite3 = (db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;
  db.close();
  const nodeSqlite = process.getBuiltinModule?.('node:sqlite') as typeof import('node:sqlite') | undefined;
  let version: string | null = null;
  if (nodeSqlite) {
    const n = new nodeSqlite.DatabaseSync(':memory:');
    version = String((n.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v);
    n.close();
  }
  return { betterSqlite3, nodeSqlite: version };
}

/**
 * The commit measured and whether the tree had changes, read when the bench starts: a long run must
 * not name a commit made while it ran.
 */
const STARTED_AT = {
  commit: git(['rev-parse', 'HEAD']) || 'unknown',
  dirty: git(['status', '--porcelain', '--', 'src', 'bench', 'scripts', 'package.json', ':!bench/results']) !== '',
  loadAverage: os.loadavg()[0]!,
};

/** Writes this run's record (unless the bench was given --no-record) and answers its path, or null. */
export function recordResult<F>(bench: string, figures: F, argv: readonly string[] = process.argv): string | null {
  if (argv.includes('--no-record')) return null;
  const record: BenchRecord<F> = {
    bench,
    args: process.argv.slice(2).filter((a) => a !== '--json'),
    date: new Date().toISOString(),
    commit: STARTED_AT.commit,
    dirty: STARTED_AT.dirty,
    loadAverage: { start: STARTED_AT.loadAverage, end: os.loadavg()[0]! },
    machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model ?? 'unknown', memoryBytes: os.totalmem(), platform: `${os.platform()} ${os.release()} ${os.arch()}` },
    node: process.version,
    sqlite: sqliteVersions(),
    figures,
  };
  const dir = path.join(RESULTS_DIR, bench);
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${record.date.replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`);
  process.stderr.write(`results: ${path.relative(process.cwd(), file)}\n`);
  return file;
}

/** The newest record of a bench (by its date), or null when it has none. */
export function latestResult<F = unknown>(bench: string, dir: string = RESULTS_DIR): BenchRecord<F> | null {
  const folder = path.join(dir, bench);
  if (!fs.existsSync(folder)) return null;
  const records = fs
    .readdirSync(folder)
    .filter((f) => f.endsWith('.json'))
    .map((f) => JSON.parse(fs.readFileSync(path.join(folder, f), 'utf8')) as BenchRecord<F>);
  records.sort((a, b) => a.date.localeCompare(b.date));
  return records.at(-1) ?? null;
}

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { UPCOMING_AVAILABILITY_SQL, UPCOMING_PRICES_SQL } from '../../src/till/changes';
import { openDatabase, storeFilePath } from '../../src/store/database';
import { SELECT_AVAILABILITY_SQL, SELECT_PRICES_SQL } from '../../src/till/writer';
import { TILL_MIGRATIONS } from '../../src/store/migrations';
import { BATCH_SQL } from '../../src/sync/range-prune';
import { tempDir } from '../helpers/fixtures';

/**
 * Issue 30: every read of the range tables bounded by a date must reach the ranges through a date_to
 * bound, so its cost follows the live data and not the history before the date. Checked with
 * EXPLAIN QUERY PLAN on each SQLite a till may run that is here: 3.31.1 (sql.js 1.2.2), 3.40.1 (Debian's,
 * through Python's sqlite3), 3.53 (node:sqlite) and 3.54 (better-sqlite3), on a file with a history,
 * without statistics, with ANALYZE's (sqlite_stat1, and the key samples of sqlite_stat4 where the build
 * gathers them) and with sqlite_stat1 only (what the agent's PRAGMA optimize leaves). No INDEXED BY: the
 * till's own queries are planned by whatever SQLite the till links.
 *
 * A step on a range table fails when it is a SCAN, or a SEARCH whose constraint has no date_to term
 * (a full-key search: every range of the item, or of the location, since the first publication).
 */

const LOCATION = 7;
const TODAY = '2027-03-15';
const AHEAD = '2027-09-13';

interface PlanQuery {
  readonly name: string;
  readonly sql: string;
  readonly params: readonly (string | number)[];
}

/** The till's lookups (the views, as docs/pos-database.md shows them, plain and `= +?`) and the agent's own date-bounded reads. */
const QUERIES: readonly PlanQuery[] = [
  { name: 'pos_prices_today by location and PLU', sql: 'SELECT * FROM pos_prices_today WHERE location_id = ? AND plu = ?', params: [LOCATION, '1003'] },
  { name: 'pos_prices_today by location and PLU (= +?)', sql: 'SELECT * FROM pos_prices_today WHERE location_id = +? AND plu = +?', params: [LOCATION, '1003'] },
  { name: 'pos_prices_today by PLU', sql: 'SELECT * FROM pos_prices_today WHERE plu = ?', params: ['1003'] },
  { name: 'pos_availability_today by location and PLU', sql: 'SELECT * FROM pos_availability_today WHERE location_id = ? AND plu = ?', params: [LOCATION, '1003'] },
  { name: 'pos_availability_today by location and PLU (= +?)', sql: 'SELECT * FROM pos_availability_today WHERE location_id = +? AND plu = +?', params: [LOCATION, '1003'] },
  { name: 'pos_prices on a date', sql: 'SELECT * FROM pos_prices WHERE location_id = ? AND plu = ? AND ? BETWEEN date_from AND date_to', params: [LOCATION, '1003', AHEAD] },
  { name: 'pos_prices on a date (= +?)', sql: 'SELECT * FROM pos_prices WHERE location_id = +? AND plu = +? AND +? BETWEEN date_from AND date_to', params: [LOCATION, '1003', AHEAD] },
  { name: 'pos_prices on a date, every location', sql: 'SELECT * FROM pos_prices WHERE plu = ? AND ? BETWEEN date_from AND date_to', params: ['1003', AHEAD] },
  { name: 'pos_availability on a date', sql: 'SELECT * FROM pos_availability WHERE location_id = ? AND plu = ? AND ? BETWEEN date_from AND date_to', params: [LOCATION, '1003', AHEAD] },
  { name: 'applier: a price key in a window', sql: SELECT_PRICES_SQL, params: [LOCATION, 'I3', 'Take Away', TODAY, AHEAD] },
  { name: 'applier: a meal period in a window', sql: SELECT_AVAILABILITY_SQL, params: [LOCATION, 'I3', 'Lunch', TODAY, AHEAD] },
  { name: 'Coming up: prices', sql: UPCOMING_PRICES_SQL, params: [LOCATION, TODAY, AHEAD] },
  { name: 'Coming up: availability', sql: UPCOMING_AVAILABILITY_SQL, params: [LOCATION, TODAY, AHEAD] },
  { name: 'retention: ended prices', sql: BATCH_SQL.price, params: ['2026-03-15', LOCATION, 500] },
  { name: 'retention: ended availability', sql: BATCH_SQL.availability, params: ['2026-03-15', LOCATION, 500] },
];

/** The plan's steps that read a range table without a date_to bound. */
function fullKeyReads(steps: readonly string[]): string[] {
  return steps.filter((step) => {
    // 3.31 says "SEARCH TABLE price_ranges AS p", newer ones "SEARCH p".
    const m = /^(SCAN|SEARCH)( TABLE)? (price_ranges|availability_ranges|p|a)\b(.*)$/.exec(step);
    if (!m) return false;
    if (m[1] === 'SCAN') return true;
    // The DELETE's own step finds each chosen row by its rowid.
    if (/INTEGER PRIMARY KEY \(rowid=\?\)/.test(m[4]!)) return false;
    return !/\bdate_to[<>]/.test(m[4]!);
  });
}

const DAY = 86_400_000;
const iso = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** A till file at `migrations`, with three years of monthly ranges per key for 40 items (and day rows for now). */
function tillWithHistory(migrations = TILL_MIGRATIONS): string {
  const dir = tempDir('pos-sync-plans-');
  const file = storeFilePath(dir, 'till');
  const db = openDatabase(file, { migrations });
  db.transaction(() => {
    db.prepare("INSERT INTO locations (location_id, location_name, currency, last_change_sequence) VALUES (?, 'L', 'GBP', 1)").run(LOCATION);
    const item = db.prepare("INSERT INTO items (location_id, item_id, plu, item_name, item_type, updated_by) VALUES (?, ?, ?, 'n', 'RECIPE', 1)");
    const price = db.prepare(
      `INSERT INTO price_ranges (location_id, item_id, tariff_name, date_from, date_to, tax_code, tax_rate, sell_price_minor, sell_price, currency, source_inbox_id)
       VALUES (?, ?, ?, ?, ?, 'S', 20, 100, '1.00', 'GBP', 1)`,
    );
    const availability = db.prepare("INSERT INTO availability_ranges (location_id, item_id, meal_period, date_from, date_to, status, source_inbox_id) VALUES (?, ?, ?, ?, ?, 'AVAILABLE', 1)");
    const start = Date.parse('2025-01-01');
    for (let n = 0; n < 40; n++) {
      item.run(LOCATION, `I${n}`, String(1000 + n));
      for (let m = 0; m < 36; m++) {
        const from = iso(start + m * 30 * DAY);
        const to = iso(start + (m * 30 + 29) * DAY);
        for (const t of ['Eat In', 'Take Away', 'Delivery']) price.run(LOCATION, `I${n}`, t, from, to);
        for (const p of ['Lunch', 'Dinner']) availability.run(LOCATION, `I${n}`, p, from, to);
      }
    }
    const now = Date.now();
    const utc = (ms: number): string => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
    db.prepare('INSERT INTO location_days (location_id, utc_from, utc_to, local_date) VALUES (?, ?, ?, ?)').run(LOCATION, utc(now - 3_600_000), utc(now + DAY), TODAY);
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return file;
}

type Statistics = 'none' | 'analyze' | 'stat1';

/** A copy of `file` with the statistics asked for (ANALYZE run by better-sqlite3's SQLite, which gathers STAT4 samples). */
function withStatistics(file: string, statistics: Statistics): string {
  const copy = path.join(path.dirname(file), `plans-${statistics}.db`);
  fs.copyFileSync(file, copy);
  if (statistics === 'none') return copy;
  const db = new Database(copy);
  db.exec('ANALYZE');
  if (statistics === 'stat1') db.exec("DELETE FROM sqlite_stat4; ANALYZE sqlite_schema");
  db.pragma('journal_mode = DELETE');
  db.close();
  return copy;
}

type Engine = { readonly name: string; plans(file: string): Promise<{ version: string; plans: string[][] }> };

const ENGINES: readonly Engine[] = [
  {
    name: 'better-sqlite3',
    plans: async (file) => {
      const db = new Database(file, { readonly: true });
      try {
        const version = (db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;
        return { version, plans: QUERIES.map((q) => (db.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).all(...q.params) as { detail: string }[]).map((r) => r.detail)) };
      } finally {
        db.close();
      }
    },
  },
  {
    name: 'node:sqlite',
    plans: async (file) => {
      type Stmt = { all(...v: (string | number)[]): unknown[]; get(): unknown };
      const { DatabaseSync } = process.getBuiltinModule('node:sqlite') as { DatabaseSync: new (f: string, o: { readOnly: boolean }) => { prepare(s: string): Stmt; close(): void } };
      const db = new DatabaseSync(file, { readOnly: true });
      try {
        const version = (db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;
        return { version, plans: QUERIES.map((q) => (db.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).all(...q.params) as { detail: string }[]).map((r) => r.detail)) };
      } finally {
        db.close();
      }
    },
  },
  {
    name: 'python3 sqlite3 (the system SQLite)',
    plans: async (file) => {
      const script = `
import json, sqlite3, sys
queries = json.load(sys.stdin)
db = sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True)
print(json.dumps({'version': sqlite3.sqlite_version, 'plans': [[r[3] for r in db.execute('EXPLAIN QUERY PLAN ' + q['sql'], q['params'])] for q in queries]}))
`;
      const run = spawnSync('python3', ['-c', script, file], { input: JSON.stringify(QUERIES), encoding: 'utf8' });
      assert.equal(run.status, 0, run.stderr);
      return JSON.parse(run.stdout) as { version: string; plans: string[][] };
    },
  },
  {
    name: 'sql.js 1.2.2',
    plans: async (file) => {
      type SqlJsDatabase = { exec(sql: string, params?: readonly (string | number)[]): { values: unknown[][] }[]; close(): void };
      // The asm.js build: no WebAssembly file to fetch (test/integration/till-file-compat.test.ts).
      const init = require('sql.js/dist/sql-asm.js') as () => Promise<{ Database: new (data: Uint8Array) => SqlJsDatabase }>;
      const SQL = await init();
      const bytes = new Uint8Array(fs.readFileSync(file));
      // No WAL in sql.js: the image is marked rollback-journal.
      bytes[18] = 1;
      bytes[19] = 1;
      const db = new SQL.Database(bytes);
      try {
        const version = String(db.exec('SELECT sqlite_version()')[0]!.values[0]![0]);
        return { version, plans: QUERIES.map((q) => (db.exec(`EXPLAIN QUERY PLAN ${q.sql}`, q.params)[0]?.values ?? []).map((r) => String(r[3]))) };
      } finally {
        db.close();
      }
    },
  },
];

describe('date-bounded reads of the range tables (issue 30)', () => {
  const file = tillWithHistory();

  it('the check finds the full-key searches of the 0.2 schema (till migrations 1-4)', async () => {
    const old = tillWithHistory(TILL_MIGRATIONS.filter((m) => m.version <= 4));
    const { plans } = await ENGINES[0]!.plans(old);
    const flagged = QUERIES.filter((_, i) => fullKeyReads(plans[i]!).length > 0).map((q) => q.name);
    // Every one of them read all the item's (or location's) ranges under 0.2.
    assert.deepEqual(flagged, QUERIES.map((q) => q.name));
  });

  for (const engine of ENGINES) {
    for (const statistics of ['none', 'analyze', 'stat1'] as const) {
      it(`${engine.name}, statistics ${statistics}: every range read is bounded by date_to`, async (ctx) => {
        const { version, plans } = await engine.plans(withStatistics(file, statistics));
        ctx.diagnostic(`SQLite ${version}`);
        const failures = QUERIES.flatMap((q, i) => fullKeyReads(plans[i]!).map((step) => `${q.name}: ${step}   [${plans[i]!.join(' | ')}]`));
        assert.deepEqual(failures, [], `SQLite ${version}`);
        // And each query did read a range table (a plan without one would pass the check vacuously).
        for (const [i, q] of QUERIES.entries()) assert.ok(plans[i]!.some((s) => /\bdate_to[<>]/.test(s)), `${q.name}: ${plans[i]!.join(' | ')}`);
      });
    }
  }

  it('the engines here span the SQLite versions a till may run', async () => {
    const versions = await Promise.all(ENGINES.map(async (e) => (await e.plans(file)).version));
    const minor = versions.map((v) => Number(v.split('.')[1]));
    assert.ok(Math.min(...minor) <= 31, versions.join(', '));
    assert.ok(Math.max(...minor) >= 54, versions.join(', '));
  });
});

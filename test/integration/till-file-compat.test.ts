import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { storeFilePath } from '../../src/store/database';
import { writeLocationOffsets } from '../../src/till/location-time';
import { folderWithSamples } from '../helpers/sample-folder';

/**
 * The till's file must open in the SQLite builds POS drivers bundle (3.31 and newer) and report a
 * declared type for every view column (ODBC/ADO drivers map an undeclared type to VARCHAR). Checked
 * with the real engines: SQLite 3.31.1 (sql.js 1.2.2, an Emscripten build of the SQLite amalgamation)
 * and unixODBC with Debian's SQLite3 ODBC driver.
 */
const VIEWS = ['pos_prices', 'pos_availability', 'pos_prices_today', 'pos_availability_today', 'pos_sync_state', 'pos_changes'];
const FIXTURE_0_1 = path.join(__dirname, '..', 'fixtures', 'legacy-0.1', 'pos-sync.db');

interface SqlJsDatabase {
  exec(sql: string): { columns: string[]; values: unknown[][] }[];
  close(): void;
}
type SqlJs = { Database: new (data: Uint8Array) => SqlJsDatabase };

async function sqlite331(): Promise<SqlJs> {
  // The asm.js build: no WebAssembly file to fetch. Pinned to 1.2.2, whose engine is SQLite 3.31.1.
  const init = require('sql.js/dist/sql-asm.js') as () => Promise<SqlJs>;
  return init();
}

/** The till file's bytes as an in-memory image (sql.js has no WAL: the copy is marked rollback-journal). */
function imageOf(file: string): Uint8Array {
  const bytes = new Uint8Array(fs.readFileSync(file));
  bytes[18] = 1;
  bytes[19] = 1;
  return bytes;
}

function tillWithSamples(): string {
  const dir = folderWithSamples('pos-sync-compat-');
  const file = storeFilePath(dir, 'till');
  const db = new Database(file);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return file;
}

describe('the till file and old SQLite builds', () => {
  it('opens and answers the POS views in SQLite 3.31.1, exactly as in this build', async () => {
    const file = tillWithSamples();
    // Day rows over the samples' dates (December 2026 to February 2027), whenever this test runs: the
    // agent writes them from a week back, so after March 2027 it would have none there.
    const writer = new Database(file);
    for (const { location_id } of writer.prepare('SELECT location_id FROM locations').all() as { location_id: number }[]) {
      writeLocationOffsets(writer, location_id, 'Europe/London', Date.parse('2026-11-01T00:00:00Z'), Date.parse('2027-04-01T00:00:00Z'));
    }
    writer.pragma('wal_checkpoint(TRUNCATE)');
    writer.close();
    const SQL = await sqlite331();
    const old = new SQL.Database(imageOf(file));
    const current = new Database(file, { readonly: true });
    try {
      assert.equal(old.exec('SELECT sqlite_version()')[0]!.values[0]![0], '3.31.1');
      // Every view compiles in 3.31.1 (schema parsed, views expanded, plans built).
      for (const view of VIEWS) assert.ok(old.exec(`EXPLAIN SELECT * FROM ${view}`).length > 0, view);
      // And answers the same rows. (This Emscripten build has no localtime(), which the _today views'
      // fallback date('now', 'localtime') needs: SQLite evaluates it once per statement even when each
      // location's day rows make it unused. Their text is run in 3.31.1 just below.)
      for (const view of VIEWS.filter((v) => !v.endsWith('_today'))) {
        const sql = `SELECT * FROM ${view} ORDER BY 1, 2, 3, 4`;
        const got = old.exec(sql)[0]?.values ?? [];
        const want = (current.prepare(sql).raw().all() as unknown[][]).map((r) => r.map((v) => (typeof v === 'bigint' ? Number(v) : v)));
        assert.deepEqual(got, want, view);
      }
      assert.ok((old.exec('SELECT count(*) FROM pos_prices')[0]!.values[0]![0] as number) > 0, 'the samples are in the views');
      // The _today views themselves in 3.31.1. This build cannot read 'now' as a time (its time() and
      // datetime() need a libc call Emscripten left out), so both engines run each view's own text with
      // an explicit instant in place of 'now', and the fallback for an instant without a day row (the
      // PC's local date) replaced by a date no range contains: every sample location has its day rows,
      // and the test fails if a row depended on the fallback. This build's views are then checked
      // against the same text at 'now'.
      const instant = "'2026-12-25 12:00:00'";
      for (const view of ['pos_prices_today', 'pos_availability_today']) {
        const text = (current.prepare('SELECT sql FROM sqlite_master WHERE name = ?').get(view) as { sql: string }).sql;
        const select = text.slice(text.indexOf(' AS\nSELECT') + 4).replace("date('now', 'localtime')", "'0000-01-01'");
        assert.ok(select.startsWith('SELECT') && !select.includes('localtime'), select);
        const at = (now: string): string => `SELECT * FROM (${select.replaceAll("'now'", now)}) ORDER BY 1, 2, 3, 4`;
        // This build's datetime() also fails with any modifier ("qa is not a function", a libc call
        // Emscripten left out; date() with a modifier works): the day rows' lower bound is given to it
        // as the value this build computes. Real 3.31 builds have had the modifier since 3.0.
        const bound = `datetime(${instant}, '-2 days')`;
        assert.ok(at(instant).includes(bound), 'the views bound the day rows to two days');
        const at331 = at(instant).replaceAll(bound, `'${(current.prepare(`SELECT ${bound} AS b`).get() as { b: string }).b}'`);
        const rows = current.prepare(at(instant)).raw().all();
        assert.ok(rows.length > 0, `${view}: the samples have rows on ${instant}`);
        assert.deepEqual(old.exec(at331)[0]?.values ?? [], rows, `${view} at ${instant}`);
        assert.deepEqual(current.prepare(at331).raw().all(), rows, `${view} at ${instant}, with the bound given`);
        assert.deepEqual(current.prepare(`SELECT * FROM ${view} ORDER BY 1, 2, 3, 4`).raw().all(), current.prepare(at("'now'")).raw().all(), view);
      }
      assert.ok((old.exec('SELECT count(*) FROM pos_changes')[0]!.values[0]![0] as number) > 0, 'the samples are in the change feed');
      // The till's poll, as documented (docs/pos-database.md, "Change feed").
      const polled = old.exec('SELECT change_id, location_id, item_id, plu FROM pos_changes WHERE change_id > 1 ORDER BY change_id')[0]?.values ?? [];
      assert.deepEqual(polled, current.prepare('SELECT change_id, location_id, item_id, plu FROM pos_changes WHERE change_id > 1 ORDER BY change_id').raw().all());
    } finally {
      old.close();
      current.close();
    }
  });

  it('is what 0.1 got wrong: its STRICT schema is unreadable in SQLite 3.31.1', async () => {
    const SQL = await sqlite331();
    const old = new SQL.Database(imageOf(FIXTURE_0_1));
    try {
      assert.throws(() => old.exec('SELECT * FROM pos_prices'), /malformed database schema/);
    } finally {
      old.close();
    }
  });

  it('declares a type for every view column (sqlite3_column_decltype, what ODBC and ADO.NET report)', () => {
    const file = tillWithSamples();
    const db = new Database(file, { readonly: true });
    try {
      for (const view of VIEWS) {
        const untyped = db.prepare(`SELECT * FROM ${view}`).columns().filter((c) => !c.type).map((c) => c.name);
        assert.deepEqual(untyped, [], `${view} has columns without a declared type`);
      }
    } finally {
      db.close();
    }
  });

  it('an ODBC application (unixODBC + SQLite3 ODBC driver) sees INTEGER and TEXT, never an empty type', () => {
    const python = fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
    const probe = spawnSync(python, ['-c', 'import pyodbc'], { encoding: 'utf8' });
    assert.equal(
      probe.status,
      0,
      `python3-pyodbc is needed for this check: sudo apt-get install -y python3-pyodbc unixodbc libsqliteodbc (${probe.stderr.trim().split('\n').pop()})`,
    );
    const run = (db: string): Record<string, Record<string, string>> => {
      const r = spawnSync(python, [path.join(__dirname, '..', 'helpers', 'odbc-columns.py'), db, ...VIEWS], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      return JSON.parse(r.stdout) as Record<string, Record<string, string>>;
    };
    const now = run(tillWithSamples());
    for (const view of VIEWS) {
      const bad = Object.entries(now[view]!).filter(([, type]) => !['INTEGER', 'TEXT'].includes(type));
      assert.deepEqual(bad, [], `${view}: ${JSON.stringify(now[view])}`);
    }
    assert.equal(now.pos_sync_state!.waiting_updates, 'INTEGER');
    assert.equal(now.pos_sync_state!.warnings, 'INTEGER');
    // 0.1's file, for contrast: its counts had no declared type (reported as VARCHAR).
    const before = run(FIXTURE_0_1);
    assert.equal(before.pos_sync_state!.waiting_updates, '');
  });
});

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { AgentCore } from '../../src/core';
import { dateOf, dayOf, encode, generateChains, todayInZone } from '../../src/dev/publisher';
import { silentLogger } from '../../src/log';
import { storeFilePath } from '../../src/store/database';
import { locationToday } from '../../src/till/location-time';
import { lookupStatements } from '../../src/till/lookup';
import { tempDir, testConfig } from '../helpers/fixtures';

/**
 * Which forms of a prepared lookup SQLite plans again on every run, measured on each SQLite at hand:
 * better-sqlite3's (the agent's binding), node:sqlite's (Node's own) and the system library through
 * Python (as a POS over the system library reads). Neither Node binding exposes a statement's
 * status, so a small extension (test/helpers/sqlite/stmt-reprepares.c, compiled here with the system's
 * C compiler against libsqlite3-dev's headers) is loaded into each and reads
 * sqlite3_stmt_status(SQLITE_STMTSTATUS_REPREPARE) for the lookup's statement after many runs with
 * other PLUs; Python calls the system library through ctypes, binding and clearing as the Node
 * bindings do (test/helpers/sqlite/reprepares.py). The test then holds docs/pos-database.md's table ("Prepared lookups") to what was
 * measured, SQLite by SQLite, and holds the agent's own lookups (src/till/lookup.ts) to never being
 * planned again, with the same rows and the same plan as the plain form.
 */

const ROOT = path.resolve(__dirname, '..', '..');
const RUNS = 40;
const DOC = path.join(ROOT, 'docs', 'pos-database.md');

const plainToday = {
  prices: 'SELECT plu, item_name, tariff_name, sell_price_minor, tax_code FROM pos_prices_today WHERE location_id = ? AND plu = ?',
  availability: 'SELECT meal_period, status FROM pos_availability_today WHERE location_id = ? AND plu = ?',
};
const plusToday = {
  prices: 'SELECT plu, item_name, tariff_name, sell_price_minor, tax_code FROM pos_prices_today WHERE location_id = +? AND plu = +?',
  availability: 'SELECT meal_period, status FROM pos_availability_today WHERE location_id = +? AND plu = +?',
};
const agent = lookupStatements(true);
/** The agent's lookups as they were written before, with plain parameters: the comparison. */
const agentPlain = { prices: agent.prices.replaceAll('+@', '@'), availability: agent.availability.replaceAll('+@', '@') };

type Form = 'plain' | 'plus';
interface Lookup {
  readonly name: string;
  readonly form: Form;
  readonly sql: string;
  /** Positional values (the views) or named ones (the agent's lookups). */
  readonly named: boolean;
}
const LOOKUPS: readonly Lookup[] = [
  { name: 'today prices', form: 'plain', sql: plainToday.prices, named: false },
  { name: 'today availability', form: 'plain', sql: plainToday.availability, named: false },
  { name: 'today prices', form: 'plus', sql: plusToday.prices, named: false },
  { name: 'today availability', form: 'plus', sql: plusToday.availability, named: false },
  { name: 'agent prices', form: 'plain', sql: agentPlain.prices, named: true },
  { name: 'agent availability', form: 'plain', sql: agentPlain.availability, named: true },
  { name: 'agent prices', form: 'plus', sql: agent.prices, named: true },
  { name: 'agent availability', form: 'plus', sql: agent.availability, named: true },
];
const key = (l: Lookup): string => `${l.name} (${l.form})`;

function menu(): { file: string; location: number; plus: string[]; date: string } {
  const dataDir = tempDir('pos-sync-replan-');
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const today = todayInZone(zone);
  const [chain] = generateChains({ seed: 5, locations: 1, updatesPerLocation: 1, startDate: dateOf(dayOf(today) - 30), days: 365, itemsPerLocation: 80, tariffs: 3, mealPeriods: 3, scheduling: 'all', rangesPerKey: 6 });
  const update = chain!.updates[0]!;
  const core = new AgentCore(testConfig({ dataDir }), silentLogger);
  try {
    assert.equal(core.importPayload(encode(update), 'test').applied.length, 1);
  } finally {
    core.close();
  }
  const file = storeFilePath(dataDir, 'till');
  const db = new Database(file, { readonly: true });
  const date = locationToday(db, update.locationId) ?? today;
  db.close();
  return { file, location: update.locationId, plus: (update.body.ScheduledItems as { PLU: unknown }[]).map((i) => String(i.PLU)).slice(0, RUNS), date };
}

function params(l: Lookup, m: ReturnType<typeof menu>): unknown[] {
  return m.plus.map((plu) => (l.named ? { plu, date: m.date, locationId: m.location } : [m.location, plu]));
}

function buildExtension(): string {
  const out = path.join(tempDir('pos-sync-replan-ext-'), 'stmt_reprepares.so');
  execFileSync('cc', ['-shared', '-fPIC', '-O1', '-o', out, path.join(ROOT, 'test', 'helpers', 'sqlite', 'stmt-reprepares.c')], { stdio: 'pipe' });
  return out;
}

interface Measured {
  readonly sqlite: string;
  readonly reprepares: Record<string, number>;
  readonly rows: Record<string, number[]>;
}

/** One binding's connection as the measurement needs it: run a statement kept prepared, read one value. */
interface Conn {
  prepare(sql: string): { all(...args: unknown[]): unknown[] };
  value(sql: string, arg: string): unknown;
  close(): void;
}

function measureNode(conn: Conn, m: ReturnType<typeof menu>): Measured {
  const reprepares: Record<string, number> = {};
  const rows: Record<string, number[]> = {};
  for (const l of LOOKUPS) {
    const statement = conn.prepare(l.sql);
    rows[key(l)] = params(l, m).map((p) => statement.all(...(Array.isArray(p) ? p : [p])).length);
    reprepares[key(l)] = Number(conn.value('SELECT stmt_reprepares(?) AS n', l.sql));
  }
  const sqlite = String(conn.value('SELECT sqlite_version() AS n', ''));
  return { sqlite, reprepares, rows };
}

function betterSqlite3(file: string, extension: string): Conn {
  const db = new Database(file, { readonly: true });
  db.loadExtension(extension);
  return {
    prepare: (sql) => {
      const s = db.prepare(sql);
      return { all: (...args) => s.all(...(args as never[])) };
    },
    value: (sql, arg) => (sql.includes('?') ? (db.prepare(sql).get(arg) as { n: unknown }).n : (db.prepare(sql).get() as { n: unknown }).n),
    close: () => db.close(),
  };
}

function nodeSqlite(file: string, extension: string): Conn {
  const { DatabaseSync } = process.getBuiltinModule('node:sqlite');
  const db = new DatabaseSync(file, { readOnly: true, allowExtension: true });
  db.loadExtension(extension);
  return {
    prepare: (sql) => {
      const s = db.prepare(sql);
      return { all: (...args) => s.all(...(args as never[])) };
    },
    value: (sql, arg) => (sql.includes('?') ? (db.prepare(sql).get(arg) as { n: unknown }).n : (db.prepare(sql).get() as { n: unknown }).n),
    close: () => db.close(),
  };
}

function python(file: string, m: ReturnType<typeof menu>): Measured {
  const job = { lookups: Object.fromEntries(LOOKUPS.map((l) => [key(l), l.sql])), params: Object.fromEntries(LOOKUPS.map((l) => [key(l), params(l, m)])) };
  const out = execFileSync('python3', [path.join(ROOT, 'test', 'helpers', 'sqlite', 'reprepares.py'), file, JSON.stringify(job)], { encoding: 'utf8' });
  return JSON.parse(out) as Measured;
}

/** docs/pos-database.md's table: SQLite version -> whether each form is planned again on every run. */
function documented(): Map<string, Record<Form, boolean>> {
  const text = fs.readFileSync(DOC, 'utf8');
  const table = new Map<string, Record<Form, boolean>>();
  for (const m of text.matchAll(/^ *\| (\d+\.\d+\.\d+) [^|]*\| ([^|]+) \| ([^|]+) \|$/gm)) {
    const again = (cell: string): boolean => {
      if (/planned again on every run/.test(cell)) return true;
      if (/planned once/.test(cell)) return false;
      throw new Error(`docs/pos-database.md: cannot read "${cell.trim()}"`);
    };
    table.set(m[1]!, { plain: again(m[2]!), plus: again(m[3]!) });
  }
  return table;
}

describe('prepared lookups: which forms SQLite plans again (measured)', () => {
  const m = menu();
  const extension = buildExtension();
  const measured: { where: string; result: Measured }[] = [];
  for (const [where, open] of [
    ['better-sqlite3', betterSqlite3],
    ['node:sqlite', nodeSqlite],
  ] as const) {
    const conn = open(m.file, extension);
    try {
      measured.push({ where, result: measureNode(conn, m) });
    } finally {
      conn.close();
    }
  }
  measured.push({ where: "the system's SQLite (Python)", result: python(m.file, m) });

  it('reads real lookups: every PLU is found through every form on every SQLite', () => {
    for (const { where, result } of measured) {
      for (const l of LOOKUPS) {
        const counts = result.rows[key(l)]!;
        assert.equal(counts.length, m.plus.length, `${where}: ${key(l)} ran for every PLU`);
        if (l.name.includes('prices')) assert.ok(counts.every((n) => n > 0), `${where}: ${key(l)} found prices for every PLU`);
      }
    }
  });

  it('the plus form answers the same rows as the plain form, on every SQLite', () => {
    for (const { where, result } of measured) {
      for (const l of LOOKUPS.filter((x) => x.form === 'plus')) {
        assert.deepEqual(result.rows[key(l)], result.rows[`${l.name} (plain)`], `${where}: ${l.name}`);
      }
    }
    const db = new Database(m.file, { readonly: true });
    try {
      for (const [plain, plus] of [
        [plainToday.prices, plusToday.prices],
        [agentPlain.prices, agent.prices],
      ] as const) {
        for (const p of params({ name: '', form: 'plain', sql: '', named: plain.includes('@') }, m).slice(0, 5)) {
          const args = Array.isArray(p) ? p : [p];
          assert.deepEqual(db.prepare(plus).all(...(args as never[])), db.prepare(plain).all(...(args as never[])));
        }
      }
    } finally {
      db.close();
    }
  });

  it('the plus form is planned as the plain form (same query plan)', () => {
    const db = new Database(m.file, { readonly: true });
    try {
      const plan = (sql: string): string[] => (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...(sql.includes('@') ? [{ plu: '1', date: m.date, locationId: m.location }] : [m.location, '1'])) as { detail: string }[]).map((r) => r.detail);
      assert.deepEqual(plan(plusToday.prices), plan(plainToday.prices));
      assert.deepEqual(plan(plusToday.availability), plan(plainToday.availability));
      assert.deepEqual(plan(agent.prices), plan(agentPlain.prices));
      assert.deepEqual(plan(agent.availability), plan(agentPlain.availability));
    } finally {
      db.close();
    }
  });

  it("the agent's own lookups and the plus form are never planned again, on any SQLite", () => {
    for (const { where, result } of measured) {
      for (const l of LOOKUPS.filter((x) => x.form === 'plus')) assert.equal(result.reprepares[key(l)], 0, `${where} (SQLite ${result.sqlite}): ${key(l)}`);
    }
  });

  it('docs/pos-database.md says for each of these SQLite versions what was measured', (t) => {
    for (const { where, result } of measured) t.diagnostic(`${where}, SQLite ${result.sqlite}: re-preparations in ${RUNS} runs ${JSON.stringify(result.reprepares)}`);
    const table = documented();
    for (const { where, result } of measured) {
      const says = table.get(result.sqlite);
      assert.ok(says, `docs/pos-database.md has no row for SQLite ${result.sqlite} (${where}): add what this test measured: ${JSON.stringify(result.reprepares)}`);
      for (const l of LOOKUPS.filter((x) => x.name.startsWith('today'))) {
        const n = result.reprepares[key(l)]!;
        const again = n >= RUNS - 1;
        assert.ok(n === 0 || again, `${where}: ${key(l)} was planned again ${n} times in ${RUNS} runs: neither never nor every run`);
        assert.equal(again, says[l.form], `${where} (SQLite ${result.sqlite}): ${key(l)} planned again ${n} times in ${RUNS} runs; the docs say ${says[l.form] ? 'every run' : 'once'}`);
      }
    }
  });
});

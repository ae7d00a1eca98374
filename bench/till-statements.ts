/**
 * The bench's till: the POS contract's two lookups by location and PLU for today (prices, then meal
 * periods, through the `_today` views), prepared once, on one of two SQLite bindings for Node:
 *
 * - `node:sqlite` (Node's built-in module; SQLite 3.53.4 in Node 24.21).
 * - `better-sqlite3` (the agent's own binding; SQLite 3.54.1 in 13.2).
 *
 * Both clear a statement's bindings on every run (better-sqlite3 after it, node:sqlite before it binds
 * the new values), as many POS drivers do too. From 3.54 SQLite reads the value bound to a `column = ?`
 * term while planning a query that joins tables (whereLoopOutputAdjust; 3.53 did not) and marks the
 * statement to be planned again once that value is cleared, so on 3.54 every lookup through the views
 * is prepared again: p50 0.08 ms instead of 0.027 ms on the L menu, and a p99 of 0.14-0.22 ms for that
 * reader on an idle machine (docs/performance.md, "Reading the till's file"). `replansBoundLookups`
 * tells which SQLite does that; the bench says so when its till's does.
 *
 * The same statements and the same results either way; a test (test/integration/bench-till.test.ts)
 * checks both bindings answer alike.
 */
import { openReadOnly } from '../src/store/database';

export type TillBinding = 'node:sqlite' | 'better-sqlite3';
export const TILL_BINDINGS: readonly TillBinding[] = ['node:sqlite', 'better-sqlite3'];

export const PRICES_TODAY_SQL = 'SELECT plu, item_name, tariff_name, sell_price_minor, tax_code FROM pos_prices_today WHERE location_id = ? AND plu = ?';
export const AVAILABILITY_TODAY_SQL = 'SELECT meal_period, status FROM pos_availability_today WHERE location_id = ? AND plu = ?';

export interface TillStatements {
  /** The SQLite the binding links (sqlite_version()): what the figures hold for. */
  readonly sqliteVersion: string;
  prices(location: number, plu: string): unknown[];
  availability(location: number, plu: string): unknown[];
  close(): void;
}

/** What the till needs of a connection; better-sqlite3's Database and node:sqlite's DatabaseSync both have it. */
interface TillConnection {
  prepare(sql: string): { all(...values: (number | string)[]): unknown[]; get(): unknown };
  close(): void;
}

/** A read-only better-sqlite3 connection, as the agent's own readers open one. */
function openBetterSqlite3(file: string): TillConnection {
  const db = openReadOnly(file);
  return { prepare: (sql) => db.prepare<unknown[]>(sql), close: () => db.close() };
}

/**
 * Node's built-in SQLite module, or undefined where this Node has none without a flag (before 22.13):
 * getBuiltinModule answers undefined for such a module. Only the bench needs it; the agent reads and
 * writes through better-sqlite3.
 */
export function nodeSqlite(): typeof import('node:sqlite') | undefined {
  return process.getBuiltinModule?.('node:sqlite') as typeof import('node:sqlite') | undefined;
}

/** The one line a bench prints when its till would read through node:sqlite and this Node has none. */
export const NODE_SQLITE_MISSING = `the bench's till reads through node:sqlite, which this Node (${process.version}) does not have: use Node 22.14 or newer (as the agent needs), or --till-binding better-sqlite3`;

/** A read-only node:sqlite connection set up as openReadOnly sets up better-sqlite3's. */
function openNodeSqlite(file: string): TillConnection {
  const module = nodeSqlite();
  if (module === undefined) throw new Error(NODE_SQLITE_MISSING);
  const db = new module.DatabaseSync(file, { readOnly: true });
  // Wait for a writer's checkpoint instead of failing.
  db.exec('PRAGMA busy_timeout = 5000');
  return db;
}

/**
 * Whether a reader that clears its bindings on every run, as both bindings here do, has each lookup
 * through the views planned again by this SQLite: 3.54 and newer.
 */
export function replansBoundLookups(sqliteVersion: string): boolean {
  const [major = 0, minor = 0] = sqliteVersion.split('.').map(Number);
  return major > 3 || (major === 3 && minor >= 54);
}

export function parseTillBinding(text: string | undefined, fallback: TillBinding): TillBinding {
  if (text === undefined) return fallback;
  if ((TILL_BINDINGS as readonly string[]).includes(text)) return text as TillBinding;
  throw new Error(`--till-binding must be one of ${TILL_BINDINGS.join(', ')}, not ${text}`);
}

/** Opens the till's file read-only, as a till does, and prepares the two lookups once. */
export function openTill(file: string, binding: TillBinding): TillStatements {
  const db: TillConnection = binding === 'better-sqlite3' ? openBetterSqlite3(file) : openNodeSqlite(file);
  const prices = db.prepare(PRICES_TODAY_SQL);
  const availability = db.prepare(AVAILABILITY_TODAY_SQL);
  const { v } = db.prepare('SELECT sqlite_version() AS v').get() as { v: string };
  return { sqliteVersion: v, prices: (l, p) => prices.all(l, p), availability: (l, p) => availability.all(l, p), close: () => db.close() };
}

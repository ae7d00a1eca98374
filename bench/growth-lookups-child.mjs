/**
 * bench/growth.ts's till: a process of its own (a second SQLite library in the agent's process would
 * share its file locks, and closing one connection could truncate the other's shared memory), reading
 * the till's file read-only through node:sqlite as the other benches' till does, with the lookups
 * prepared once. Reads one JSON object on stdin: { file, ahead, rounds, lookups: [[location, plu], ...] };
 * writes { sqlite, rounds: [{ todayMs, aheadMs }], rows } on stdout (every lookup once per round). Each
 * PLU is looked up once before timing, as a till that has been serving for a while has its page cache warm.
 */
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';

const { file, ahead, rounds: roundCount, lookups } = JSON.parse(fs.readFileSync(0, 'utf8'));
const { DatabaseSync } = process.getBuiltinModule('node:sqlite');
const db = new DatabaseSync(file, { readOnly: true });
db.exec('PRAGMA busy_timeout = 5000');
const today = db.prepare('SELECT plu, item_name, tariff_name, sell_price_minor, tax_code FROM pos_prices_today WHERE location_id = ? AND plu = ?');
const onDate = db.prepare('SELECT plu, item_name, tariff_name, sell_price_minor, tax_code FROM pos_prices WHERE location_id = ? AND plu = ? AND ? BETWEEN date_from AND date_to');
for (const [location, plu] of lookups) {
  today.all(location, plu);
  onDate.all(location, plu, ahead);
}
const rounds = [];
let rows = 0;
for (let r = 0; r < roundCount; r++) {
  const todayMs = [];
  const aheadMs = [];
  for (const [location, plu] of lookups) {
    let t0 = performance.now();
    rows += today.all(location, plu).length;
    todayMs.push(performance.now() - t0);
    t0 = performance.now();
    rows += onDate.all(location, plu, ahead).length;
    aheadMs.push(performance.now() - t0);
  }
  rounds.push({ todayMs, aheadMs });
}
const { v } = db.prepare('SELECT sqlite_version() AS v').get();
db.close();
process.stdout.write(JSON.stringify({ sqlite: v, rounds, rows }));

/**
 * bench/growth.ts's till: a process of its own (a second SQLite library in the agent's process would
 * share its file locks, and closing one connection could truncate the other's shared memory), reading
 * till files read-only through node:sqlite as the other benches' till does, with the lookups prepared
 * once per file. Reads one JSON object on stdin: { tills: [{ file, ahead }], rounds, lookups:
 * [[location, plu], ...] }; writes { sqlite, tills: [{ rounds: [{ todayMs, aheadMs }], rows }] } on
 * stdout. Every lookup runs once per round on each file, the files taking turns round by round, so a
 * busier moment of the machine falls on each. Each PLU is looked up once before timing, as a till that
 * has been serving for a while has its page cache warm.
 */
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';

const { tills, rounds: roundCount, lookups } = JSON.parse(fs.readFileSync(0, 'utf8'));
const { DatabaseSync } = process.getBuiltinModule('node:sqlite');
const open = ({ file, ahead }) => {
  const db = new DatabaseSync(file, { readOnly: true });
  db.exec('PRAGMA busy_timeout = 5000');
  const today = db.prepare('SELECT plu, item_name, tariff_name, sell_price_minor, tax_code FROM pos_prices_today WHERE location_id = ? AND plu = ?');
  const onDate = db.prepare('SELECT plu, item_name, tariff_name, sell_price_minor, tax_code FROM pos_prices WHERE location_id = ? AND plu = ? AND ? BETWEEN date_from AND date_to');
  for (const [location, plu] of lookups) {
    today.all(location, plu);
    onDate.all(location, plu, ahead);
  }
  return { db, today, onDate, ahead, rounds: [], rows: 0 };
};
const opened = tills.map(open);
for (let r = 0; r < roundCount; r++) {
  for (const t of opened) {
    const todayMs = [];
    const aheadMs = [];
    for (const [location, plu] of lookups) {
      let t0 = performance.now();
      t.rows += t.today.all(location, plu).length;
      todayMs.push(performance.now() - t0);
      t0 = performance.now();
      t.rows += t.onDate.all(location, plu, t.ahead).length;
      aheadMs.push(performance.now() - t0);
    }
    t.rounds.push({ todayMs, aheadMs });
  }
}
const { v } = opened[0].db.prepare('SELECT sqlite_version() AS v').get();
for (const t of opened) t.db.close();
process.stdout.write(JSON.stringify({ sqlite: v, tills: opened.map((t) => ({ rounds: t.rounds, rows: t.rows })) }));

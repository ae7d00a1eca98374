// A stand-in for the till: its own read-only connection, reading the POS views in a tight loop until
// its stdin closes, then printing how long its slowest read took. Used to show that pruning never
// blocks the till. Usage: node till-reader.mjs DB_FILE
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';

const file = process.argv[2];
const db = new Database(file, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = 5000');
const queries = [
  db.prepare('SELECT count(*) AS n, sum(sell_price_minor) AS s FROM pos_prices_today'),
  db.prepare("SELECT * FROM pos_prices WHERE plu = '7' AND '2026-06-01' BETWEEN date_from AND date_to"),
  db.prepare('SELECT count(*) AS n FROM pos_availability_today'),
  db.prepare('SELECT * FROM pos_sync_state'),
];
let reads = 0;
let maxMs = 0;
let totalMs = 0;
let errors = 0;
let open = true;
process.stdin.on('end', () => {
  open = false;
});
process.stdin.resume();
process.stdout.write('ready\n');
function loop() {
  for (let i = 0; i < 20 && open; i++) {
    const q = queries[reads % queries.length];
    const t0 = performance.now();
    try {
      q.all();
    } catch {
      errors += 1;
    }
    const ms = performance.now() - t0;
    maxMs = Math.max(maxMs, ms);
    totalMs += ms;
    reads += 1;
  }
  if (open) setImmediate(loop);
  else {
    process.stdout.write(`${JSON.stringify({ reads, maxMs, meanMs: totalMs / Math.max(1, reads), errors })}\n`);
    db.close();
  }
}
loop();

// A stand-in till: opens the POS database read-only and reads in a loop until told to stop on stdin.
// Each read is one transaction over two queries; the prices must all equal the ChangeSequence that
// pos_sync_state reports, or the reader saw part of an update.
import Database from 'better-sqlite3';

const db = new Database(process.argv[2]!, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = 5000');
const prices = db.prepare("SELECT min(sell_price_minor) AS lo, max(sell_price_minor) AS hi, count(*) AS n FROM pos_prices WHERE tariff_name = 'Eat In'");
const state = db.prepare('SELECT last_change_sequence AS seq FROM pos_sync_state');
const read = db.transaction(() => ({ p: prices.get() as { lo: number; hi: number; n: number }, s: state.get() as { seq: number } }));

let reads = 0;
let torn = 0;
const seen = new Set<number>();
const errors: string[] = [];
let stop = false;
process.stdin.on('data', () => (stop = true));
process.stdout.write('ready\n');
function loop(): void {
  for (let i = 0; i < 20 && !stop; i++) {
    try {
      const { p, s } = read();
      reads++;
      seen.add(s.seq);
      if (p.lo !== p.hi || p.lo !== s.seq) torn++;
    } catch (err) {
      errors.push((err as Error).message);
    }
  }
  if (stop) {
    process.stdout.write(`${JSON.stringify({ reads, torn, distinct: seen.size, errors: errors.slice(0, 5) })}\n`);
    db.close();
    process.exit(0);
  }
  setImmediate(loop);
}
loop();

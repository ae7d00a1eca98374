/**
 * A till in its own process: opens the till's file read-only and looks PLUs up for today in a loop,
 * through the POS views, as a till does at the counter, on the binding given (bench/till-statements.ts).
 * Usage:
 *   node --import tsx bench/till-reader-child.ts BINDING DB_FILE OUT_FILE LOCATIONS(comma list) MAX_PLU [PLU_FILE]
 * PLUs are drawn from 1000..MAX_PLU, or from PLU_FILE (a JSON array of PLUs) when given; then every
 * PLU is looked up once before READY, unrecorded, as a till that has been serving for a while has its
 * connection's page cache and the statements' code warm.
 * Prints READY with its SQLite and how many warm-up lookups found prices; on SIGTERM writes [epochMs, latencyMs] pairs to OUT_FILE and exits.
 */
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Prng } from '../src/dev/publisher';
import { openTill, parseTillBinding } from './till-statements';

const [bindingText, dbFile, outArg, locationList, maxPluText, pluFile] = parseArgs({ allowPositionals: true }).positionals;
if (!bindingText || !dbFile || !outArg || !locationList || !maxPluText) throw new Error('usage: till-reader-child.ts BINDING DB OUT LOCATIONS MAX_PLU [PLU_FILE]');
const outFile: string = outArg;
const locations = locationList.split(',').map(Number);
const maxPlu = Number(maxPluText);
const pluList = pluFile ? (JSON.parse(fs.readFileSync(pluFile, 'utf8')) as string[]) : null;
const till = openTill(dbFile, parseTillBinding(bindingText, 'node:sqlite'));
const rng = new Prng(99);
const samples: number[] = [];
let stopping = false;

process.once('SIGTERM', () => {
  stopping = true;
});

async function loop(): Promise<void> {
  // The warm-up also counts the lookups that found prices, so the bench knows the till reads the menu.
  let warmed = 0;
  let priced = 0;
  if (pluList) {
    for (const location of locations) {
      for (const plu of pluList) {
        if (till.prices(location, plu).length > 0) priced++;
        till.availability(location, plu);
        warmed++;
      }
    }
  }
  process.stdout.write(`READY till-reader (SQLite ${till.sqliteVersion}; ${priced} of ${warmed} lookups priced)\n`);
  while (!stopping) {
    for (let i = 0; i < 50 && !stopping; i++) {
      const location = rng.pick(locations);
      const plu = pluList ? rng.pick(pluList) : String(rng.int(1000, maxPlu));
      const t0 = performance.now();
      till.prices(location, plu);
      till.availability(location, plu);
      const t1 = performance.now();
      samples.push(performance.timeOrigin + t0, t1 - t0);
    }
    // Let SIGTERM in; a till does other things between lookups too.
    await new Promise((r) => setTimeout(r, 1));
  }
  fs.writeFileSync(outFile, JSON.stringify(samples));
  till.close();
  process.exit(0);
}

void loop();

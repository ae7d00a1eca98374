/**
 * `npm run bench:lookup` — the till's lookup by location and PLU for today (its prices, then its meal
 * periods, through the `_today` views) on the L menu, under each definition of "today" side by side
 * in one process, against the same two queries with today's date written into them (the baseline: no
 * date to work out at all):
 *   - `migration 4`: today's views, the location's day row in location_days;
 *   - `migration 3`: the views of till migration 3 (the date worked out from location_utc_offsets in
 *     every query), put back on a copy of the same file;
 *   - `fixed date`: pos_prices / pos_availability with the location's date as a literal.
 * Every PLU is first checked to give the same rows under all three. Rounds alternate the variants so
 * the machine's drift falls on each alike. `--json` prints one object; `--rounds N` (default 12).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { parseConfig } from '../src/config/load';
import { AgentCore } from '../src/core';
import { dateOf, dayOf, encode, generateChains, todayInZone } from '../src/dev/publisher';
import { silentLogger } from '../src/log';
import { locationToday } from '../src/till/location-time';
import * as till003 from '../src/till/migrations/003-today-once-per-location';
import { storeFilePath } from '../src/store/database';
import { recordResult } from './results';
import { percentile } from './stats';
import { AVAILABILITY_TODAY_SQL, PRICES_TODAY_SQL } from './till-statements';

const { values: args } = parseArgs({ options: { json: { type: 'boolean', default: false }, 'no-record': { type: 'boolean', default: false }, rounds: { type: 'string', default: '12' } } });
const json = args.json;
const ROUNDS = Number(args.rounds);
const PER_ROUND = 4000;

function main(): void {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'pos-sync-lookup-'));
  try {
    // The L publication of `npm run bench`, applied by the agent's own code.
    const today = todayInZone(Intl.DateTimeFormat().resolvedOptions().timeZone);
    const [chain] = generateChains({ seed: 2026, locations: 1, updatesPerLocation: 1, startDate: dateOf(dayOf(today) - 30), days: 365, itemsPerLocation: 5000, tariffs: 3, mealPeriods: 3, scheduling: 'all', rangesPerKey: 12 });
    const update = chain!.updates[0]!;
    const dataDir = path.join(work, 'data');
    const core = new AgentCore(parseConfig({ dataDir, webhook: { port: 0 }, admin: { port: 0 }, sync: { pollIntervalMs: 200, baselineSettleSeconds: 0 } }), silentLogger);
    try {
      const { applied } = core.importPayload(encode(update), 'bench');
      if (applied.length !== 1) throw new Error('the L publication was not applied');
    } finally {
      core.close();
    }
    const file4 = storeFilePath(dataDir, 'till');
    const writer = new Database(file4);
    writer.pragma('wal_checkpoint(TRUNCATE)');
    writer.close();
    const file3 = path.join(work, 'till-003-views.db');
    fs.copyFileSync(file4, file3);
    const back = new Database(file3);
    back.exec(till003.sql);
    back.close();

    const db4 = new Database(file4, { readonly: true });
    const db3 = new Database(file3, { readonly: true });
    const location = update.locationId;
    const date = locationToday(db4, location);
    if (!date) throw new Error('no day row for now');
    const plus = (db4.prepare('SELECT plu FROM items WHERE location_id = ? ORDER BY plu').all(location) as { plu: string }[]).map((r) => r.plu);
    const todayQueries = [PRICES_TODAY_SQL, AVAILABILITY_TODAY_SQL];
    const fixedQueries = [
      `SELECT plu, item_name, tariff_name, sell_price_minor, tax_code FROM pos_prices WHERE location_id = ? AND plu = ? AND '${date}' BETWEEN date_from AND date_to`,
      `SELECT meal_period, status FROM pos_availability WHERE location_id = ? AND plu = ? AND '${date}' BETWEEN date_from AND date_to`,
    ];
    const variants = [
      { name: 'migration 4', statements: todayQueries.map((q) => db4.prepare(q)) },
      { name: 'migration 3', statements: todayQueries.map((q) => db3.prepare(q)) },
      { name: 'fixed date', statements: fixedQueries.map((q) => db4.prepare(q)) },
    ];
    const rowsOf = (v: (typeof variants)[number], plu: string): string => JSON.stringify(v.statements.map((s) => s.all(location, plu).map((r) => JSON.stringify(r)).sort()));
    let withPrices = 0;
    for (const plu of plus) {
      const want = rowsOf(variants[2]!, plu);
      for (const v of variants.slice(0, 2)) if (rowsOf(v, plu) !== want) throw new Error(`${v.name} answers PLU ${plu} differently`);
      if (variants[2]!.statements[0]!.all(location, plu).length > 0) withPrices++;
    }
    if (withPrices < plus.length * 0.9) throw new Error(`only ${withPrices} of ${plus.length} PLUs have prices today`);

    const times = variants.map(() => [] as number[]);
    for (let round = 0; round < ROUNDS; round++) {
      variants.forEach((v, i) => {
        const [prices, availability] = v.statements as [Database.Statement, Database.Statement];
        for (let k = 0; k < PER_ROUND; k++) {
          const plu = plus[(k * 7919 + round * 31) % plus.length]!;
          const t0 = performance.now();
          prices.all(location, plu);
          availability.all(location, plu);
          times[i]!.push(performance.now() - t0);
        }
      });
    }
    db3.close();
    db4.close();
    const results = variants.map((v, i) => ({ variant: v.name, lookups: times[i]!.length, p50Ms: percentile(times[i]!, 50), p90Ms: percentile(times[i]!, 90), p99Ms: percentile(times[i]!, 99) }));
    const fixed = results[2]!;
    const ratios = Object.fromEntries(results.slice(0, 2).map((r) => [r.variant, { p50VsFixedDate: r.p50Ms / fixed.p50Ms, p99VsFixedDate: r.p99Ms / fixed.p99Ms }]));
    recordResult('lookup', { plus: plus.length, date, results, ratios });
    if (json) {
      process.stdout.write(`${JSON.stringify({ plus: plus.length, date, results, ratios })}\n`);
      return;
    }
    process.stdout.write(`till lookup by location and PLU for today (${date}), L menu (${plus.length} PLUs, same rows under each), ${ROUNDS} alternating rounds:\n`);
    for (const r of results) process.stdout.write(`  ${r.variant.padEnd(12)} p50 ${r.p50Ms.toFixed(3)} ms  p90 ${r.p90Ms.toFixed(3)} ms  p99 ${r.p99Ms.toFixed(3)} ms  (${r.lookups} lookups)\n`);
    for (const [name, r] of Object.entries(ratios)) process.stdout.write(`  ${name} / fixed date: p50 ${r.p50VsFixedDate.toFixed(2)}x, p99 ${r.p99VsFixedDate.toFixed(2)}x\n`);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main();

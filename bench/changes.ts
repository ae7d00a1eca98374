/**
 * What changes next, on the L menu (issue 13): `changes` over 31 days against the same-run baseline of
 * one till query per item (each item's prices for today by PLU through pos_prices_today, as a till
 * reads them). Target: under 5x. bench/run.ts calls measureChanges() on the L data its agent applied;
 * `tsx bench/changes.ts` builds the L menu in-process and measures only this.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { parseConfig } from '../src/config/load';
import { AgentCore } from '../src/core';
import { addDays, type IsoDate } from '../src/domain/dates';
import { dateOf, dayOf, encode, generateChains, todayInZone } from '../src/dev/publisher';
import { silentLogger } from '../src/log';
import { upcomingChanges } from '../src/till/changes';
import { openReadOnly, storeFilePath, type Db } from '../src/store/database';
import { recordResult } from './results';

export interface ChangesBench {
  readonly items: number;
  readonly days: number;
  readonly changes: number;
  /** Median of the runs. */
  readonly changesMs: number;
  readonly perItemQueriesMs: number;
  readonly ratio: number;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

/** Times both on a till file's connection; each is run `runs` times (after one warm-up) and the medians compared. */
export function measureChanges(db: Db, locationId: number, today: IsoDate, runs = 5, days = 31): ChangesBench {
  const plus = db.prepare<[number], { plu: string }>('SELECT plu FROM items WHERE location_id = ? ORDER BY item_id').all(locationId).map((r) => r.plu);
  const lookup = db.prepare('SELECT plu, item_name, tariff_name, sell_price_minor, sell_price, tax_code FROM pos_prices_today WHERE location_id = ? AND plu = ?');
  const perItem = (): number => {
    let rows = 0;
    for (const plu of plus) rows += lookup.all(locationId, plu).length;
    return rows;
  };
  const changes = (): number => upcomingChanges(db, { locationId, days, fromFor: () => today }).changes.length;
  const time = (fn: () => number): { ms: number; n: number } => {
    const t0 = performance.now();
    const n = fn();
    return { ms: performance.now() - t0, n };
  };
  perItem();
  const found = changes();
  const changesMs: number[] = [];
  const perItemMs: number[] = [];
  for (let i = 0; i < runs; i++) {
    changesMs.push(time(changes).ms);
    perItemMs.push(time(perItem).ms);
  }
  const c = median(changesMs);
  const p = median(perItemMs);
  return { items: plus.length, days, changes: found, changesMs: c, perItemQueriesMs: p, ratio: c / p };
}

export function describeChanges(b: ChangesBench): string {
  return (
    `what changes next on L (${b.items} items, ${b.days} days, ${b.changes} changes): ${b.changesMs.toFixed(1)} ms; ` +
    `one till query per item: ${b.perItemQueriesMs.toFixed(1)} ms; ratio ${b.ratio.toFixed(2)} (target < 5)`
  );
}

async function standalone(): Promise<void> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'pos-sync-bench-changes-'));
  try {
    const zone = 'Europe/London';
    const today = todayInZone(zone) as IsoDate;
    // The L menu of bench/run.ts: 5,000 items, 3 tariffs, 3 meal periods, 12 ranges per key over a year.
    const [chain] = generateChains({ seed: 2026, locations: 1, updatesPerLocation: 1, startDate: dateOf(dayOf(today) - 30), days: 365, itemsPerLocation: 5000, tariffs: 3, mealPeriods: 3, scheduling: 'all', rangesPerKey: 12 });
    const update = chain!.updates[0]!;
    const core = new AgentCore(parseConfig({ dataDir: work, defaultTimezone: zone, sync: { baselineSettleSeconds: 0 } }), silentLogger);
    try {
      process.stderr.write('applying the L menu in-process…\n');
      core.importPayload(encode(update), 'bench');
    } finally {
      core.close();
    }
    const db = openReadOnly(storeFilePath(work, 'till'));
    try {
      const result = measureChanges(db, update.locationId, today);
      recordResult('changes', result);
      if (parseArgs({ options: { json: { type: 'boolean', default: false }, 'no-record': { type: 'boolean', default: false } } }).values.json) process.stdout.write(`${JSON.stringify(result)}\n`);
      else process.stdout.write(`${describeChanges(result)}\n(window ${today} to ${addDays(today, result.days - 1)})\n`);
    } finally {
      db.close();
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

if (require.main === module) {
  standalone().catch((err: unknown) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}

/**
 * Costs against history (issue 30): builds a history of applied updates and measures, at each
 * checkpoint, what a site pays for one more day of it, as ratios to the first checkpoint of the same
 * run. Targets: every time ratio at or under 1.5x from the first to the last checkpoint; the files'
 * used pages grow only with live data.
 *
 * The history is written through the agent's own code path, in this process: each update is stored
 * by the inbox (Inbox.receive, as the webhook receiver stores a delivery) and applied by the applier
 * (Applier.drain), not POSTed over HTTP, which would spend most of the run on the network and JSON
 * parsing the other benchmarks already measure. The applier and retention run on a simulated clock
 * (one day per step), so a run of minutes covers years; between checkpoints without an fsync at each
 * commit (Site.durable), every measurement with one, as the agent runs.
 *
 * The history, per location: a first publication of every item over the coming 365 days (and the 400
 * before, so that retention has ranges to prune from the start) in monthly ranges (3 tariffs, 2 meal periods), then each day a one-day edit of a few items, each week a seven-day edit,
 * each month a republication of every item (next month's prices, and the month a year ahead so the
 * published horizon stays a year). Retention runs weekly with its configured periods, as at a site.
 *
 * At each checkpoint: a till's lookups by location and PLU (today through pos_prices_today, six
 * months ahead through pos_prices) in a process of its own on a read-only node:sqlite connection
 * (bench/growth-lookups-child.mjs), p50 and p99; the apply time
 * of probe daily edits and republications (the applier's own apply_ms); Coming up (one location, 31
 * days) and `changes` (every location, 14 days); the prune's longest batch; the files' sizes. Each
 * later checkpoint also measures a fresh copy of the first checkpoint's files, at that checkpoint's
 * date, each timed step taking turns with the site's (measureSites): the same-run baseline, which
 * takes the machine's load at that moment out of the ratio (this machine's two cores are shared with
 * other jobs). The target, 1.5x, is checked against both; the baseline's is the one load cannot move.
 *
 * The first checkpoint comes once the site's edits have reached as far ahead as they ever do (the
 * weekly edits reach 60 days ahead; a republication comes every 30 days): from there on what the site
 * holds for its future stays alike and only its history grows, so a ratio over 1 is a cost of history.
 * A checkpoint before that (--checkpoints 0,...) compares a menu with fewer ranges in its near future.
 *
 *   npm run bench:growth                          # 5,000 updates, checkpoints 183 (61 days), 500, 2000, 5000
 *   npm run bench:growth -- --updates 1000 --checkpoints 183,400,1000 --items 500
 *   npm run bench:growth -- --json                # the figures on stdout
 *   (--lookups N: PLUs looked up per round, default 2000; --rounds N: rounds, default 5; --seed N;
 *   --probes N: probe republications per location at each checkpoint, default 3)
 *
 * Records its figures (bench/results/growth/, bench/results.ts) unless --no-record.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { parseConfig } from '../src/config/load';
import { addDays, type IsoDate } from '../src/domain/dates';
import { upcomingChanges } from '../src/till/changes';
import { storeFilePath, type Db } from '../src/store/database';
import { Inbox } from '../src/store/inbox';
import { closeStore, openStore } from '../src/store/store';
import { pruneDatabase, retentionCutoffs } from '../src/ops/retention';
import type { PruneReport } from '../src/ops/states';
import { Applier, type AppliedUpdate } from '../src/sync/applier';
import { pruneRangeBatch } from '../src/sync/range-prune';
import { recordResult } from './results';
import { median, percentile } from './stats';

const { values: args } = parseArgs({
  options: {
    updates: { type: 'string', default: '5000' },
    checkpoints: { type: 'string' },
    items: { type: 'string', default: '2000' },
    locations: { type: 'string', default: '3' },
    lookups: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '5' },
    probes: { type: 'string', default: '3' },
    seed: { type: 'string', default: '30' },
    json: { type: 'boolean', default: false },
    'no-record': { type: 'boolean', default: false },
    'keep-data': { type: 'boolean', default: false },
  },
});

function wholeNumber(name: string, text: string, min: number): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name} takes a whole number of at least ${min}, not ${text}`);
  return n;
}

const UPDATES = wholeNumber('updates', args.updates, 1);
const ITEMS = wholeNumber('items', args.items, 1);
const LOCATIONS = wholeNumber('locations', args.locations, 1);
const LOOKUPS = wholeNumber('lookups', args.lookups, 10);
const SEED = wholeNumber('seed', args.seed, 0);
const ROUNDS = wholeNumber('rounds', args.rounds, 1);
const PROBES = wholeNumber('probes', args.probes, 1);
/** Days of edits before the first checkpoint by default: the weekly edits' reach (60 days ahead), and a day. */
const WARM_UP_DAYS = 61;
const WARM_UP = Math.min(UPDATES, WARM_UP_DAYS * LOCATIONS);
const CHECKPOINTS = (args.checkpoints ?? [WARM_UP, ...[0.1, 0.4, 1].map((f) => Math.round(f * UPDATES)).filter((c) => c > WARM_UP)].join(','))
  .split(',')
  .map((t) => wholeNumber('checkpoints', t.trim(), 0))
  .filter((c, i, all) => c <= UPDATES && all.indexOf(c) === i)
  .sort((a, b) => a - b);
if (CHECKPOINTS.length < 2) throw new Error('--checkpoints needs at least two values within --updates');

const TARIFFS = [
  { name: 'Eat In', taxCode: 'S', taxRate: 20 },
  { name: 'Take Away', taxCode: 'Z', taxRate: 0 },
  { name: 'Delivery', taxCode: 'S', taxRate: 20 },
];
const MEAL_PERIODS = ['Lunch', 'Dinner'];
const START: IsoDate = '2031-01-01' as IsoDate;
const FIRST_LOCATION = 4000;

/** A small deterministic generator (mulberry32): the same history for the same seed. */
function prng(seed: number): { int(min: number, max: number): number } {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  return { int: (min, max) => min + Math.floor(next() * (max - min + 1)) };
}

const rng = prng(SEED);
const price = (from: IsoDate, to: IsoDate, t: (typeof TARIFFS)[number]): Record<string, unknown> => ({
  DateFrom: from,
  DateTo: to,
  TariffName: t.name,
  PriceModel: 'Standard',
  TaxCode: t.taxCode,
  TaxRate: t.taxRate,
  SellPrice: rng.int(150, 3000) / 100,
});
const schedule = (from: IsoDate, to: IsoDate, period: string, status: 'AVAILABLE' | 'UNAVAILABLE'): Record<string, unknown> => ({
  DateFrom: from,
  DateTo: to,
  Status: status,
  MealPeriodName: period,
});
const header = (n: number): Record<string, unknown> => ({ PLU: String(1000 + n), ItemID: `I${n}`, ItemName: `Dish ${n}`, ItemType: 'RECIPE' });

/** Every item over [first, last], cut into ranges of `step` days. */
function wholeMenu(first: IsoDate, last: IsoDate, step: number): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (let n = 0; n < ITEMS; n++) {
    const prices: Record<string, unknown>[] = [];
    const schedules: Record<string, unknown>[] = [];
    for (let from = first; from <= last; from = addDays(from, step)) {
      const to = addDays(from, step - 1) > last ? last : addDays(from, step - 1);
      for (const t of TARIFFS) prices.push(price(from, to, t));
      for (const p of MEAL_PERIODS) schedules.push(schedule(from, to, p, 'AVAILABLE'));
    }
    out.push({ ...header(n), PriceUpdates: prices, ScheduleUpdates: schedules });
  }
  return out;
}

/** `count` distinct items, each with one price (and sometimes a meal period) over `days` days starting `ahead` days from `today`. */
function edit(today: IsoDate, count: number, days: number, ahead: [number, number]): Record<string, unknown>[] {
  const chosen = new Set<number>();
  while (chosen.size < Math.min(count, ITEMS)) chosen.add(rng.int(0, ITEMS - 1));
  return [...chosen].map((n) => {
    const from = addDays(today, rng.int(ahead[0], ahead[1]));
    const to = addDays(from, days - 1);
    const t = TARIFFS[rng.int(0, TARIFFS.length - 1)]!;
    const schedules = rng.int(0, 3) === 0 ? [schedule(from, to, MEAL_PERIODS[rng.int(0, MEAL_PERIODS.length - 1)]!, 'UNAVAILABLE')] : [];
    return { ...header(n), PriceUpdates: [price(from, to, t)], ScheduleUpdates: schedules };
  });
}

const dailyEdit = (today: IsoDate): Record<string, unknown>[] => edit(today, 10, 1, [1, 28]);
const weeklyEdit = (today: IsoDate): Record<string, unknown>[] => edit(today, 50, 7, [7, 60]);
/** Next month's prices for every item, and the month a year ahead (the published horizon moves on). */
const republication = (today: IsoDate): Record<string, unknown>[] => {
  const next = wholeMenu(addDays(today, 1), addDays(today, 31), 31);
  const horizon = wholeMenu(addDays(today, 335), addDays(today, 365), 31);
  return next.map((item, i) => ({
    ...item,
    PriceUpdates: [...(item.PriceUpdates as unknown[]), ...(horizon[i]!.PriceUpdates as unknown[])],
    ScheduleUpdates: [...(item.ScheduleUpdates as unknown[]), ...(horizon[i]!.ScheduleUpdates as unknown[])],
  }));
};

/** The simulated clock: noon UTC of a day of the history. */
const noonOf = (day: IsoDate): Date => new Date(`${day}T12:00:00Z`);

interface Checkpoint {
  readonly updates: number;
  readonly simulatedDate: IsoDate;
  readonly figures: Record<string, number>;
  /** The same measurements on a copy of the first checkpoint's files, taken right after these (the first checkpoint's own figures there). */
  readonly baseline: Record<string, number>;
}

/** The figures compared between checkpoints: time (ratio target 1.5) or size (reported, with the live rows beside it). */
const TIME_FIGURES = [
  'lookupTodayP50Ms',
  'lookupTodayP99Ms',
  'lookupAheadP50Ms',
  'lookupAheadP99Ms',
  'dailyEditApplyMs',
  'republicationApplyMs',
  'comingUpMs',
  'changesMs',
  'pruneLongestBatchMs',
] as const;
const TIME_TARGET = 1.5;

/** Used bytes of a file: its pages less the free ones (a file keeps its size after deletes; SQLite reuses the free pages). */
function usedBytes(db: Db): number {
  const pages = db.pragma('page_count', { simple: true }) as number;
  const free = db.pragma('freelist_count', { simple: true }) as number;
  const size = db.pragma('page_size', { simple: true }) as number;
  return (pages - free) * size;
}

const count = (db: Db, table: string): number => (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;

const log = (line: string): void => void process.stderr.write(`${line}\n`);
const locations = Array.from({ length: LOCATIONS }, (_, i) => FIRST_LOCATION + i);
let tillSqlite = '';

/**
 * A data folder with the agent's store, inbox and applier on a simulated clock: the growing site, or a
 * copy of it as it was at the first checkpoint (the same-run baseline measured beside each later one).
 */
class Site {
  today: IsoDate = START;
  readonly store;
  readonly inbox;
  readonly applier;
  readonly config;

  constructor(
    readonly dataDir: string,
    readonly sequence: Map<number, number>,
  ) {
    this.config = parseConfig({ dataDir, defaultTimezone: 'UTC', sync: { baselineSettleSeconds: 0 } });
    this.store = openStore(dataDir);
    this.inbox = new Inbox(this.store.agent);
    // No timezone lookup: the applier writes no location days; the bench writes the one the _today views
    // read (the simulated date for the real current instant) before each checkpoint's lookups.
    this.applier = new Applier(this.store.till, this.store.agent, this.config.sync.baseline, {}, 0, null, () => this.clock().getTime());
  }

  /**
   * FULL (as the agent runs) or OFF: the history between checkpoints is built without waiting for the
   * disk at every commit, which would spend most of the run in fsync; the files and their pages are the
   * same, and every measured step runs FULL.
   */
  durable(on: boolean): void {
    for (const db of [this.store.till, this.store.agent]) db.pragma(`synchronous = ${on ? 'FULL' : 'OFF'}`);
  }

  clock(): Date {
    return noonOf(this.today);
  }

  deliver(location: number, items: Record<string, unknown>[], source: 'webhook' | 'import' = 'webhook'): AppliedUpdate {
    const parent = this.sequence.get(location)!;
    const change = parent + 1;
    this.sequence.set(location, change);
    const body = { ChangeSequence: change, ParentChangeSequence: parent, LocationID: location, LocationName: `Site ${location}`, CurrencyIsoCode: 'GBP', ScheduledItems: items };
    const outcome = this.inbox.receive({ raw: Buffer.from(JSON.stringify(body)), sender: 'bench', source, contentType: 'application/json', receivedAt: this.clock() });
    if (outcome.kind !== 'stored') throw new Error(`update ${location}/${change} was not stored: ${JSON.stringify(outcome)}`);
    const applied = this.applier.drain();
    this.applier.refreshTillCounters();
    const mine = applied.find((a) => a.locationId === location && a.changeSequence === change);
    if (!mine) throw new Error(`update ${location}/${change} was not applied (${this.applier.lastFailure.get(location)?.message ?? 'no failure recorded'})`);
    return mine;
  }

  prune(): Promise<PruneReport> {
    return pruneDatabase(
      { agent: this.store.agent, ranges: async (request) => pruneRangeBatch(this.store.till, request) },
      retentionCutoffs(this.config.retention, locations.map((locationId) => ({ locationId, timezone: 'UTC' })), this.clock()),
      this.config.retention.batchSize,
    );
  }

  /** Writes the location day the _today views read: the simulated day for the current real instant. */
  setTillToday(): void {
    const nowText = (offsetHours: number): string => new Date(Date.now() + offsetHours * 3_600_000).toISOString().slice(0, 19).replace('T', ' ');
    const { till } = this.store;
    till.transaction(() => {
      for (const l of locations) {
        till.prepare('DELETE FROM location_days WHERE location_id = ?').run(l);
        till.prepare('INSERT INTO location_days (location_id, utc_from, utc_to, local_date) VALUES (?, ?, ?, ?)').run(l, nowText(-1), nowText(24), this.today);
      }
    })();
    till.pragma('wal_checkpoint(TRUNCATE)');
  }

  /** The files' sizes and the rows each table holds. */
  sizes(): Record<string, number> {
    const { store, today } = this;
    store.till.pragma('wal_checkpoint(TRUNCATE)');
    store.agent.pragma('wal_checkpoint(TRUNCATE)');
    return {
      tillUsedBytes: usedBytes(store.till),
      agentUsedBytes: usedBytes(store.agent),
      tillFileBytes: fs.statSync(storeFilePath(this.dataDir, 'till')).size,
      agentFileBytes: fs.statSync(storeFilePath(this.dataDir, 'agent')).size,
      priceRanges: count(store.till, 'price_ranges'),
      availabilityRanges: count(store.till, 'availability_ranges'),
      liveFuturePriceRanges: (store.till.prepare('SELECT count(*) AS n FROM price_ranges WHERE date_to >= ?').get(today) as { n: number }).n,
      appliedUpdatesRows: count(store.till, 'applied_updates'),
      itemChangesRows: count(store.till, 'item_changes'),
      inboxRows: count(store.agent, 'inbox'),
      deliveriesRows: count(store.agent, 'deliveries'),
      warningsRows: count(store.agent, 'update_warnings'),
      auditRows: count(store.agent, 'audit_log'),
    };
  }

  close(): void {
    closeStore(this.store);
  }
}

/**
 * Every figure of a checkpoint, for each site given (the growing site, and the copy of the first
 * checkpoint's files beside it): each timed step alternates between the sites, so a busier moment of
 * the machine falls on both. The probes (republications and daily edits) are updates of each site's
 * history too.
 */
async function measureSites(sites: readonly Site[]): Promise<Record<string, number>[]> {
  const daily: number[][] = sites.map(() => []);
  const republished: number[][] = sites.map(() => []);
  for (let round = 0; round < PROBES; round++) {
    for (const l of locations) {
      sites.forEach((s, i) => republished[i]!.push(s.deliver(l, republication(s.today)).applyMs));
      sites.forEach((s, i) => daily[i]!.push(s.deliver(l, dailyEdit(s.today)).applyMs, s.deliver(l, dailyEdit(s.today)).applyMs));
    }
  }
  for (const s of sites) s.setTillToday();
  const lookups = Array.from({ length: LOOKUPS }, (_, i) => [locations[i % locations.length]!, String(1000 + rng.int(0, ITEMS - 1))]);
  const child = spawnSync(process.execPath, [path.join(__dirname, 'growth-lookups-child.mjs')], {
    input: JSON.stringify({ tills: sites.map((s) => ({ file: storeFilePath(s.dataDir, 'till'), ahead: addDays(s.today, 182) })), rounds: ROUNDS, lookups }),
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  if (child.status !== 0) throw new Error(`the till's lookups failed: ${child.stderr}`);
  const looked = JSON.parse(child.stdout) as { sqlite: string; tills: { rounds: { todayMs: number[]; aheadMs: number[] }[]; rows: number }[] };
  tillSqlite = looked.sqlite;
  // Each percentile is the median of the rounds' (a busy machine's bad moment moves one round, not the figure).
  const roundsMedian = (i: number, key: 'todayMs' | 'aheadMs', p: number): number => median(looked.tills[i]!.rounds.map((r) => percentile(r[key], p)));
  looked.tills.forEach((t) => {
    if (t.rows < LOOKUPS * ROUNDS) throw new Error(`the lookups found ${t.rows} prices for ${LOOKUPS * 2 * ROUNDS} lookups: the history has gaps`);
  });
  /** Each site's median time of `fn`, the sites taking turns (after one untimed run each). */
  const timed = (fn: (s: Site) => unknown, runs = 9): number[] => {
    for (const s of sites) fn(s);
    const ms: number[][] = sites.map(() => []);
    for (let r = 0; r < runs; r++) {
      sites.forEach((s, i) => {
        const t0 = performance.now();
        fn(s);
        ms[i]!.push(performance.now() - t0);
      });
    }
    return ms.map(median);
  };
  const comingUp = timed((s) => upcomingChanges(s.store.till, { locationId: locations[0]!, days: 31, fromFor: () => s.today }));
  const changes = timed((s) => upcomingChanges(s.store.till, { locationId: null, days: 14, fromFor: () => s.today }));
  const pruned: PruneReport[] = [];
  for (const s of sites) pruned.push(await s.prune());
  return sites.map((s, i) => ({
    lookupTodayP50Ms: roundsMedian(i, 'todayMs', 50),
    lookupTodayP99Ms: roundsMedian(i, 'todayMs', 99),
    lookupAheadP50Ms: roundsMedian(i, 'aheadMs', 50),
    lookupAheadP99Ms: roundsMedian(i, 'aheadMs', 99),
    dailyEditApplyMs: median(daily[i]!),
    republicationApplyMs: median(republished[i]!),
    comingUpMs: comingUp[i]!,
    changesMs: changes[i]!,
    pruneLongestBatchMs: pruned[i]!.longestBatchMs,
    ...s.sizes(),
  }));
}

const DATA_FILES = ['pos-sync.db', 'agent.db', 'staff.db'];

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pos-sync-bench-growth-'));
  const siteDir = path.join(dataDir, 'site');
  const baseDir = path.join(dataDir, 'first-checkpoint');
  const site = new Site(siteDir, new Map(locations.map((l) => [l, 100])));
  site.durable(false);
  let baseSequence = new Map<number, number>();
  const checkpoints: Checkpoint[] = [];
  const measure = async (updates: number): Promise<void> => {
    if (checkpoints.length === 0) {
      // The first checkpoint's files as its measurement finds them: each later checkpoint measures a
      // fresh copy of them too, at the first checkpoint's date, in the same way (the same-run baseline).
      site.store.till.pragma('wal_checkpoint(TRUNCATE)');
      site.store.agent.pragma('wal_checkpoint(TRUNCATE)');
      fs.mkdirSync(baseDir);
      for (const f of DATA_FILES) fs.copyFileSync(path.join(siteDir, f), path.join(baseDir, f));
      baseSequence = new Map(site.sequence);
    }
    site.durable(true);
    let figures: Record<string, number>;
    let baseline: Record<string, number>;
    if (checkpoints.length === 0) {
      [figures] = (await measureSites([site])) as [Record<string, number>];
      baseline = figures;
    } else {
      const copyDir = path.join(dataDir, `baseline-${updates}`);
      fs.mkdirSync(copyDir);
      for (const f of DATA_FILES) fs.copyFileSync(path.join(baseDir, f), path.join(copyDir, f));
      const copy = new Site(copyDir, new Map(baseSequence));
      copy.today = checkpoints[0]!.simulatedDate;
      try {
        [figures, baseline] = (await measureSites([site, copy])) as [Record<string, number>, Record<string, number>];
      } finally {
        copy.close();
        fs.rmSync(copyDir, { recursive: true, force: true });
      }
    }
    site.durable(false);
    checkpoints.push({ updates, simulatedDate: site.today, figures, baseline });
    log(
      `checkpoint ${updates} (${site.today}): ${TIME_FIGURES.map((k) => `${k} ${figures[k]!.toFixed(3)} (baseline ${baseline[k]!.toFixed(3)})`).join(', ')}; ` +
        `till ${(figures.tillUsedBytes! / 1e6).toFixed(1)} MB used, agent ${(figures.agentUsedBytes! / 1e6).toFixed(1)} MB used`,
    );
  };

  const started = performance.now();
  try {
    log(`growth: ${LOCATIONS} locations x ${ITEMS} items, ${TARIFFS.length} tariffs, ${MEAL_PERIODS.length} meal periods; ${UPDATES} updates; checkpoints ${CHECKPOINTS.join(', ')}; data in ${dataDir}`);
    // Imported, as support loads a site's first menu: a webhook baseline would wait for the settle
    // period on the real clock, which the simulated one is years ahead of.
    // It starts 400 days back, so that the first checkpoint's prune has ended ranges to delete too:
    // every checkpoint's longest batch is then a full one.
    for (const l of locations) site.deliver(l, wholeMenu(addDays(START, -400), addDays(START, 364), 31), 'import');
    let applied = 0;
    let next = 0;
    let day = 0;
    while (next < CHECKPOINTS.length) {
      if (applied >= CHECKPOINTS[next]!) {
        await measure(applied);
        next += 1;
        continue;
      }
      day += 1;
      const today = addDays(START, day);
      site.today = today;
      for (const l of locations) {
        if (applied >= CHECKPOINTS[next]!) break;
        const items = day % 30 === 0 ? republication(today) : day % 7 === 0 ? weeklyEdit(today) : dailyEdit(today);
        site.deliver(l, items);
        applied += 1;
      }
      if (day % 7 === 0) await site.prune();
    }
  } finally {
    site.close();
    if (args['keep-data']) log(`data kept in ${dataDir}`);
    else fs.rmSync(dataDir, { recursive: true, force: true });
  }

  const first = checkpoints[0]!;
  const last = checkpoints[checkpoints.length - 1]!;
  const ratios = Object.fromEntries(Object.keys(first.figures).map((k) => [k, last.figures[k]! / first.figures[k]!]));
  const overTarget = TIME_FIGURES.filter((k) => !(ratios[k]! <= TIME_TARGET));
  // The same ratio with the machine's load taken out: the last checkpoint against the first
  // checkpoint's files, measured in turns with it.
  const toBaseline = Object.fromEntries(TIME_FIGURES.map((k) => [k, last.figures[k]! / last.baseline[k]!]));
  const overTargetToBaseline = TIME_FIGURES.filter((k) => !(toBaseline[k]! <= TIME_TARGET));
  const runSeconds = (performance.now() - started) / 1000;
  const figures = {
    options: { updates: UPDATES, checkpoints: CHECKPOINTS, items: ITEMS, locations: LOCATIONS, tariffs: TARIFFS.length, mealPeriods: MEAL_PERIODS.length, lookups: LOOKUPS, rounds: ROUNDS, probes: PROBES, seed: SEED, retention: site.config.retention },
    tillSqlite,
    checkpoints,
    ratiosLastToFirst: ratios,
    ratiosLastToBaseline: toBaseline,
    timeTarget: TIME_TARGET,
    overTarget,
    overTargetToBaseline,
    runSeconds,
  };
  recordResult('growth', figures);
  if (args.json) {
    process.stdout.write(`${JSON.stringify(figures)}\n`);
    return;
  }
  const keys = Object.keys(first.figures);
  const width = Math.max(...keys.map((k) => k.length));
  const isTime = (k: string): boolean => (TIME_FIGURES as readonly string[]).includes(k);
  const value = (v: number): string => (Number.isInteger(v) ? String(v) : v.toFixed(3));
  const cellWidth = 19;
  const lines = [
    `growth: ${LOCATIONS} x ${ITEMS} items, ${UPDATES} updates, ${runSeconds.toFixed(0)} s; node ${process.version}; till reads on SQLite ${tillSqlite}`,
    `each figure, and its ratio to the first checkpoint; last column: the last checkpoint against the first checkpoint's files, measured in turns with it (the machine's load taken out)`,
    `${'checkpoint (updates)'.padEnd(width)} ${checkpoints.map((c) => String(c.updates).padStart(cellWidth)).join(' ')}   last/baseline`,
    `${'simulated date'.padEnd(width)} ${checkpoints.map((c) => c.simulatedDate.padStart(cellWidth)).join(' ')}`,
    ...keys.map((k) => {
      const cells = checkpoints.map((c) => `${value(c.figures[k]!)} ${(c.figures[k]! / first.figures[k]!).toFixed(2)}x`.padStart(cellWidth)).join(' ');
      const verdict = isTime(k) ? `   ${toBaseline[k]!.toFixed(2)}x  ${ratios[k]! <= TIME_TARGET ? 'ok' : 'OVER'}/${toBaseline[k]! <= TIME_TARGET ? 'ok' : 'OVER'}` : '';
      return `${k.padEnd(width)} ${cells}${verdict}`;
    }),
    overTarget.length === 0 ? `every time ratio to the first checkpoint at or under ${TIME_TARGET}x` : `over ${TIME_TARGET}x against the first checkpoint: ${overTarget.join(', ')}`,
    overTargetToBaseline.length === 0 ? `every time ratio to the same-run baseline at or under ${TIME_TARGET}x` : `over ${TIME_TARGET}x against the same-run baseline: ${overTargetToBaseline.join(', ')}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});

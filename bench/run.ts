/**
 * `npm run bench` — first publications S, M and L against a real agent process, next to same-run
 * baselines that show the machine's limits:
 *   - JSON.parse of the same bytes;
 *   - one raw better-sqlite3 INSERT of the body as a blob, WAL + synchronous=FULL (what "store
 *     durably" costs at minimum);
 *   - inserting as many rows as the apply wrote, one prepared statement, one transaction, into a
 *     table shaped like price_ranges (same columns and indexes as the till file's), WAL + FULL;
 *   - a bare node:http server receiving the same bytes.
 * Plus the till's lookup by PLU for today on the L data. For L, a second full-size update is then
 * applied while small deliveries for another location arrive and the till reads: the longest small
 * ack against the idle p99 small ack, the receiver's event-loop delay and the till's lookup times
 * during that apply (issue 11), the lookups against the same reader's while a plain process at the
 * applier's priority repeats the raw row insert (bench/plain-writer-child.ts) under the same small
 * deliveries, just before. And on L, what changes next over 31 days against one till query per item
 * (issue 13, bench/changes.ts). `--json` prints one JSON object; `--sizes S,M` runs a subset.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { dateOf, dayOf, encode, generateChains, Prng, todayInZone, type GeneratorOptions } from '../src/dev/publisher';
import type { IsoDate } from '../src/domain/dates';
import { openReadOnly, storeFilePath } from '../src/store/database';
import { describeChanges, measureChanges, type ChangesBench } from './changes';
import { createRawRowsTable, insertRawRows } from './raw-rows';
import { post, SmallAcks } from './small-acks';
import { recordResult } from './results';
import { median, percentile } from './stats';
import { startTillProcess, type TillSample } from './till-process';
import { NODE_SQLITE_MISSING, nodeSqlite, openTill, parseTillBinding, replansBoundLookups, type TillBinding, type TillStatements } from './till-statements';
import { spawnAgent, writeConfig, type ChildAgent } from '../src/dev/child-agent';
import { PeakSampler, statusMemory, type PeakParts } from './peak-sampler';
import { REST_DEADLINE_MS, serveIdle, settledIdleRss, vmRssBytes, type FirstPublication, type IdleMemory } from './serve-idle';

interface SizeSpec {
  readonly name: string;
  readonly options: Omit<GeneratorOptions, 'seed' | 'startDate' | 'days' | 'locations' | 'updatesPerLocation'>;
}

const SIZES: readonly SizeSpec[] = [
  { name: 'S', options: { itemsPerLocation: 200, tariffs: 3, mealPeriods: 3, scheduling: 'all', rangesPerKey: 3 } },
  { name: 'M', options: { itemsPerLocation: 2000, tariffs: 3, mealPeriods: 3, scheduling: 'all', rangesPerKey: 12 } },
  { name: 'L', options: { itemsPerLocation: 5000, tariffs: 3, mealPeriods: 3, scheduling: 'all', rangesPerKey: 12 } },
];

const { values: args } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    sizes: { type: 'string' },
    lookups: { type: 'string', default: '10000' },
    'apply-repeats': { type: 'string', default: '3' },
    'small-gap-ms': { type: 'string', default: '5' },
    'till-binding': { type: 'string' },
    'till-reader': { type: 'string' },
    'till-process': { type: 'boolean', default: false },
    'no-record': { type: 'boolean', default: false },
    /** Only the floor and serve's idle readings (a few minutes), printed and not recorded: for trying a change to memory. */
    'serve-only': { type: 'boolean', default: false },
  },
});
const json = args.json;
const sizesArg = args.sizes;
const selected = sizesArg ? SIZES.filter((s) => sizesArg.split(',').includes(s.name)) : SIZES;
const lookups = Number(args.lookups);
/**
 * `--apply-repeats N` (default 3): the first publication's 200 -> applied is measured N times, each on
 * a fresh agent, alternating with the raw rows insert; the ratio is the median apply over the median
 * insert. One apply against a median of three inserts let a single disturbed second on this shared
 * 2-vCPU machine move the ratio by a third (1.52-2.90x over 46 single-apply runs of one build).
 */
const applyRepeats = Number(args['apply-repeats']);
/**
 * `--small-gap-ms N` (default 5): the pause between one small delivery's 200 and the next during the
 * timed windows, about 150 deliveries a second here: far more than one site's agent receives, to find
 * the longest ack. A larger gap shows what a till sees at a more ordinary rate.
 */
const smallGapMs = Number(args['small-gap-ms']);
if (!Number.isFinite(smallGapMs) || smallGapMs < 0) throw new Error(`--small-gap-ms must be a number of milliseconds, not ${args['small-gap-ms']}`);
if (!Number.isInteger(applyRepeats) || applyRepeats < 1) throw new Error(`--apply-repeats must be a whole number from 1, not ${args['apply-repeats']}`);
/**
 * `--till-binding node:sqlite|better-sqlite3` (default node:sqlite): the SQLite binding the bench's till
 * reads through (bench/till-statements.ts). Both clear a statement's bindings before or after each run;
 * better-sqlite3 links SQLite 3.54, which then plans each lookup through the views again (about three
 * times the work, and a reader whose own p99 is near 0.2 ms on an idle machine), node:sqlite in Node
 * 24.21 links 3.53, which does not (docs/performance.md, "Reading the till's file"). The bench says
 * so when the till's SQLite is one that re-plans.
 */
const tillBinding = parseTillBinding(args['till-binding'], 'node:sqlite');
/**
 * `--till-process`: during the second L apply the till's lookups come from bench/till-reader-child.ts,
 * a process of its own as a real till is, instead of from this process, whose one thread also sends
 * the small deliveries and polls the agent's state (their garbage collection and callbacks then land
 * between or inside the timed lookups).
 */
const tillReaderArg = args['till-reader'];
/**
 * `--till-reader python` (implies `--till-process`): that process is bench/till-reader-child.py on the
 * system's SQLite (Debian 12: 3.40.1, as its ODBC driver), as a POS that links neither of Node's
 * bindings reads.
 */
if (tillReaderArg !== undefined && tillReaderArg !== 'python') throw new Error(`--till-reader takes only python (a Node reader is --till-binding), not ${tillReaderArg}`);
const tillReader: TillBinding | 'python' = tillReaderArg === 'python' ? 'python' : tillBinding;
const tillInOwnProcess = args['till-process'] || tillReaderArg !== undefined;
// The bench's own requirement (the agent needs no node:sqlite): said in one line, before any work.
if (tillBinding === 'node:sqlite' && nodeSqlite() === undefined) {
  process.stderr.write(`${NODE_SQLITE_MISSING}\n`);
  process.exit(1);
}

function log(text: string): void {
  if (!json) process.stderr.write(`${text}\n`);
}

function freshDb(dir: string, name: string): Database.Database {
  const db = new Database(path.join(dir, name));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  return db;
}

function rawBodyInsertMs(dir: string, body: Buffer): number {
  const runs: number[] = [];
  for (let i = 0; i < 3; i++) {
    const db = freshDb(dir, `blob-${i}.db`);
    db.exec('CREATE TABLE inbox (id INTEGER PRIMARY KEY, body BLOB NOT NULL)');
    const insert = db.prepare('INSERT INTO inbox (body) VALUES (?)');
    const started = performance.now();
    insert.run(body);
    runs.push(performance.now() - started);
    db.close();
  }
  return median(runs);
}

/** One run of the raw rows baseline into a new file `name` in `dir`. */
function rawRowsInsertOnceMs(dir: string, name: string, rows: number, indexed = true): number {
  const db = freshDb(dir, name);
  const insert = createRawRowsTable(db, indexed);
  const started = performance.now();
  insertRawRows(db, insert, rows);
  const ms = performance.now() - started;
  db.close();
  return ms;
}

/** The agent's config for every bench agent: an ephemeral port, no admin UI, applies as soon as they arrive. */
function benchAgentConfig(dataDir: string): string {
  return writeConfig(dataDir, { dataDir, webhook: { port: 0, maxBodyBytes: 256 * 1024 * 1024 }, admin: { enabled: false }, sync: { pollIntervalMs: 1000, baselineSettleSeconds: 0 } });
}

/**
 * Waits until the agent's applier thread has rested (ended for want of work, as it does on a site a
 * little after its last apply): the idle figures are those of an agent that has nothing to do.
 */
async function applierRested(agent: ChildAgent): Promise<number> {
  const started = performance.now();
  while ((await agent.threadHeaps()).applier !== null) {
    if (performance.now() - started > REST_DEADLINE_MS) throw new Error(`the applier thread did not rest within ${REST_DEADLINE_MS / 1000} s of an idle start`);
    await new Promise((r) => setTimeout(r, 250));
  }
  return performance.now() - started;
}

interface NodeFloor {
  /** A Node process that loads nothing and waits. */
  readonly bareRssBytes: number;
  /** What each empty worker thread adds to it (from one with FLOOR_WORKERS of them). */
  readonly perEmptyWorkerBytes: number;
  /** What one Intl.DateTimeFormat with a time zone adds to the bare process (ICU's data paged in). */
  readonly intlTimeZoneBytes: number;
  /** What loading express adds to a worker thread (one worker with it against one without). */
  readonly expressInWorkerBytes: number;
  /** The same for zod (the main thread's schemas; kept out of the worker threads). */
  readonly zodInWorkerBytes: number;
}

const FLOOR_WORKERS = 3;

/** RSS of `node -e SCRIPT` a second after it says it is ready. */
async function probeRss(script: string): Promise<number> {
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout.once('data', () => resolve());
      child.once('exit', (code) => reject(new Error(`the floor probe exited (${code}) before it was ready`)));
    });
    await new Promise((r) => setTimeout(r, 1000));
    return vmRssBytes(child.pid!);
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
}

/**
 * The floor under any agent on this machine and Node, measured in the same run: a Node process doing
 * nothing, and what each worker thread that loads nothing adds. `serve` idles on three threads.
 */
/** A process that starts `count` worker threads, each loading `code` first, and says "ready" once all have. */
function withWorkers(count: number, code = ''): string {
  const worker = JSON.stringify(`${code} require('node:worker_threads').parentPort.postMessage(1); setInterval(() => {}, 1e6);`);
  return `const { Worker } = require('node:worker_threads'); const ws = []; let up = 0; for (let i = 0; i < ${count}; i++) { const w = new Worker(${worker}, { eval: true }); w.once('message', () => { if (++up === ${count}) process.stdout.write('ready\\n'); }); ws.push(w); } setInterval(() => {}, 1e6);`;
}

async function nodeFloor(): Promise<NodeFloor> {
  const waiting = "setInterval(() => {}, 1e6); process.stdout.write('ready\\n');";
  const bare = await probeRss(waiting);
  const workers = await probeRss(withWorkers(FLOOR_WORKERS));
  // Parts of serve's own cost, on the same footing: ICU's time-zone data paged in by one
  // Intl.DateTimeFormat with a time zone (the agent's location dates), and what loading express (the
  // status window's server) or zod (the main thread's schemas) adds to a worker thread.
  const intl = await probeRss(`new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/London', timeZoneName: 'longOffset' }).formatToParts(new Date()); ${waiting}`);
  const loading = (module: string): string => `require(${JSON.stringify(require.resolve(module))});`;
  const emptyWorker = await probeRss(withWorkers(1));
  const expressWorker = await probeRss(withWorkers(1, loading('express')));
  const zodWorker = await probeRss(withWorkers(1, loading('zod')));
  return { bareRssBytes: bare, perEmptyWorkerBytes: (workers - bare) / FLOOR_WORKERS, intlTimeZoneBytes: intl - bare, expressInWorkerBytes: expressWorker - emptyWorker, zodInWorkerBytes: zodWorker - emptyWorker };
}

type InboxState = Database.Statement<[number, number], { state: string; apply_ms: number | null }>;

/** How long a first publication may take to apply before the bench gives up (L takes 2-3 s here). */
const APPLY_DEADLINE_MS = 5 * 60_000;

/** Posts a first publication and waits until the agent's inbox says it is applied. */
async function deliverAndWait(agent: ChildAgent, state: InboxState, body: Buffer, locationId: number, changeSequence: number, sampler?: PeakSampler): Promise<{ ackMs: number; appliedMs: number; applyInTransactionMs: number }> {
  const started = performance.now();
  const ack = await post(agent.url, body);
  sampler?.ack();
  if (ack.status !== 200) throw new Error(`agent answered ${ack.status}`);
  // Pending until applied; any other state (stale, conflict, superseded) means the bench's update was
  // not applied and nothing will change by waiting.
  let row = state.get(locationId, changeSequence);
  while (row?.state !== 'applied') {
    if (row !== undefined && row.state !== 'pending') throw new Error(`the agent marked the update ${row.state} instead of applying it`);
    if (performance.now() - started > APPLY_DEADLINE_MS) throw new Error(`the update was not applied within ${APPLY_DEADLINE_MS / 1000} s`);
    await new Promise((r) => setTimeout(r, 2));
    row = state.get(locationId, changeSequence);
  }
  return { ackMs: ack.ms, appliedMs: performance.now() - started, applyInTransactionMs: row.apply_ms ?? 0 };
}

/** 200 -> applied of the same first publication on a fresh agent of its own (--apply-repeats). */
async function freshApplyMs(work: string, body: Buffer, locationId: number, changeSequence: number): Promise<number> {
  const dataDir = fs.mkdtempSync(path.join(work, 'agent-repeat-'));
  const agent = await spawnAgent(benchAgentConfig(dataDir), { built: true });
  try {
    const agentReader = openReadOnly(storeFilePath(dataDir, 'agent'));
    try {
      const state: InboxState = agentReader.prepare('SELECT state, apply_ms FROM inbox WHERE location_id = ? AND change_sequence = ?');
      const { ackMs, appliedMs } = await deliverAndWait(agent, state, body, locationId, changeSequence);
      return appliedMs - ackMs;
    } finally {
      agentReader.close();
    }
  } catch (err) {
    const stderr = agent.stderr().trim();
    throw new Error(`a repeated apply failed: ${(err as Error).message}${stderr ? `\nagent stderr:\n${stderr}` : ''}`, { cause: err });
  } finally {
    await agent.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

function jsonParseMs(body: Buffer): number {
  const runs: number[] = [];
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    JSON.parse(body.toString('utf8'));
    runs.push(performance.now() - started);
  }
  return median(runs);
}

async function bareHttpMs(body: Buffer, dir: string): Promise<number> {
  const child = await spawnAgent(writeConfig(dir, {}), { script: path.join(__dirname, 'bare-http-child.ts') });
  try {
    const runs: number[] = [];
    for (let i = 0; i < 3; i++) runs.push((await post(child.url, body)).ms);
    return median(runs);
  } finally {
    await child.stop();
  }
}

/** The same update with every price one minor unit higher, as the next ChangeSequence (digits only: no float). */
function nextPriceEdit(body: Buffer): Buffer {
  const update = JSON.parse(body.toString('utf8')) as Record<string, unknown> & { ChangeSequence: number; ScheduledItems: { PriceUpdates?: { SellPrice: unknown }[] }[] };
  const bump = (value: unknown): string => {
    const text = String(value);
    const [whole, fraction = ''] = text.split('.');
    const digits = BigInt(`${whole}${fraction}`) + 1n;
    const raw = digits.toString().padStart(fraction.length + 1, '0');
    return fraction.length === 0 ? raw : `${raw.slice(0, raw.length - fraction.length)}.${raw.slice(raw.length - fraction.length)}`;
  };
  for (const item of update.ScheduledItems) for (const p of item.PriceUpdates ?? []) p.SellPrice = bump(p.SellPrice);
  return Buffer.from(JSON.stringify({ ...update, ParentChangeSequence: update.ChangeSequence, ChangeSequence: update.ChangeSequence + 1 }), 'utf8');
}

/** p50, p99 and the longest of a set of lookup times (no spread into Math.max: a fast till times 100,000s). */
function lookupStats(times: readonly number[]): LookupStats {
  return { lookups: times.length, p50Ms: percentile(times, 50), p99Ms: percentile(times, 99), maxMs: times.reduce((m, x) => Math.max(m, x), 0) };
}

interface LookupStats {
  readonly lookups: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

interface DuringApply {
  /** The L-sized price edit applied while the rest was measured. */
  readonly applyMs: number;
  readonly idleSmallAck: { count: number; p50Ms: number; p99Ms: number };
  /** From sending the L edit to its 200: the body received, written and checked. */
  readonly receiptMs: number;
  /** Small deliveries that started during that receipt. */
  readonly smallAcksDuringReceipt: { count: number; p50Ms: number; maxMs: number };
  readonly smallAcksDuringApply: { count: number; p50Ms: number; maxMs: number };
  readonly eventLoopDelay: { p50Ms: number; p99Ms: number; maxMs: number };
  /** `reader`: where the till ran and its SQLite, e.g. "bench process, node:sqlite" or "own process, system SQLite (Python)". */
  readonly tillLookupDuringApply: LookupStats & { reader: string };
  /** The same reader while a plain process at the applier's priority repeats the raw row-insert baseline, small deliveries arriving as during the apply. */
  readonly tillLookupUnderPlainWriter: LookupStats & { windowMs: number; smallAcks: number };
  /** longestSmallAckVsIdleP99: the longest small ack during the receipt and the apply together. */
  readonly ratios: { longestSmallAckVsIdleP99: number; tillLookupP99VsPlainWriter: number };
  /**
   * The agent's memory over its idle reading (the one the first publication's peak is read against):
   * VmHWM just before the L edit was sent (what the first publication and the small deliveries since
   * left as the peak), and the edit's receipt and apply sampled as the first publication's were.
   */
  readonly peak: { beforeEditOverIdleBytes: number; edit: PeakParts };
}

interface SizeResult {
  size: string;
  items: number;
  payloadBytes: number;
  rowsWritten: number;
  ackMs: number;
  /** Request start -> applied, first apply. */
  appliedMs: number;
  /** 200 -> applied: the median of `applySamplesMs` (--apply-repeats). */
  applyMs: number;
  applySamplesMs: number[];
  /** The raw rows insert's runs, interleaved with the applies; baselines.rawRowsInsertMs is their median. */
  rawRowsInsertSamplesMs: number[];
  /** The same rows into a table with no index, interleaved likewise; baselines.unindexedRowsInsertMs is their median. */
  unindexedRowsInsertSamplesMs: number[];
  applyInTransactionMs: number;
  /** The whole run: the L publication, then (L only) a second L-sized apply under small deliveries. */
  peakRssBytes: number;
  /** Receipt and apply of the first publication only. */
  firstPublicationPeakRssBytes: number;
  /** The first publication's peak over idle in parts, sampled from /proc (bench/peak-sampler.ts). */
  peakParts: PeakParts;
  /** After the applier thread rested (restWaitMs from the agent's start). */
  idleRssBytes: number;
  restWaitMs: number;
  /** Each thread's V8 heap when idle (main, receiver, inbox, applier). */
  idleThreadHeaps: Record<string, { totalHeapBytes: number; usedHeapBytes: number; externalBytes: number } | null>;
  baselines: { jsonParseMs: number; rawBodyInsertMs: number; rawRowsInsertMs: number; unindexedRowsInsertMs: number; bareHttpMs: number };
  ratios: {
    ackVsParsePlusBodyInsert: number;
    applyVsRawRowsInsert: number;
    applyVsUnindexedRowsInsert: number;
    ackVsBareHttp: number;
    peakRssVsPayload: number;
    firstPublicationPeakRssVsPayload: number;
    peakOverIdleRssVsPayload: number;
  };
  /** Idle, before the second apply: the bench process's till (`reader`: its binding and SQLite). */
  tillLookup?: LookupStats & { reader: string };
  changes?: ChangesBench;
  duringApply?: DuringApply;
}

/** A size's first publication: one location's first update, a year of ranges from a month ago. */
function firstPublication(spec: SizeSpec) {
  const today = todayInZone(Intl.DateTimeFormat().resolvedOptions().timeZone);
  const [chain] = generateChains({ seed: 2026, locations: 1, updatesPerLocation: 1, startDate: dateOf(dayOf(today) - 30), days: 365, ...spec.options });
  const update = chain!.updates[0]!;
  return { today, update, body: encode(update) };
}

/** S's first publication: what serve applies before its second idle reading. */
function sPublication(): FirstPublication {
  const spec = SIZES.find((s) => s.name === 'S')!;
  const { update, body } = firstPublication(spec);
  return { body, locationId: update.locationId, changeSequence: update.changeSequence, items: spec.options.itemsPerLocation };
}

async function runSize(spec: SizeSpec, work: string): Promise<SizeResult> {
  const { today, update, body } = firstPublication(spec);
  log(`${spec.name}: ${spec.options.itemsPerLocation} items, ${(body.length / 1e6).toFixed(1)} MB`);

  const dataDir = fs.mkdtempSync(path.join(work, `agent-${spec.name}-`));
  // The compiled build, as a site runs it (`npm run bench` builds it first; src/dev/child-agent.cjs).
  let agent: ChildAgent | null = await spawnAgent(benchAgentConfig(dataDir), { built: true });
  let result: SizeResult;
  let till: TillStatements | null = null;
  try {
    const restWaitMs = await applierRested(agent);
    // Settled as serve's is (settledIdleRss); the peaks below are read against this.
    const running = agent;
    const idle = { rssBytes: (await settledIdleRss(async () => (await running.stats()).rssBytes)).rssBytes };
    const idleThreadHeaps = await agent.threadHeaps();
    // Read after the heaps: the question to the agent is answered, and its memory as idle as above.
    const idleStatus = statusMemory(agent.pid);
    const sampler = new PeakSampler(agent.pid, idleStatus);
    const reader = openReadOnly(storeFilePath(dataDir, 'till'));
    const agentReader = openReadOnly(storeFilePath(dataDir, 'agent'));
    const state: InboxState = agentReader.prepare('SELECT state, apply_ms FROM inbox WHERE location_id = ? AND change_sequence = ?');
    sampler.start();
    let first: Awaited<ReturnType<typeof deliverAndWait>>;
    let peakParts: PeakParts;
    try {
      first = await deliverAndWait(agent, state, body, update.locationId, update.changeSequence, sampler);
    } finally {
      peakParts = sampler.stop();
    }
    const ack = { ms: first.ackMs };
    const appliedMs = first.appliedMs;
    const rowsWritten = (reader.prepare('SELECT (SELECT count(*) FROM price_ranges) + (SELECT count(*) FROM availability_ranges) AS n').get() as { n: number }).n;
    const peak = await agent.stats();

    let tillLookup: SizeResult['tillLookup'];
    let changes: ChangesBench | undefined;
    let duringApply: DuringApply | undefined;
    if (spec.name === 'L') {
      // The till: prices and availability for today by PLU, through the views, prepared once.
      till = openTill(storeFilePath(dataDir, 'till'), tillBinding);
      const { prices, availability } = till;
      const plus = (update.body.ScheduledItems as { PLU: unknown }[]).map((i) => String(i.PLU));
      const rng = new Prng(7);
      const times: number[] = [];
      let found = 0;
      for (let i = 0; i < lookups; i++) {
        const plu = rng.pick(plus);
        const t0 = performance.now();
        const p = prices(update.locationId, plu);
        availability(update.locationId, plu);
        times.push(performance.now() - t0);
        if (p.length > 0) found++;
      }
      if (found < lookups * 0.9) throw new Error(`the till lookups found prices for only ${found} of ${lookups} PLUs today: generated dates do not cover today`);
      tillLookup = { ...lookupStats(times), reader: `bench process, ${tillBinding}, SQLite ${till.sqliteVersion}` };
      if (replansBoundLookups(till.sqliteVersion)) log(`note: the till's SQLite ${till.sqliteVersion} (${tillBinding}) plans every lookup through the views again, as its binding clears bindings: its figures are those of such a till (docs/performance.md, "Reading the till's file")`);
      // What changes next over 31 days against one till query per item (bench/changes.ts).
      changes = measureChanges(reader, update.locationId, today as IsoDate);

      // Idle: small deliveries for another location, one after another.
      const small = new SmallAcks(agent.url);
      const idleAcks: number[] = [];
      await small.sendCount(200, 0, idleAcks);
      // The till's reader: the bench's own thread, or a process of its own (--till-process), started
      // before the baseline window so both windows read from the same warm process.
      const ownTill = tillInOwnProcess ? await startTillProcess({ work, tillFile: storeFilePath(dataDir, 'till'), locations: [update.locationId], plus, reader: tillReader }) : null;
      if (ownTill && ownTill.warmUp.priced < ownTill.warmUp.lookups * 0.9) {
        ownTill.kill();
        throw new Error(`the till process found prices for only ${ownTill.warmUp.priced} of ${ownTill.warmUp.lookups} PLUs today`);
      }
      if (ownTill && replansBoundLookups(ownTill.sqliteVersion) && tillReader !== 'python') log(`note: the till process's SQLite ${ownTill.sqliteVersion} plans every lookup through the views again (docs/performance.md, "Reading the till's file")`);
      let plainWriter: ReturnType<typeof spawn> | null = null;
      try {
        /**
         * Small deliveries for another location one after another (--small-gap-ms apart) and, without a till
         * process, the bench's till lookups in batches of 50, until `done()`.
         */
        const underLoad = async (done: () => boolean, acks: number[], lookupsOut: number[], ackStarts?: number[]): Promise<void> => {
          const sender = small.sendUntil(done, smallGapMs, acks, 'under load', ackStarts);
          const tillReads = (async () => {
            while (!done() && !ownTill) {
              for (let i = 0; i < 50; i++) {
                const plu = rng.pick(plus);
                const t0 = performance.now();
                prices(update.locationId, plu);
                availability(update.locationId, plu);
                lookupsOut.push(performance.now() - t0);
              }
              await new Promise((res) => setImmediate(res));
            }
          })();
          await Promise.all([sender, tillReads]);
        };
        const ownTillSamples: TillSample[] = [];
        const inWindow = (out: number[], from: number, to: number): void => {
          for (const sample of ownTillSamples) if (sample.atEpochMs >= performance.timeOrigin + from && sample.atEpochMs <= performance.timeOrigin + to) out.push(sample.ms);
        };

        // Baseline for the till's lookups: the same small deliveries and reader while a plain process
        // at the applier's priority repeats the raw row-insert baseline (its own file), for as long as
        // the first L apply took, twice: what any writer of this size costs a till on this machine.
        plainWriter = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'plain-writer-child.ts'), path.join(dataDir, 'plain-writer.db'), String(rowsWritten)], {
          cwd: path.join(__dirname, '..'),
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        await new Promise<void>((resolve, reject) => {
          plainWriter!.stdout!.once('data', () => resolve());
          plainWriter!.once('exit', (code) => reject(new Error(`the plain writer exited (${code}) before it was ready`)));
        });
        const plainAcks: number[] = [];
        const plainLookups: number[] = [];
        const plainStarted = performance.now();
        const plainMs = Math.max(2000, 2 * (appliedMs - ack.ms));
        await underLoad(() => performance.now() - plainStarted >= plainMs, plainAcks, plainLookups);
        const plainEnded = performance.now();
        plainWriter.kill('SIGKILL');
        await new Promise((res) => plainWriter!.once('exit', res));
        plainWriter = null;

        // During the apply of a second L-sized update: small deliveries keep coming, the till keeps reading.
        // The small deliveries start before the edit is sent: those that start while its body is received
        // and checked count as "during the receipt", the rest as "during the apply".
        const edit = nextPriceEdit(body);
        const beforeEditOverIdleBytes = statusMemory(agent.pid).highWaterBytes - idleStatus.rssBytes;
        const editSampler = new PeakSampler(agent.pid, idleStatus);
        await agent.loopDelayStart();
        const allAcks: number[] = [];
        const ackStarts: number[] = [];
        const duringLookups: number[] = [];
        let editApplied = false;
        const load = underLoad(() => editApplied, allAcks, duringLookups, ackStarts);
        await new Promise((r) => setTimeout(r, 50));
        const receiptStarted = performance.now();
        editSampler.start();
        let editPeak: PeakParts;
        let applyStarted: number;
        try {
          const editAck = await post(agent.url, edit);
          if (editAck.status !== 200) throw new Error(`agent answered ${editAck.status} to the L edit`);
          editSampler.ack();
          applyStarted = performance.now();
          const watcher = (async () => {
            while (state.get(update.locationId, update.changeSequence + 1)?.state !== 'applied') await new Promise((r) => setTimeout(r, 2));
            editApplied = true;
          })();
          await Promise.all([watcher, load]);
        } finally {
          editPeak = editSampler.stop();
        }
        const applyEnded = performance.now();
        const receiptAcks = allAcks.filter((_, i) => ackStarts[i]! >= receiptStarted && ackStarts[i]! < applyStarted);
        const duringAcks = allAcks.filter((_, i) => ackStarts[i]! >= applyStarted);
        if (receiptAcks.length === 0) throw new Error('no small delivery started while the L edit was received');
        const editApplyMs = applyEnded - applyStarted;
        if (ownTill) {
          for (const sample of await ownTill.stop()) ownTillSamples.push(sample);
          inWindow(plainLookups, plainStarted, plainEnded);
          inWindow(duringLookups, applyStarted, applyEnded);
        }
        for (const [what, got] of [['the apply', duringLookups], ['the plain writer', plainLookups]] as const) {
          if (got.length < 1000) throw new Error(`the till made only ${got.length} lookups during ${what}`);
        }
        const loopDelay = await agent.loopDelayStop();
        const idleP99 = percentile(idleAcks, 99);
        duringApply = {
          applyMs: editApplyMs,
          idleSmallAck: { count: idleAcks.length, p50Ms: percentile(idleAcks, 50), p99Ms: idleP99 },
          receiptMs: applyStarted - receiptStarted,
          smallAcksDuringReceipt: { count: receiptAcks.length, p50Ms: percentile(receiptAcks, 50), maxMs: Math.max(...receiptAcks) },
          smallAcksDuringApply: { count: duringAcks.length, p50Ms: percentile(duringAcks, 50), maxMs: Math.max(...duringAcks) },
          eventLoopDelay: loopDelay,
          tillLookupDuringApply: { ...lookupStats(duringLookups), reader: `${ownTill ? 'own process' : 'bench process'}, ${tillReader === 'python' ? "Python's sqlite3" : tillReader}, SQLite ${ownTill ? ownTill.sqliteVersion : till.sqliteVersion}` },
          tillLookupUnderPlainWriter: { ...lookupStats(plainLookups), windowMs: plainEnded - plainStarted, smallAcks: plainAcks.length },
          ratios: {
            longestSmallAckVsIdleP99: Math.max(...receiptAcks, ...duringAcks) / idleP99,
            tillLookupP99VsPlainWriter: percentile(duringLookups, 99) / percentile(plainLookups, 99),
          },
          peak: { beforeEditOverIdleBytes, edit: editPeak },
        };
      } finally {
        plainWriter?.kill('SIGKILL');
        ownTill?.kill();
      }
    }
    const peakAll = await agent.stats();
    reader.close();
    till?.close();
    agentReader.close();
    await agent.stop();
    agent = null;

    const baselines = {
      jsonParseMs: jsonParseMs(body),
      rawBodyInsertMs: rawBodyInsertMs(dataDir, body),
      bareHttpMs: await bareHttpMs(body, dataDir),
    };
    // The apply and the raw rows insert, alternately: the first apply above, an insert, then each
    // repeat on a fresh agent followed by an insert; two more inserts when there are no repeats, so the
    // baseline is never fewer than three runs.
    const applySamples = [appliedMs - ack.ms];
    const rawRowsSamples = [rawRowsInsertOnceMs(dataDir, 'rows-0.db', rowsWritten)];
    const unindexedSamples = [rawRowsInsertOnceMs(dataDir, 'plain-rows-0.db', rowsWritten, false)];
    for (let i = 1; i < applyRepeats; i++) {
      applySamples.push(await freshApplyMs(work, body, update.locationId, update.changeSequence));
      rawRowsSamples.push(rawRowsInsertOnceMs(dataDir, `rows-${i}.db`, rowsWritten));
      unindexedSamples.push(rawRowsInsertOnceMs(dataDir, `plain-rows-${i}.db`, rowsWritten, false));
    }
    while (rawRowsSamples.length < 3) rawRowsSamples.push(rawRowsInsertOnceMs(dataDir, `rows-${rawRowsSamples.length}.db`, rowsWritten));
    while (unindexedSamples.length < 3) unindexedSamples.push(rawRowsInsertOnceMs(dataDir, `plain-rows-${unindexedSamples.length}.db`, rowsWritten, false));
    const applyMs = median(applySamples);
    const rawRowsInsertMs = median(rawRowsSamples);
    const unindexedRowsInsertMs = median(unindexedSamples);
    const wholeRunPeak = Math.max(peak.maxRssBytes, peakAll.maxRssBytes);
    result = {
      size: spec.name,
      items: spec.options.itemsPerLocation,
      payloadBytes: body.length,
      rowsWritten,
      ackMs: ack.ms,
      appliedMs,
      applyMs,
      applyInTransactionMs: first.applyInTransactionMs,
      applySamplesMs: applySamples,
      rawRowsInsertSamplesMs: rawRowsSamples,
      unindexedRowsInsertSamplesMs: unindexedSamples,
      idleThreadHeaps,
      // One process: the receiver and the applier thread share it, so its peak RSS covers both.
      peakRssBytes: wholeRunPeak,
      firstPublicationPeakRssBytes: peak.maxRssBytes,
      peakParts,
      idleRssBytes: idle.rssBytes,
      restWaitMs,
      baselines: { ...baselines, rawRowsInsertMs, unindexedRowsInsertMs },
      ratios: {
        ackVsParsePlusBodyInsert: ack.ms / (baselines.jsonParseMs + baselines.rawBodyInsertMs),
        applyVsRawRowsInsert: applyMs / rawRowsInsertMs,
        applyVsUnindexedRowsInsert: applyMs / unindexedRowsInsertMs,
        peakOverIdleRssVsPayload: (wholeRunPeak - idle.rssBytes) / body.length,
        ackVsBareHttp: ack.ms / baselines.bareHttpMs,
        peakRssVsPayload: wholeRunPeak / body.length,
        firstPublicationPeakRssVsPayload: peak.maxRssBytes / body.length,
      },
      ...(tillLookup ? { tillLookup } : {}),
      ...(changes ? { changes } : {}),
      ...(duringApply ? { duringApply } : {}),
    };
  } catch (err) {
    // The agent's own words (a crash, a refusal) say more than the client's "socket hang up".
    const stderr = agent?.stderr().trim();
    throw new Error(`${(err as Error).message}${stderr ? `\nagent stderr:\n${stderr}` : ''}`, { cause: err });
  } finally {
    if (agent) await agent.kill();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  return result;
}

/** A figure against its target: "MISSED" beside it when over. */
function mark(value: number, target: number, digits = 2): string {
  return value <= target ? value.toFixed(digits) : `MISSED ${value.toFixed(digits)}`;
}

function table(results: SizeResult[]): string {
  const f = (n: number, d = 0): string => n.toFixed(d);
  const mb = (n: number): string => `${(n / 1024 / 1024).toFixed(0)} MiB`;
  const mb1 = (n: number): string => `${(n / 1e6).toFixed(1)} MB`;
  const rows: string[][] = [
    ['', ...results.map((r) => r.size)],
    ['items', ...results.map((r) => String(r.items))],
    ['payload', ...results.map((r) => `${(r.payloadBytes / 1e6).toFixed(1)} MB`)],
    ['range rows written', ...results.map((r) => String(r.rowsWritten))],
    ['request start -> 200 (ms)', ...results.map((r) => f(r.ackMs))],
    ['request start -> applied, first apply (ms)', ...results.map((r) => f(r.appliedMs))],
    [`  apply after the 200, median of ${applyRepeats} (ms)`, ...results.map((r) => f(r.applyMs))],
    ['  each apply (ms)', ...results.map((r) => r.applySamplesMs.map((x) => f(x)).join(' '))],
    ['agent RSS when idle (applier rested)', ...results.map((r) => mb(r.idleRssBytes))],
    ['peak RSS, first publication', ...results.map((r) => mb(r.firstPublicationPeakRssBytes))],
    ['  over idle by the 200 (the receipt)', ...results.map((r) => mb1(r.peakParts.untilAckOverIdleBytes))],
    ['  applier thread running at the 200', ...results.map((r) => (r.peakParts.applierThreadAtAck ? 'yes' : 'no'))],
    ['  highest sample over idle: anon + files', ...results.map((r) => `${mb1(r.peakParts.anonymousOverIdleBytes)} + ${mb1(r.peakParts.fileOverIdleBytes)}`)],
    ['  ... during; applier thread running', ...results.map((r) => `${r.peakParts.highestSampleAfterAck ? 'apply' : 'receipt'}; ${r.peakParts.applierThreadAtHighest ? 'yes' : 'no'}`)],
    ['peak RSS of the agent, whole run', ...results.map((r) => mb(r.peakRssBytes))],
    ['baseline JSON.parse (ms)', ...results.map((r) => f(r.baselines.jsonParseMs))],
    ['baseline raw body INSERT, FULL (ms)', ...results.map((r) => f(r.baselines.rawBodyInsertMs))],
    ['baseline raw rows INSERT, 1 tx, median (ms)', ...results.map((r) => f(r.baselines.rawRowsInsertMs))],
    ['  each insert (ms)', ...results.map((r) => r.rawRowsInsertSamplesMs.map((x) => f(x)).join(' '))],
    ['baseline bare node:http receive (ms)', ...results.map((r) => f(r.baselines.bareHttpMs))],
    ['ack / (parse + body insert)   target <= 2', ...results.map((r) => mark(r.ratios.ackVsParsePlusBodyInsert, 2))],
    ['apply / raw rows insert       target <= 2', ...results.map((r) => mark(r.ratios.applyVsRawRowsInsert, 2))],
    ['baseline rows INSERT, no index, median (ms)', ...results.map((r) => f(r.baselines.unindexedRowsInsertMs))],
    ['  each insert (ms)', ...results.map((r) => r.unindexedRowsInsertSamplesMs.map((x) => f(x)).join(' '))],
    ['apply / unindexed rows insert  target <= 2.5', ...results.map((r) => mark(r.ratios.applyVsUnindexedRowsInsert, 2.5))],
    ['(peak - idle RSS) / payload    target <= 1', ...results.map((r) => mark(r.ratios.peakOverIdleRssVsPayload, 1))],
    ['idle RSS, Agent alone (MB)     target <= 100 MB', ...results.map((r) => mark(r.idleRssBytes / 1e6, 100, 0))],
    ['ack / bare http', ...results.map((r) => f(r.ratios.ackVsBareHttp, 2))],
    ['peak RSS / payload, whole run  target < 6', ...results.map((r) => f(r.ratios.peakRssVsPayload, 2))],
    ['  first publication only', ...results.map((r) => f(r.ratios.firstPublicationPeakRssVsPayload, 2))],
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  const lines = rows.map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  '));
  const l = results.find((r) => r.tillLookup);
  if (l?.tillLookup) lines.push('', `till lookup by PLU for today on L (${l.tillLookup.reader}; ${l.tillLookup.lookups} random PLUs): p50 ${l.tillLookup.p50Ms.toFixed(3)} ms, p99 ${l.tillLookup.p99Ms.toFixed(3)} ms (target p99 < 1 ms), max ${l.tillLookup.maxMs.toFixed(2)} ms`);
  if (l?.changes) lines.push(describeChanges(l.changes));
  const heaps = results[0]?.idleThreadHeaps;
  if (heaps) {
    const parts = Object.entries(heaps).map(([name, h]) => (h ? `${name} ${mb(h.totalHeapBytes)} (${mb(h.usedHeapBytes)} used)` : `${name} not running`));
    lines.push('', `V8 heap of each thread when idle (${results[0]!.size}): ${parts.join(', ')}; the rest of the idle RSS is Node's own code, SQLite and the threads' native memory`);
  }
  const d = l?.duringApply;
  if (d) {
    lines.push(
      '',
      `during the receipt (${d.receiptMs.toFixed(0)} ms to its 200) and the apply (${d.applyMs.toFixed(0)} ms on the applier thread) of a second L-sized update:`,
      `  small acks for another location during the receipt: ${d.smallAcksDuringReceipt.count}, p50 ${d.smallAcksDuringReceipt.p50Ms.toFixed(2)} ms, longest ${d.smallAcksDuringReceipt.maxMs.toFixed(2)} ms`,
      `  small acks for another location during the apply: ${d.smallAcksDuringApply.count}, p50 ${d.smallAcksDuringApply.p50Ms.toFixed(2)} ms, longest ${d.smallAcksDuringApply.maxMs.toFixed(2)} ms; idle p99 ${d.idleSmallAck.p99Ms.toFixed(2)} ms (${d.idleSmallAck.count} acks)`,
      `  longest small ack / idle p99 small ack: ${mark(d.ratios.longestSmallAckVsIdleP99, 10)}   target <= 10`,
      `  receiver event-loop delay: p50 ${d.eventLoopDelay.p50Ms.toFixed(2)} ms, p99 ${d.eventLoopDelay.p99Ms.toFixed(2)} ms (target <= 20 ms), max ${d.eventLoopDelay.maxMs.toFixed(2)} ms`,
      `  till lookup during the apply (${d.tillLookupDuringApply.reader}): ${d.tillLookupDuringApply.lookups} lookups, p50 ${d.tillLookupDuringApply.p50Ms.toFixed(3)} ms, p99 ${d.tillLookupDuringApply.p99Ms.toFixed(3)} ms (target < 0.2 ms), max ${d.tillLookupDuringApply.maxMs.toFixed(2)} ms`,
      `  the same reader for ${(d.tillLookupUnderPlainWriter.windowMs / 1000).toFixed(1)} s before, while a plain nice-10 process repeated the raw rows insert (${d.tillLookupUnderPlainWriter.smallAcks} small acks): ${d.tillLookupUnderPlainWriter.lookups} lookups, p50 ${d.tillLookupUnderPlainWriter.p50Ms.toFixed(3)} ms, p99 ${d.tillLookupUnderPlainWriter.p99Ms.toFixed(3)} ms`,
      `  till lookup p99 during the apply / under the plain writer: ${d.ratios.tillLookupP99VsPlainWriter.toFixed(2)}`,
      `  agent's peak RSS over idle: ${mb1(d.peak.beforeEditOverIdleBytes)} before the edit was sent; by its 200 ${mb1(d.peak.edit.untilAckOverIdleBytes)}; highest sample ${mb1(d.peak.edit.highestSampleOverIdleBytes)} (anon ${mb1(d.peak.edit.anonymousOverIdleBytes)} + files ${mb1(d.peak.edit.fileOverIdleBytes)}), during its ${d.peak.edit.highestSampleAfterAck ? 'apply' : 'receipt'}, applier thread ${d.peak.edit.applierThreadAtHighest ? 'running' : 'not running'}`,
    );
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'pos-sync-bench-'));
  try {
    const floor = await nodeFloor();
    // Then S's first publication, through serve's webhook: how a site's agent idles once it has
    // applied (the pages and arenas the apply used stay).
    const firstS = sPublication();
    log(`serve: waiting for its applier thread to rest, then for it to apply S's first publication (at the default settle deadline) and rest again`);
    const serve = await serveIdle(work, { afterApply: firstS });
    // The same serve with V8's optimising compilers off: how much of the node binary's code in its
    // RSS those compilers' own code is (they run for the start's drain, and their pages stay).
    log('serve again, V8 optimising compilers off: waiting for its applier thread to rest');
    const serveUnoptimised = await serveIdle(work, { nodeOptions: ['--no-opt', '--no-maglev'] });
    const mbText = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;
    const filesText = (s: IdleMemory): string => `file-backed ${mbText(s.fileBackedBytes)}: node's code ${mbText(s.fileBreakdown.nodeCodeBytes)}, node's data ${mbText(s.fileBreakdown.nodeDataBytes)}, other files ${mbText(s.fileBreakdown.otherFilesBytes)}; anonymous ${mbText(s.anonymousBytes)}`;
    const serveLines = [
      `idle RSS of ${serve.command}, its applier thread rested (threads ${serve.agentThreads.join(', ')}): ${mbText(serve.rssBytes)}   target <= 100 MB${serve.rssBytes <= 100e6 ? '' : ' MISSED'} (${filesText(serve)}); just before its applier rested: ${mbText(serve.awakeRssBytes)}`,
      `the same once it has applied S's first publication (${serve.afterApply!.items} items, ${mbText(serve.afterApply!.payloadBytes)}) and rested again: ${mbText(serve.afterApply!.rssBytes)}   target <= 100 MB${serve.afterApply!.rssBytes <= 100e6 ? '' : ' MISSED'} (${filesText(serve.afterApply!)})`,
      `the same with ${serveUnoptimised.nodeOptions.join(' ')} (not how a site runs it), start only: ${mbText(serveUnoptimised.rssBytes)} (${filesText(serveUnoptimised)})`,
      `baseline: a bare Node process ${mbText(floor.bareRssBytes)}, each empty worker thread +${mbText(floor.perEmptyWorkerBytes)}; an Intl time zone +${mbText(floor.intlTimeZoneBytes)}; express in a worker +${mbText(floor.expressInWorkerBytes)}, zod +${mbText(floor.zodInWorkerBytes)}`,
    ].join('\n');
    if (args['serve-only']) {
      process.stdout.write(`${serveLines}\n`);
      return;
    }
    const results: SizeResult[] = [];
    for (const spec of selected) results.push(await runSize(spec, work));
    const machine = { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model ?? 'unknown', memoryBytes: os.totalmem(), node: process.version, platform: `${os.platform()} ${os.release()}`, tmpdir: os.tmpdir() };
    recordResult(`run-${results.map((r) => r.size).join('-')}`, { results, serveIdle: serve, serveUnoptimised, nodeFloor: floor, tmpdir: machine.tmpdir, tillBinding });
    if (json) process.stdout.write(`${JSON.stringify({ machine, results, serveIdle: serve, serveUnoptimised, nodeFloor: floor })}\n`);
    else process.stdout.write(`${table(results)}\n\n${serveLines}\n\nmachine: ${machine.cpus} x ${machine.cpuModel}, ${(machine.memoryBytes / 2 ** 30).toFixed(0)} GiB, node ${machine.node}, data in ${machine.tmpdir}\n`);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});

/**
 * `npm run bench:load` — load and soak: 50 locations each deliver a chain of updates concurrently for
 * a bounded time (default 60 s, `--seconds N`), while a separate till process reads the POS views in a
 * loop. Half-way, one large first publication (5,000 items, ~43 MB) arrives for another location.
 * Reports updates per second, ack latency p50/p99, the till's query latency p50/p99 overall and
 * during the large apply, the agent's peak RSS and the largest WAL size seen. `--json` for one object.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { dateOf, dayOf, encode, generateChains, planDeliveries, Prng, runDeliveries, todayInZone } from '../src/dev/publisher';
import { databasePath } from '../src/store/database';
import { recordResult } from './results';
import { percentile } from './stats';
import { startTillProcess } from './till-process';
import { spawnAgent, waitFor, withReader, writeConfig } from '../src/dev/child-agent';

const { values: args } = parseArgs({ options: { json: { type: 'boolean', default: false }, seconds: { type: 'string', default: '60' }, locations: { type: 'string', default: '50' }, 'no-record': { type: 'boolean', default: false } } });
const json = args.json;
const seconds = Number(args.seconds);
const LOCATIONS = Number(args.locations);
const ITEMS = 150;

function log(text: string): void {
  if (!json) process.stderr.write(`${text}\n`);
}

function post(url: string, body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Children to stop if the run fails half-way, so a failed run leaves no agent or till behind. */
const onFailure: (() => void)[] = [];

async function main(): Promise<void> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'pos-sync-load-'));
  const dataDir = path.join(work, 'data');
  const today = todayInZone(Intl.DateTimeFormat().resolvedOptions().timeZone);
  const startDate = dateOf(dayOf(today) - 14);
  // More updates than can be sent in the time; the run is bounded by time, not by the chains.
  const chains = generateChains({ seed: 50, locations: LOCATIONS, updatesPerLocation: 1500, itemsPerLocation: ITEMS, tariffs: 3, mealPeriods: 3, rangesPerKey: 3, startDate, days: 120, editItems: [1, 6] });
  const [large] = generateChains({ seed: 51, locations: 1, updatesPerLocation: 1, itemsPerLocation: 5000, tariffs: 3, mealPeriods: 3, scheduling: 'all', rangesPerKey: 12, startDate, days: 365, firstLocationId: 9000 });
  const largeUpdate = large!.updates[0]!;
  const largeBody = encode(largeUpdate);
  const plan = planDeliveries(chains, { reorderWindow: 3, duplicate: 0.05 }, new Prng(50));

  // The compiled build, as a site runs it (`npm run bench:load` builds it first).
  const agent = await spawnAgent(writeConfig(work, { dataDir, webhook: { port: 0, maxBodyBytes: 256 * 1024 * 1024 }, admin: { enabled: false }, sync: { pollIntervalMs: 1000, baselineSettleSeconds: 0 } }), {
    built: true,
  });
  onFailure.push(() => void agent.kill());
  // The till opens the database once it exists (the agent creates it at start).
  // better-sqlite3, as when the figures in docs/performance.md were measured (bench/till-statements.ts).
  const till = await startTillProcess({ work, tillFile: databasePath(dataDir), locations: [...chains.map((c) => c.locationId), 9000], maxPlu: 1000 + ITEMS, reader: 'better-sqlite3' });
  onFailure.push(() => till.kill());

  let maxWal = 0;
  let maxRss = 0;
  const walFile = `${databasePath(dataDir)}-wal`;
  const watcher = setInterval(() => {
    try {
      maxWal = Math.max(maxWal, fs.statSync(walFile).size);
    } catch {
      // No WAL yet.
    }
  }, 100);

  log(`load: ${LOCATIONS} locations x ${ITEMS} items, ${seconds} s; a ${(largeBody.length / 1e6).toFixed(0)} MB first publication half-way`);
  const started = performance.now();
  const deadline = started + seconds * 1000;
  let largeWindow: { from: number; to: number; ackMs: number } | null = null;
  const largeRun = (async () => {
    await new Promise((r) => setTimeout(r, (seconds * 1000) / 2));
    const from = performance.timeOrigin + performance.now();
    const status = await post(agent.url, largeBody);
    const ackMs = performance.timeOrigin + performance.now() - from;
    if (status !== 200) throw new Error(`large publication answered ${status}`);
    await waitFor('the large publication to be applied', () => withReader(dataDir, (db) => (db.prepare('SELECT last_change_sequence AS s FROM locations WHERE location_id = 9000').get() as { s: number | null } | undefined)?.s === largeUpdate.changeSequence), 600_000, 20);
    largeWindow = { from, to: performance.timeOrigin + performance.now(), ackMs };
  })();
  let acked = 0;
  const progress = setInterval(() => log(`  ${((performance.now() - started) / 1000).toFixed(0)} s: ${acked} deliveries acknowledged${largeWindow ? ', large publication applied' : ''}${process.env.CHILD_AGENT_LOG ? `\n${agent.stderr().slice(-600)}` : ''}`), 5000);
  const report = await runDeliveries({ url: agent.url, timeoutMs: 60_000 }, plan, {
    onOutcome: (_d, o) => {
      if (o.acked) acked++;
    },
    concurrency: LOCATIONS,
    retry: { baseDelayMs: 100, maxDelayMs: 2000, factor: 2 },
    stop: () => performance.now() > deadline,
  });
  const sendingS = (performance.now() - started) / 1000;
  log('  deliveries stopped; waiting for the large publication');
  await largeRun;
  clearInterval(progress);
  const elapsedS = (performance.now() - started) / 1000;
  // Stopping mid-chain leaves gaps (an update acknowledged whose parent was never sent): send the
  // missing links, as head office eventually would, so every acknowledged update can apply.
  const ackedKeys = new Set(report.acked.map((a) => `${a.locationId}/${a.changeSequence}`));
  const missing = chains.flatMap((c) => {
    const last = Math.max(-1, ...c.updates.filter((u) => ackedKeys.has(`${u.locationId}/${u.changeSequence}`)).map((u) => u.index));
    return c.updates.filter((u) => u.index <= last && !ackedKeys.has(`${u.locationId}/${u.changeSequence}`));
  });
  await runDeliveries({ url: agent.url }, { deliveries: missing.map((update) => ({ update, copy: 0, delayMs: 0 })), dropped: [] }, { concurrency: 8, firstPublicationFirst: false });
  // Let the applier finish what was acknowledged, then read the figures.
  await waitFor('the applier to drain', () => withReader(dataDir, (db) => (db.prepare("SELECT count(*) AS n FROM inbox WHERE state = 'pending'").get() as { n: number }).n === 0, 'agent'), 600_000, 100);
  // Sending stops at the deadline; the applier may still have a backlog then (acks outpace applies).
  const drainedS = (performance.now() - started) / 1000;
  const appliedTotal = withReader(dataDir, (db) => (db.prepare("SELECT count(*) AS n FROM inbox WHERE state = 'applied' AND location_id <> 9000").get() as { n: number }).n, 'agent');
  maxRss = (await agent.stats()).maxRssBytes;
  clearInterval(watcher);
  const samples = await till.stop();
  await agent.stop();

  const all: number[] = [];
  const during: number[] = [];
  const window = largeWindow as { from: number; to: number; ackMs: number } | null;
  for (const { atEpochMs, ms } of samples) {
    all.push(ms);
    if (window && atEpochMs >= window.from && atEpochMs <= window.to) during.push(ms);
  }
  const acks = report.acked.map((a) => a.ackMs);
  const result = {
    locations: LOCATIONS,
    seconds: Number(elapsedS.toFixed(1)),
    sendingSeconds: Number(sendingS.toFixed(1)),
    allAppliedAfterSeconds: Number(drainedS.toFixed(1)),
    deliveriesAcked: report.acked.length,
    deliveriesPerSecond: Number((report.acked.length / sendingS).toFixed(1)),
    updatesAppliedPerSecond: Number((appliedTotal / drainedS).toFixed(1)),
    statusCounts: report.statusCounts,
    ackLatencyMs: { p50: percentile(acks, 50), p99: percentile(acks, 99) },
    tillQueryMs: { lookups: all.length, p50: percentile(all, 50), p99: percentile(all, 99), max: all.reduce((m, v) => Math.max(m, v), 0) },
    tillQueryDuringLargeApplyMs: { lookups: during.length, p50: percentile(during, 50), p99: percentile(during, 99), max: during.length ? during.reduce((m, v) => Math.max(m, v), 0) : NaN },
    largePublication: { bytes: largeBody.length, ackMs: window?.ackMs ?? NaN, appliedAfterMs: window ? window.to - window.from : NaN },
    peakRssBytes: maxRss,
    maxWalBytes: maxWal,
  };
  fs.rmSync(work, { recursive: true, force: true });
  recordResult('load', result);
  if (json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  const f = (n: number, d = 1): string => n.toFixed(d);
  process.stdout.write(
    [
      `locations                         ${result.locations} (${ITEMS} items each); the large publication applied ${result.seconds} s after the start`,
      `deliveries acknowledged           ${result.deliveriesAcked} in ${result.sendingSeconds} s of sending (${result.deliveriesPerSecond}/s); attempts ${JSON.stringify(result.statusCounts)}`,
      `updates applied                   all ${appliedTotal} after ${result.allAppliedAfterSeconds} s (${result.updatesAppliedPerSecond}/s)`,
      `ack latency                       p50 ${f(result.ackLatencyMs.p50)} ms, p99 ${f(result.ackLatencyMs.p99)} ms`,
      `till query (prices+availability)  p50 ${f(result.tillQueryMs.p50, 3)} ms, p99 ${f(result.tillQueryMs.p99, 3)} ms, max ${f(result.tillQueryMs.max)} ms (${result.tillQueryMs.lookups} lookups)`,
      `  during the large apply          p50 ${f(result.tillQueryDuringLargeApplyMs.p50, 3)} ms, p99 ${f(result.tillQueryDuringLargeApplyMs.p99, 3)} ms, max ${f(result.tillQueryDuringLargeApplyMs.max)} ms (${result.tillQueryDuringLargeApplyMs.lookups} lookups)`,
      `large publication                 ${(result.largePublication.bytes / 1e6).toFixed(1)} MB: 200 after ${f(result.largePublication.ackMs, 0)} ms, applied after ${f(result.largePublication.appliedAfterMs, 0)} ms`,
      `agent peak RSS                    ${(result.peakRssBytes / 2 ** 20).toFixed(0)} MiB`,
      `largest WAL seen                  ${(result.maxWalBytes / 2 ** 20).toFixed(1)} MiB`,
    ].join('\n') + '\n',
  );
}

main().catch((err: unknown) => {
  for (const stop of onFailure) stop();
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});

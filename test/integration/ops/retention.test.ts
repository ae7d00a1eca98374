import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import { AgentCore } from '../../../src/core';
import { silentLogger } from '../../../src/log';
import { pruneDatabase, retentionCutoffs, RetentionService, type RangePruner } from '../../../src/ops/retention';
import { pruneRangeBatch } from '../../../src/sync/range-prune';
import { databasePath, type Db } from '../../../src/store/database';
import { startTestAgent } from '../../helpers/agent';
import { testConfig } from '../../helpers/fixtures';

const NOW = new Date('2026-06-01T12:00:00.000Z');
const OLD = '2026-01-01T00:00:00.000Z';
const RECENT = '2026-05-30T00:00:00.000Z';
const READER = path.resolve(__dirname, '..', '..', 'helpers', 'ops', 'till-reader.mjs');

/**
 * For the tests that prune without an agent running: the till's ranges are pruned here, in this
 * process, as the applier thread would (the tests that start an agent go through its applier).
 */
function inProcessRanges(till: Db): RangePruner {
  return (request) => Promise.resolve(pruneRangeBatch(till, request));
}

/** Fills the tables with old and recent rows straight through SQL (the applier would take minutes). */
/** Seeds agent.db (bodies, history, quarantine) and the till's file (items, ranges) of one location. */
function seed(core: { agentDb: Db; tillDb: Db }, scale: { oldRanges: number; currentRanges: number; oldBodies: number }): void {
  const db = core.agentDb;
  const till = core.tillDb;
  till.prepare("INSERT INTO locations (location_id, location_name, currency, last_change_sequence) VALUES (10, 'L', 'GBP', 1)").run();
  db.transaction(() => {
    db.prepare("INSERT INTO known_locations (location_id, location_name, first_seen_at) VALUES (10, 'L', ?)").run(OLD);
    const inbox = db.prepare(
      `INSERT INTO inbox (location_id, change_sequence, parent_change_sequence, body_bytes, body_sha256, received_at, source, state, applied_at)
       VALUES (10, ?, ?, 2000, 'x', ?, 'webhook', ?, ?)`,
    );
    const insertBody = db.prepare('INSERT INTO inbox_bodies (inbox_id, chunk, body) VALUES (?, 0, ?)');
    const body = Buffer.alloc(2000, 'x');
    const withBody = (...args: [number, number, Buffer, string, string, string | null]): void => {
      const [seq, parent, bytes, at, state, appliedAt] = args;
      insertBody.run(Number(inbox.run(seq, parent, at, state, appliedAt).lastInsertRowid), bytes);
    };
    for (let i = 1; i <= scale.oldBodies; i++) withBody(i, i - 1, body, OLD, 'applied', OLD);
    withBody(scale.oldBodies + 1, scale.oldBodies, body, RECENT, 'applied', RECENT);
    withBody(scale.oldBodies + 3, scale.oldBodies + 2, body, OLD, 'pending', null);
    withBody(scale.oldBodies + 4, scale.oldBodies + 3, body, OLD, 'conflict', null);
    const delivery = db.prepare("INSERT INTO deliveries (received_at, source, body_bytes, outcome, http_status) VALUES (?, 'webhook', 1, 'accepted', 200)");
    delivery.run('2025-01-01T00:00:00.000Z');
    delivery.run(RECENT);
    const quarantine = db.prepare(
      "INSERT INTO quarantine (received_at, source, body, body_bytes, body_sha256, error_id, reason) VALUES (?, 'webhook', x'00', 1, 'x', 'invalid_json', 'r')",
    );
    for (let i = 0; i < 1200; i++) quarantine.run(OLD);
    quarantine.run(RECENT);
  }).immediate();
  till.transaction(() => {
    const items = till.prepare("INSERT INTO items (location_id, item_id, plu, item_name, item_type, updated_by) VALUES (10, ?, ?, 'n', 'RECIPE', 1)");
    for (let i = 0; i < 100; i++) items.run(`I${i}`, String(i));
    const priceRow = till.prepare(
      `INSERT INTO price_ranges (location_id, item_id, tariff_name, date_from, date_to, tax_code, tax_rate, sell_price_minor, sell_price, currency, source_inbox_id)
       VALUES (10, ?, 'Eat In', ?, ?, 'S', 20, 100, '1.00', 'GBP', 1)`,
    );
    const availabilityRow = till.prepare(
      "INSERT INTO availability_ranges (location_id, item_id, meal_period, date_from, date_to, status, source_inbox_id) VALUES (10, ?, 'Lunch', ?, ?, 'AVAILABLE', 1)",
    );
    for (let i = 0; i < scale.oldRanges; i++) {
      priceRow.run(`I${i % 100}`, '2024-01-01', '2024-12-31');
      availabilityRow.run(`I${i % 100}`, '2024-01-01', '2024-12-31');
    }
    // Ended 2025-06-02: exactly 364 days before 2026-06-01, so inside a 365-day retention: kept.
    priceRow.run('I1', '2025-01-01', '2025-06-02');
    for (let i = 0; i < scale.currentRanges; i++) priceRow.run(`I${i % 100}`, '2026-01-01', '2026-12-31');
  }).immediate();
}

function count(db: Db, sql: string): number {
  return (db.prepare(sql).get() as { n: number }).n;
}

describe('retention', () => {
  it('prunes exactly what is past its cutoff, in batches no larger than configured', async () => {
    const config = testConfig({ retention: { batchSize: 100 } });
    const core = new AgentCore(config, silentLogger);
    try {
      seed(core, { oldRanges: 450, currentRanges: 50, oldBodies: 250 });
      const cutoffs = retentionCutoffs(config.retention, [{ locationId: 10, timezone: 'Europe/London' }], NOW);
      assert.equal(cutoffs.rangesEndedBefore.get(10), '2025-06-01');
      const report = await pruneDatabase({ agent: core.agentDb, ranges: inProcessRanges(core.tillDb) }, cutoffs, config.retention.batchSize);
      assert.deepEqual(report.counts, { rawBodies: 250, conflictBodies: 1, quarantine: 1200, deliveries: 1, priceRanges: 450, availabilityRanges: 450, updates: 0, appliedRecords: 0, warnings: 0, audit: 0 });
      // 250 bodies = 3 batches, 1 conflict, 1200 quarantine = 13, 1 delivery, 450+450 ranges = 5+5, and
      // one empty batch each for finished updates, applied records, warnings and the audit log.
      assert.equal(report.batches, 3 + 1 + 13 + 1 + 5 + 5 + 4);
      const db = core.agentDb;
      assert.equal(count(db, "SELECT count(*) AS n FROM inbox WHERE state = 'applied' AND body_kept = 0 AND id NOT IN (SELECT inbox_id FROM inbox_bodies)"), 250);
      assert.equal(count(db, 'SELECT count(*) AS n FROM inbox'), 253, 'inbox rows (metadata) are kept');
      assert.equal(count(db, "SELECT count(*) AS n FROM inbox JOIN inbox_bodies b ON b.inbox_id = inbox.id WHERE state = 'pending'"), 1, 'a pending body is never pruned');
      assert.equal(count(db, "SELECT count(*) AS n FROM inbox JOIN inbox_bodies b ON b.inbox_id = inbox.id WHERE applied_at = '2026-05-30T00:00:00.000Z'"), 1);
      assert.equal(count(db, 'SELECT count(*) AS n FROM quarantine'), 1);
      assert.equal(count(db, 'SELECT count(*) AS n FROM deliveries'), 1);
      assert.equal(count(core.tillDb, 'SELECT count(*) AS n FROM price_ranges'), 51);
      assert.equal(count(core.tillDb, "SELECT count(*) AS n FROM price_ranges WHERE date_to = '2025-06-02'"), 1);
      assert.equal(count(core.tillDb, 'SELECT count(*) AS n FROM availability_ranges'), 0);
      // A second run finds nothing.
      const again = await pruneDatabase({ agent: core.agentDb, ranges: inProcessRanges(core.tillDb) }, cutoffs, config.retention.batchSize);
      assert.equal(Object.values(again.counts).reduce((a, b) => a + b, 0), 0);
    } finally {
      core.close();
    }
  });

  it('never blocks the till: it prunes 60k ranges in small committed batches while the till reads and the webhook answers', async (ctx) => {
    // The applier at normal priority, so the reported batch times (diagnostics only) are about the work
    // in a batch, not the time the OS gives the reader and the prober meanwhile.
    const BATCH = 500;
    const t = await startTestAgent({ retention: { batchSize: BATCH }, sync: { applyPriority: 'normal' } }, {});
    seed(t.agent.core, { oldRanges: 30_000, currentRanges: 5_000, oldBodies: 2_000 });
    // The main thread's own connection to the till's file (the applier thread writes through another).
    const till = t.agent.core.tillDb;
    const TABLE = { price: 'price_ranges', availability: 'availability_ranges', 'applied-updates': 'applied_updates' } as const;
    // Meanwhile the agent's own event loop keeps answering (the webhook shares it with the prune).
    let slowestHealthMs = 0;
    let healthChecks = 0;
    let pruning = true;
    const prober = (async () => {
      while (pruning) {
        const t0 = performance.now();
        const res = await fetch(`${t.baseUrl}/healthz`);
        await res.text();
        assert.equal(res.status, 200);
        slowestHealthMs = Math.max(slowestHealthMs, performance.now() - t0);
        healthChecks += 1;
      }
    })();
    // The till: a reader process started once the prune is under way (after its first range batch) and
    // stopped at its last range batch, so every read it makes happens while the prune is in progress.
    let reader: ReturnType<typeof spawn> | null = null;
    let readerExit: Promise<number | null> | null = null;
    let out = '';
    const startReader = async (): Promise<void> => {
      const child = spawn(process.execPath, [READER, databasePath(t.config.dataDir)], { stdio: ['pipe', 'pipe', 'inherit'] });
      reader = child;
      readerExit = new Promise((resolve, reject) => {
        child.on('exit', resolve);
        child.on('error', reject);
      });
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('reader did not start')), 30_000);
        child.stdout!.on('data', () => {
          if (out.includes('ready')) {
            clearTimeout(timer);
            resolve();
          }
        });
      });
    };
    // Every range batch as it returns: what it deleted and how many rows another connection then sees.
    const seen: { kind: keyof typeof TABLE; changed: number; remaining: number }[] = [];
    let healthAtFirstBatch = -1;
    let healthAtLastBatch = -1;
    const ranges: RangePruner = async (request) => {
      const batch = await t.agent.applier.pruneRanges(request);
      seen.push({ kind: request.kind, changed: batch.changed, remaining: count(till, `SELECT count(*) AS n FROM ${TABLE[request.kind]}`) });
      if (reader === null) {
        await startReader();
        healthAtFirstBatch = healthChecks;
      } else if (request.kind === 'applied-updates' && batch.changed < request.batchSize) {
        // The last batch of the last kind: stop the reader (it prints its figures and exits).
        healthAtLastBatch = healthChecks;
        reader.stdin!.end();
      }
      return batch;
    };
    const cutoffs = retentionCutoffs(t.config.retention, [{ locationId: 10, timezone: 'Europe/London' }], NOW);
    const report = await pruneDatabase({ agent: t.agent.core.agentDb, ranges }, cutoffs, t.config.retention.batchSize);
    pruning = false;
    await prober;
    assert.ok(readerExit, 'the reader was started');
    assert.equal(await readerExit, 0);
    const stats = JSON.parse(out.trim().split('\n').pop()!) as { reads: number; maxMs: number; meanMs: number; errors: number };
    // Timings are reported, not asserted (speed targets live in the benchmarks); typical figures are a few ms.
    ctx.diagnostic(
      `pruned ${report.counts.priceRanges + report.counts.availabilityRanges} ranges + ${report.counts.rawBodies} bodies in ${report.totalMs.toFixed(0)} ms, ` +
        `${report.batches} batches, longest ${report.longestBatchMs.toFixed(1)} ms; till reader: ${stats.reads} reads, max ${stats.maxMs.toFixed(1)} ms, ` +
        `mean ${stats.meanMs.toFixed(2)} ms; /healthz during prune: ${healthChecks} calls (${healthAtLastBatch - healthAtFirstBatch} between the range batches), ` +
        `slowest ${slowestHealthMs.toFixed(1)} ms`,
    );
    assert.deepEqual(report.counts, { rawBodies: 2_000, conflictBodies: 1, quarantine: 1_200, deliveries: 1, priceRanges: 30_000, availabilityRanges: 30_000, updates: 0, appliedRecords: 0, warnings: 0, audit: 0 });
    // Batched, not one big transaction: a batch per BATCH rows of each kind, plus the short (here empty)
    // batch that ends it: bodies 2000 = 4 + 1, conflict 1, quarantine 1200 = 3, deliveries 1, ranges 30000 = 60 + 1 each,
    // and one (empty) each for finished updates, warnings, the audit log and applied records.
    assert.equal(report.batches, 5 + 1 + 3 + 1 + 61 + 61 + 4);
    // Each range batch deleted at most BATCH rows and was committed on its own: another connection
    // sees the table shrink by exactly that batch after each one (one transaction would show no step).
    const expected = (kind: keyof typeof TABLE, before: number, rows: number) =>
      Array.from({ length: rows / BATCH + 1 }, (_, i) => ({ kind, changed: i < rows / BATCH ? BATCH : 0, remaining: before - Math.min(rows, (i + 1) * BATCH) }));
    assert.deepEqual(seen, [...expected('price', 35_001, 30_000), ...expected('availability', 30_000, 30_000), ...expected('applied-updates', 0, 0)]);
    // The till read throughout, without a single error (busy, locked) ...
    assert.equal(stats.errors, 0);
    assert.ok(stats.reads > 0, 'the reader read while the ranges were pruned');
    // ... and the event loop answered /healthz between the prune's batches (it was never held by one long transaction).
    assert.ok(healthAtFirstBatch >= 0 && healthAtLastBatch > healthAtFirstBatch, `no /healthz answered during the range batches (${healthAtFirstBatch} -> ${healthAtLastBatch})`);
    assert.equal(count(till, 'SELECT count(*) AS n FROM price_ranges'), 5_001);
    assert.equal(count(till, 'SELECT count(*) AS n FROM availability_ranges'), 0);
  });

  it('the service runs on its schedule and reports its last run', async () => {
    const t = await startTestAgent({ retention: { pruneIntervalMinutes: 0.002 } });
    const service = new RetentionService(t.config, silentLogger, () => NOW);
    seed(t.agent.core, { oldRanges: 10, currentRanges: 1, oldBodies: 3 });
    await service.start(t.agent);
    try {
      // The schedule may run more than once before this looks (a busy machine): the first run prunes,
      // later ones report nothing left. So the report says a run happened; the rows say what it did.
      const deadline = Date.now() + 10_000;
      while (service.state().lastReport === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      const state = service.state();
      assert.equal(state.lastError, null);
      assert.ok(state.lastReport, 'a run was reported');
      assert.ok(state.lastRunAt, 'with its time');
      const agentDb = t.agent.core.agentDb;
      assert.equal(count(agentDb, "SELECT count(*) AS n FROM inbox WHERE body_kept = 1 AND state = 'applied'"), 1, 'only the recent applied body is kept');
      assert.equal(count(t.agent.core.tillDb, "SELECT count(*) AS n FROM price_ranges WHERE date_to = '2024-12-31'"), 0, 'the ended ranges are gone');
      assert.equal(count(t.agent.core.tillDb, "SELECT count(*) AS n FROM price_ranges WHERE date_to = '2025-06-02'"), 1, 'one inside the retention is kept');
    } finally {
      await service.stop();
    }
  });
});

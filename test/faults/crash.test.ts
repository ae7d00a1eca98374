import fs from 'node:fs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generateChains, planDeliveries, Prng, referenceFor, runDeliveries } from '../../src/dev/publisher';
import { tempDir } from '../helpers/fixtures';
import { checkEndState, pendingUpdates, reachedExpected } from './helpers';
import { freePort, sleep, spawnAgent, waitFor, writeConfig, type ChildAgent } from '../../src/dev/child-agent';

/**
 * SIGKILL the agent at random instants while head office's simulator delivers reordered and
 * duplicated chains for several locations, restart it, repeat. Nothing the agent answered 200 for may
 * be lost, nothing may be applied twice or half, and the till's views must end equal to the reference
 * model. The seed is printed; FAULT_SEED=<n> replays a run, FAULT_KILLS=<n> changes the kill count.
 */
const SEED = Number(process.env.FAULT_SEED ?? 20261201);
const KILLS = Number(process.env.FAULT_KILLS ?? 32);
// `npm run soak -- --kills N` runs this at scale: more updates so deliveries last as long as the kills.
const UPDATES_PER_LOCATION = Math.max(45, Math.ceil(KILLS * 1.5));

describe('crash safety under SIGKILL', () => {
  it(`survives ${KILLS} SIGKILLs at random instants without losing or double-applying an update (seed ${SEED})`, { timeout: Math.max(240_000, KILLS * 4_000) }, async () => {
    const rng = new Prng(SEED);
    const chains = generateChains({
      seed: SEED,
      locations: 4,
      updatesPerLocation: UPDATES_PER_LOCATION,
      itemsPerLocation: 250,
      tariffs: 3,
      mealPeriods: 3,
      rangesPerKey: 4,
      startDate: '2026-12-01',
      days: 90,
      editItems: [1, 6],
      currencies: ['GBP', 'EUR', 'JPY', 'KWD'],
    });
    const expected = referenceFor(chains).state();
    // Paced so that the deliveries span the whole kill schedule.
    const plan = planDeliveries(chains, { reorderWindow: 5, duplicate: 0.25, delayMs: [20, 260] }, rng.fork(1));

    const dataDir = tempDir('pos-sync-crash-');
    const port = await freePort();
    const config = writeConfig(dataDir, {
      dataDir,
      webhook: { host: '127.0.0.1', port, expectedOrigin: 'menus.example.com', bearerToken: 'crash-test-token-1234' },
      admin: { enabled: false },
      sync: { pollIntervalMs: 200, baselineSettleSeconds: 0 },
    });

    let agent: ChildAgent = await spawnAgent(config);
    let running = true;
    const run = runDeliveries(
      { url: agent.url, origin: 'menus.example.com', token: 'crash-test-token-1234', timeoutMs: 20_000 },
      plan,
      { retry: { baseDelayMs: 25, maxDelayMs: 400, factor: 2, deadlineMs: Math.max(120_000, KILLS * 3_000) }, concurrency: 4, seed: SEED },
    ).finally(() => {
      running = false;
    });

    let killsDuringDelivery = 0;
    let killsWithPendingWork = 0;
    try {
      for (let k = 0; k < KILLS; k++) {
        await sleep(rng.int(30, 450));
        if (running) killsDuringDelivery++;
        await agent.kill();
        // Work the dead agent left: the restart must finish it (applied exactly once).
        if (pendingUpdates(dataDir) > 0) killsWithPendingWork++;
        agent = await spawnAgent(config);
      }
      const report = await run;
      assert.equal(report.failed.length, 0, `deliveries that never got a 200: ${report.failed.map((f) => `${f.delivery.update.locationId}/${f.delivery.update.changeSequence}: ${f.outcome.lastError}`).join(', ')}`);
      await waitFor('the applier to reach the end of every chain', () => reachedExpected(dataDir, expected), 30_000, 100);
      const exitCode = await agent.stop();
      assert.equal(exitCode, 0, `agent did not stop cleanly: ${agent.stderr()}`);

      const end = checkEndState(dataDir, expected, report.acked);
      process.stdout.write(
        `# crash suite seed ${SEED}: ${KILLS} kills (${killsDuringDelivery} during delivery, ${killsWithPendingWork} leaving unapplied updates), ${report.acked.length} deliveries acked, ` +
          `statuses ${JSON.stringify(report.statusCounts)}, inbox ${JSON.stringify(end.inboxStates)}\n`,
      );
      assert.ok(killsDuringDelivery >= KILLS * 0.6, `only ${killsDuringDelivery} of ${KILLS} kills landed while deliveries were in flight; the test lost its teeth`);
      assert.ok(killsWithPendingWork > 0, 'no kill ever left stored-but-unapplied updates behind');
      assert.ok((report.statusCounts.none ?? 0) > 0, 'no delivery ever found the agent down: the kills missed');
      assert.equal(end.integrity, 'ok');
      assert.deepEqual(end.missingAcks, [], 'updates answered 200 but not in the inbox');
      assert.equal(end.duplicateInboxRows, 0, 'an update stored twice');
      assert.deepEqual(Object.keys(end.inboxStates), ['applied'], `every stored update applied, none stale/pending/conflict: ${JSON.stringify(end.inboxStates)}`);
      assert.deepEqual(end.differences, [], 'POS views differ from the reference model');
      // `npm run soak` records what a passing run did (scripts/soak.ts).
      if (process.env.FAULT_SUMMARY_FILE) {
        const updates = chains.reduce((n, c) => n + c.updates.length, 0);
        fs.writeFileSync(
          process.env.FAULT_SUMMARY_FILE,
          JSON.stringify({ seed: SEED, kills: KILLS, killsDuringDelivery, killsWithPendingWork, updates, deliveriesAcked: report.acked.length, statusCounts: report.statusCounts, inboxStates: end.inboxStates }),
        );
      }
    } finally {
      if (agent.process.exitCode === null && agent.process.signalCode === null) await agent.kill();
    }
  });
});

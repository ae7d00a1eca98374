import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { sleep, spawnAgent, waitFor, writeConfig, type ChildAgent } from '../../src/dev/child-agent';
import { bodyFilesDir } from '../../src/store/body-files';
import { openReadOnly, storeFilePath } from '../../src/store/database';
import { tempDir } from '../helpers/fixtures';

/**
 * The applier thread ends in the middle of an apply (as one out of memory does: here the test hook
 * POS_SYNC_TEST_THREAD_EXIT_AT ends it at the 50th range row, in every new thread). That update is
 * recorded as failed and waits out the doubling retry delay, and the locations after it are applied
 * meanwhile. Before, each new thread met the same update first and ended the same way, a few times a
 * second, and no location after it was ever applied.
 */

const update = (location: number, items: number): string =>
  JSON.stringify({
    ChangeSequence: 1,
    ParentChangeSequence: 0,
    LocationID: location,
    LocationName: `L${location}`,
    CurrencyIsoCode: 'GBP',
    ScheduledItems: Array.from({ length: items }, (_, i) => ({
      ItemID: `I${i}`,
      PLU: String(1000 + i),
      ItemName: `Item ${i}`,
      ItemType: 'MENU',
      PriceUpdates: [{ DateFrom: '2026-01-01', DateTo: '2026-12-31', TariffName: 'Eat In', PriceModel: 'Standard', TaxCode: 'S', TaxRate: 20, SellPrice: 1.5 }],
      ScheduleUpdates: [],
    })),
  });

/** The built agent in a new data folder, each new thread of its ending at `point` (POS_SYNC_TEST_THREAD_EXIT_AT). */
async function agentEndingAThreadAt(prefix: string, point: string): Promise<{ dataDir: string; agent: ChildAgent }> {
  const dataDir = path.join(tempDir(prefix), 'data');
  const config = writeConfig(path.dirname(dataDir), { dataDir, webhook: { port: 0 }, admin: { enabled: false }, sync: { pollIntervalMs: 100, baselineSettleSeconds: 0 } });
  return { dataDir, agent: await spawnAgent(config, { built: true, env: { POS_SYNC_TEST_THREAD_EXIT_AT: point, CHILD_AGENT_LOG: '1' } }) };
}

describe('the applier thread ending in the middle of an apply', () => {
  it('fails that update with a doubling delay and applies the other locations meanwhile', { timeout: 120_000 }, async () => {
    const { dataDir, agent } = await agentEndingAThreadAt('applier-exit-', 'apply-row:50');
    try {
      const post = async (body: string): Promise<number> => (await fetch(agent.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).status;
      // Location 1 (applied first, by location) writes 60 rows; location 5, 3.
      assert.equal(await post(update(1, 60)), 200);
      assert.equal(await post(update(5, 3)), 200);
      const till = (): number | null => {
        const db = openReadOnly(storeFilePath(dataDir, 'till'));
        try {
          return (db.prepare('SELECT last_change_sequence AS s FROM locations WHERE location_id = 5').get() as { s: number | null } | undefined)?.s ?? null;
        } finally {
          db.close();
        }
      };
      await waitFor('location 5 applied while location 1 keeps failing', () => fs.existsSync(storeFilePath(dataDir, 'till')) && till() === 1, 20_000, 100);
      const started = Date.now();
      await sleep(6_000);
      const stops = agent.stderr().split('\n').filter((l) => l.startsWith('[error] applier thread stopped')).length;
      // Tries at the first delivery, then 2 s and 4 s later (retryAfterFailureMs): a few in all, not one every poll.
      assert.ok(stops >= 2 && stops <= 5, `${stops} thread stops in ${((Date.now() - started) / 1000).toFixed(0)} s and before:\n${agent.stderr().slice(-3000)}`);
      assert.match(agent.stderr(), /applying update #\d+ for location 1 failed; will retry: the applier thread stopped while applying it \(exit code 1\)/);
      assert.doesNotMatch(agent.stderr(), /applier: the applier thread stopped/, 'one line for each end, not two');
      const agentDb = openReadOnly(storeFilePath(dataDir, 'agent'));
      try {
        const row = agentDb.prepare('SELECT state, note FROM inbox WHERE location_id = 1').get() as { state: string; note: string | null };
        assert.equal(row.state, 'pending');
        assert.match(row.note ?? '', /^apply failed: the applier thread stopped while applying it/);
      } finally {
        agentDb.close();
      }
    } finally {
      await agent.kill();
    }
  });
});

describe('the webhook thread ending in the middle of a receipt', () => {
  it('leaves no body file behind: the new thread starts after the old one\'s are swept', { timeout: 120_000 }, async () => {
    // The first large body's file is written, then the thread ends (before syncing it, before its row).
    const { dataDir, agent } = await agentEndingAThreadAt('receiver-exit-', 'body-file-written:1');
    try {
      const large = update(3, 12_000);
      assert.ok(Buffer.byteLength(large) > 1024 * 1024, 'a body the receiver writes to a file of its own');
      const answered = await fetch(agent.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: large }).then(
        (r) => r.status,
        () => null,
      );
      assert.equal(answered, null, 'the sender got no answer (it sends again)');
      await waitFor('the webhook thread listening again', () => agent.stderr().includes('webhook receiver listening again'), 20_000, 50);
      assert.match(agent.stderr(), /removed 1 body file that no update names/);
      assert.deepEqual(fs.readdirSync(bodyFilesDir(dataDir)), []);
      // The new thread answers.
      assert.equal((await fetch(agent.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: update(4, 2) })).status, 200);
    } finally {
      await agent.kill();
    }
  });
});

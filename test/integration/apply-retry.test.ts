import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Inbox } from '../../src/store/inbox';
import { closeStore, openStore } from '../../src/store/store';
import { waitFor } from '../../src/dev/child-agent';
import { Applier, RETRY_AFTER_FAILURE_MS, retryAfterFailureMs, type LocationFailure } from '../../src/sync/applier';
import { buildStatusReply } from '../../src/admin/status-reply';
import { silentLogger } from '../../src/log';
import { startTestAgent } from '../helpers/agent';
import { item as fixtureItem, price, tempDir, update } from '../helpers/fixtures';

/**
 * An update whose apply keeps failing (here a trigger in the till file refuses its rows, as a full
 * disk or a till holding the file would) is tried again after a delay that doubles, not at every
 * drain: whatever else cues a drain meanwhile (another location's delivery, the poll), the failing
 * one waits, the others are applied, and once the cause is gone it is applied at its next try.
 */
const item = (id: string) => ({
  ItemID: id,
  PLU: id,
  ItemName: `Item ${id}`,
  ItemType: 'MENU',
  PriceUpdates: [{ DateFrom: '2026-01-01', DateTo: '2026-12-31', TariffName: 'Eat In', PriceModel: 'Standard', TaxCode: 'S', TaxRate: 20, SellPrice: 1.5 }],
  ScheduleUpdates: [],
});

describe('an update that fails to apply', () => {
  it('waits a doubling delay between tries, while other locations are applied', () => {
    const store = openStore(tempDir('apply-retry-'));
    try {
      const inbox = new Inbox(store.agent);
      const failures: number[] = [];
      const applier = new Applier(store.till, store.agent, 'auto', { failed: (location) => failures.push(location) });
      const deliver = (location: number, id: string): void => {
        const body = { ChangeSequence: 1, ParentChangeSequence: 0, LocationID: location, LocationName: `L${location}`, CurrencyIsoCode: 'GBP', ScheduledItems: [item(id)] };
        assert.equal(inbox.receive({ raw: Buffer.from(JSON.stringify(body)), sender: 'test', source: 'webhook', contentType: 'application/json', receivedAt: new Date() }).kind, 'stored');
      };
      // Location 1's rows are refused by the till file until the trigger goes.
      store.till.exec(`CREATE TRIGGER refuse_location_1 BEFORE INSERT ON price_ranges WHEN NEW.location_id = 1
        BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`);
      deliver(1, 'A');
      const before = Date.now();
      assert.deepEqual(applier.drain(), []);
      assert.deepEqual(failures, [1]);
      const first = applier.lastFailure.get(1)!;
      assert.equal(first.failures, 1);
      assert.match(first.message, /refused by the test/);
      assert.ok(first.retryAt >= before + RETRY_AFTER_FAILURE_MS.first && first.retryAt <= Date.now() + RETRY_AFTER_FAILURE_MS.first, `retryAt ${first.retryAt}`);
      assert.equal(applier.wakeAt, first.retryAt, 'the poll wakes the applier when the delay is over');

      // Another location's delivery cues a drain: it is applied, location 1 is not tried again yet.
      deliver(2, 'B');
      assert.deepEqual(applier.drain().map((a) => a.locationId), [2]);
      assert.deepEqual(failures, [1], 'not tried again before its delay');
      assert.equal(applier.lastFailure.get(1)!.failures, 1);
      assert.equal(applier.wakeAt, first.retryAt);

      // Its delay over (moved into the past here rather than waited for), it is tried again, fails
      // again, and waits twice as long.
      applier.lastFailure.set(1, { ...first, retryAt: Date.now() - 1 });
      const again = Date.now();
      applier.drain();
      assert.deepEqual(failures, [1, 1]);
      const second = applier.lastFailure.get(1)!;
      assert.equal(second.failures, 2);
      assert.ok(second.retryAt >= again + 2 * RETRY_AFTER_FAILURE_MS.first, `retryAt ${second.retryAt}`);

      // The cause gone, its next try applies it and the failure is forgotten.
      store.till.exec('DROP TRIGGER refuse_location_1');
      applier.lastFailure.set(1, { ...second, retryAt: Date.now() - 1 });
      assert.deepEqual(applier.drain().map((a) => a.locationId), [1]);
      assert.equal(applier.lastFailure.get(1), undefined);
      assert.equal(applier.wakeAt, null, 'nothing left to do');
    } finally {
      closeStore(store);
    }
  });

  it('doubles from the first delay to the longest, and stays there', () => {
    const delays = Array.from({ length: 40 }, (_, i) => retryAfterFailureMs(i + 1));
    assert.equal(delays[0], RETRY_AFTER_FAILURE_MS.first);
    for (let i = 1; i < delays.length; i++) {
      assert.equal(delays[i], Math.min(RETRY_AFTER_FAILURE_MS.longest, 2 * delays[i - 1]!), `failure ${i + 1}`);
    }
    assert.equal(delays.at(-1), RETRY_AFTER_FAILURE_MS.longest);
    assert.equal(retryAfterFailureMs(Number.MAX_SAFE_INTEGER), RETRY_AFTER_FAILURE_MS.longest);
  });

  it('keeps its delay and count when the applier thread rests between tries', { timeout: 60_000 }, async () => {
    const t = await startTestAgent({ sync: { pollIntervalMs: 100, baselineSettleSeconds: 0 } }, { applierRestAfterMs: 200 });
    const { agent } = t;
    // What the main thread holds between threads (ApplierHost's record of the last reply).
    const failures = (): LocationFailure[] => (agent.applier as unknown as { failures: LocationFailure[] }).failures;
    agent.core.tillDb.exec(`CREATE TRIGGER refuse_location_7 BEFORE INSERT ON price_ranges WHEN NEW.location_id = 7
      BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`);
    assert.equal((await t.post(update(7, 1, 0, [fixtureItem('1', 'A', [price('2026-12-01', '9999-12-31', 'Eat In', '4.50')])]))).status, 200);
    const seen: { failures: number; at: number; retryAt: number }[] = [];
    for (const count of [1, 2, 3]) {
      await waitFor(`failure ${count}`, () => failures().some((r) => r.locationId === 7 && r.failures === count), 30_000, 10);
      const f = failures().find((r) => r.locationId === 7)!;
      seen.push({ failures: f.failures, at: Date.parse(f.at), retryAt: f.retryAt });
      // Between two tries the thread rests, and the next one starts afresh from what the main thread kept.
      await waitFor('the applier thread to rest', () => !agent.applier.awake, 30_000, 10);
    }
    for (let i = 1; i < seen.length; i++) {
      assert.ok(seen[i]!.at >= seen[i - 1]!.retryAt, `try ${i + 1} at ${seen[i]!.at}, not before ${seen[i - 1]!.retryAt}`);
      assert.equal(seen[i]!.retryAt - seen[i]!.at, retryAfterFailureMs(i + 1));
    }
    // The status reply (window, tray) says when the next try is (severity.ts words it).
    const waiting = buildStatusReply(agent, [], silentLogger).locations.find((l) => l.locationId === 7)!.waiting[0]!;
    assert.equal(waiting.retryAt, new Date(failures().find((r) => r.locationId === 7)!.retryAt).toISOString());
    // The cause gone, the next try applies it.
    agent.core.tillDb.exec('DROP TRIGGER refuse_location_7');
    await waitFor('the update applied', () => (agent.core.tillDb.prepare('SELECT last_change_sequence AS s FROM locations WHERE location_id = 7').get() as { s: number | null } | undefined)?.s === 1, 30_000, 20);
    await waitFor('the failure forgotten', () => failures().length === 0, 30_000, 20);
  });
});

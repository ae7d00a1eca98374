import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkSetConsistency } from '../../../src/ops/backup/consistency';
import { Inbox } from '../../../src/store/inbox';
import { closeStore, openStore } from '../../../src/store/store';
import { Applier } from '../../../src/sync/applier';
import { tempDir } from '../../helpers/fixtures';

/** The check every backup set and restore runs (ops/backup/consistency.ts), on real files. */
describe('whether a till file and an agent.db make a set', () => {
  it('tells a lost apply from a till record retention pruned', () => {
    const store = openStore(tempDir('pos-sync-consistency-'));
    try {
      const inbox = new Inbox(store.agent);
      const applier = new Applier(store.till, store.agent, 'auto');
      const ids: number[] = [];
      for (const [change, parent] of [[1, 0], [2, 1], [3, 2]] as const) {
        const body = { ChangeSequence: change, ParentChangeSequence: parent, LocationID: 7, LocationName: 'Seven', CurrencyIsoCode: 'GBP', ScheduledItems: [] };
        const outcome = inbox.receive({ raw: Buffer.from(JSON.stringify(body)), sender: 'test', source: 'import', contentType: 'application/json', receivedAt: new Date() });
        assert.equal(outcome.kind, 'stored');
        if (outcome.kind === 'stored') ids.push(outcome.inboxId);
        applier.drain();
      }
      const check = (): string[] => checkSetConsistency(store.till.name, store.agent.name).problems;
      assert.deepEqual(check(), []);
      // Retention pruned the till's record of update 1 while agent.db keeps its row: still a set.
      store.till.prepare('DELETE FROM applied_updates WHERE inbox_id = ?').run(ids[0]);
      assert.deepEqual(check(), []);
      // The till never got the latest update agent.db calls applied: not a set.
      store.till.prepare('DELETE FROM applied_updates WHERE inbox_id = ?').run(ids[2]);
      store.till.prepare('UPDATE locations SET last_change_sequence = 2 WHERE location_id = 7').run();
      assert.deepEqual(check(), [`agent.db calls update #${ids[2]} (location 7, ChangeSequence 3) applied; pos-sync.db does not have it`]);
      // And a till record agent.db does not hold is never one.
      store.agent.prepare('DELETE FROM inbox WHERE id = ?').run(ids[2]);
      store.till.prepare("INSERT INTO applied_updates (inbox_id, location_id, change_sequence, applied_at, apply_ms, baseline, forced, rows_written) VALUES (?, 7, 3, '2026-11-26T00:00:00Z', 1, 0, 0, 0)").run(ids[2]);
      assert.match(check().join('\n'), new RegExp(`pos-sync.db has update #${ids[2]} \\(location 7, ChangeSequence 3\\) applied, which agent.db does not hold`));
    } finally {
      closeStore(store);
    }
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AgentCore } from '../../src/core';
import { silentLogger } from '../../src/log';
import { item, price, schedule, testConfig, update } from '../helpers/fixtures';

/**
 * A crash between the two commits of an apply (pos-sync.db committed, agent.db not) leaves the update
 * 'pending' in agent.db with no warnings recorded. The next drain's reconcile completes agent.db from
 * the stored body: it must record the same warnings the apply would have, element warnings included
 * (they are found only while the items are planned).
 */
describe('reconcile after a crash between the two commits', () => {
  it('records the same warnings, item elements included, as the apply it completes', () => {
    const core = new AgentCore(testConfig(), silentLogger);
    try {
      const body = update(41, 1, 0, [
        item('100', 'A', [price('2026-12-01', '2026-12-31', 'Eat In', '2.50'), price('2026-12-01', '2026-12-31', 'Take Away', 'not a price')]),
        item('101', 'B', [price('2026-12-31', '2026-12-01', 'Eat In', '3.00')], [schedule('2026-12-01', '2026-12-31', 'Lunch'), { DateFrom: '2026-12-01', DateTo: '2026-12-31', Status: 'MAYBE', MealPeriodName: 'Dinner' }]),
      ]);
      const { applied } = core.importPayload(Buffer.from(JSON.stringify(body)), 'test');
      assert.equal(applied.length, 1);
      const warningsOf = (): { path: string; message: string }[] =>
        core.agentDb.prepare<[], { path: string; message: string }>('SELECT path, message FROM update_warnings ORDER BY id').all();
      const original = warningsOf();
      assert.ok(original.length >= 3, `expected element warnings, got ${JSON.stringify(original)}`);
      assert.ok(original.some((w) => w.path.startsWith('ScheduledItems[')), 'element warnings are among them');

      // The state a crash between the commits leaves: agent.db's half undone, the till file's kept.
      const inboxId = applied[0]!.inboxId;
      core.agentDb.prepare("UPDATE inbox SET state = 'pending', applied_at = NULL, apply_ms = NULL WHERE id = ?").run(inboxId);
      core.agentDb.prepare('DELETE FROM update_warnings WHERE inbox_id = ?').run(inboxId);

      assert.equal(core.applier!.reconcile(), 1);
      assert.deepEqual(warningsOf(), original);
      assert.equal(core.agentDb.prepare<[number], { state: string }>('SELECT state FROM inbox WHERE id = ?').get(inboxId)?.state, 'applied');
    } finally {
      core.close();
    }
  });
});

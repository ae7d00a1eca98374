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

  it("a running applier checks each location's latest apply; the first reconcile after a start checks every pending row", () => {
    const config = testConfig();
    const stateOf = (core: AgentCore, id: number): string | undefined => core.agentDb.prepare<[number], { state: string }>('SELECT state FROM inbox WHERE id = ?').get(id)?.state;
    const undoAgentHalf = (core: AgentCore, id: number): void => void core.agentDb.prepare("UPDATE inbox SET state = 'pending', applied_at = NULL, apply_ms = NULL WHERE id = ?").run(id);
    const body = (location: number, seq: number): Buffer => Buffer.from(JSON.stringify(update(location, seq, seq - 1, [item('1', 'A', [price('2026-12-01', '2026-12-31', 'Eat In', `${seq}.00`)])])));
    let core = new AgentCore(config, silentLogger);
    try {
      const first = core.importPayload(body(51, 1), 'test').applied[0]!;
      const second = core.importPayload(body(51, 2), 'test').applied[0]!;
      const other = core.importPayload(body(52, 7), 'test').applied[0]!;
      // A stop between the commits of location 51's latest apply: the next drain finishes it as
      // applied (it is not newer than the applied sequence, so without reconcile it would be marked stale).
      undoAgentHalf(core, second.inboxId);
      core.drain();
      assert.equal(stateOf(core, second.inboxId), 'applied');
      assert.equal(stateOf(core, other.inboxId), 'applied');
      // The same check compares the inbox's own row with the till's record: a pending row that only
      // shares the id of location 52's latest apply (another update) is left alone.
      core.agentDb.prepare("UPDATE inbox SET state = 'pending', change_sequence = 70 WHERE id = ?").run(other.inboxId);
      assert.equal(core.applier!.reconcile(), 0);
      assert.equal(stateOf(core, other.inboxId), 'pending');
      core.agentDb.prepare("UPDATE inbox SET state = 'applied', change_sequence = 7 WHERE id = ?").run(other.inboxId);

      // A state no stop of this applier can leave (an older apply undone, as a restored agent.db
      // could hold): the running applier's check of the latest applies leaves it ...
      undoAgentHalf(core, first.inboxId);
      assert.equal(core.applier!.reconcile(), 0);
      core.close();
      // ... and the first reconcile after a start finds it among every pending row.
      core = new AgentCore(config, silentLogger);
      core.drain();
      assert.equal(stateOf(core, first.inboxId), 'applied');
      assert.equal((core.agentDb.prepare("SELECT count(*) AS n FROM inbox WHERE state <> 'applied'").get() as { n: number }).n, 0);
    } finally {
      core.close();
    }
  });
});

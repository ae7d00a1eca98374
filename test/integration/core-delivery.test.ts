import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestAgent, type RunningTestAgent } from '../helpers/agent';
import { item, price, schedule, update } from '../helpers/fixtures';

function eatInPrices(t: RunningTestAgent, plu = '1'): unknown[] {
  return t.agent.core.tillDb
    .prepare("SELECT date_from, date_to, sell_price FROM pos_prices WHERE plu = ? AND tariff_name = 'Eat In' ORDER BY location_id, date_from")
    .all(plu);
}

function inboxStates(t: RunningTestAgent): unknown[] {
  return t.agent.core.agentDb.prepare('SELECT change_sequence, state FROM inbox ORDER BY id').all();
}

const u1 = update(10, 101, 100, [item('1', 'A', [price('2026-12-01', '2026-12-31', 'Eat In', 5)])]);
const u2 = update(10, 102, 101, [item('1', 'A', [price('2026-12-10', '2026-12-10', 'Eat In', 6)])]);
const u3 = update(10, 103, 102, [item('1', 'A', [price('2026-12-20', '2026-12-31', 'Eat In', 7)])]);

describe('delivery semantics', () => {
  it('acknowledges a redelivery with 200 and never applies it twice', async () => {
    const t = await startTestAgent();
    assert.equal((await t.post(u1)).status, 200);
    await t.settle();
    const again = await t.post(u1);
    assert.equal(again.status, 200);
    assert.deepEqual(again.json, { status: 'duplicate', inboxId: 1 });
    // Same JSON, different bytes (pretty-printed, keys reordered): still the same update.
    const reordered = JSON.stringify({ ScheduledItems: u1.ScheduledItems, ...u1 }, null, 2);
    assert.deepEqual((await t.post(reordered)).json, { status: 'duplicate', inboxId: 1 });
    await t.settle();
    assert.deepEqual(inboxStates(t), [{ change_sequence: 101, state: 'applied' }]);
    const outcomes = t.agent.core.agentDb.prepare('SELECT outcome FROM deliveries ORDER BY id').all();
    assert.deepEqual(outcomes, [{ outcome: 'accepted' }, { outcome: 'duplicate' }, { outcome: 'duplicate' }]);
    assert.equal(t.agent.core.deliveries().filter((d) => d.result === 'duplicate').length, 2);
  });

  it('keeps and flags a different body under a ChangeSequence already used, without applying it', async () => {
    const t = await startTestAgent();
    await t.post(u1);
    await t.settle();
    const other = update(10, 101, 100, [item('1', 'A', [price('2026-12-01', '2026-12-31', 'Eat In', 99)])]);
    const res = await t.post(other);
    assert.equal(res.status, 200);
    assert.equal((res.json as { status: string }).status, 'conflict');
    await t.settle();
    assert.deepEqual(eatInPrices(t), [{ date_from: '2026-12-01', date_to: '2026-12-31', sell_price: '5.00' }]);
    assert.equal(t.agent.core.status()[0]!.conflicts, 1);
    assert.equal(t.agent.core.deliveries()[0]!.result, 'conflict');
    // The till is told something sent is held back: head office's correction waits for an operator.
    assert.deepEqual(t.agent.core.tillDb.prepare('SELECT last_change_sequence, waiting_updates FROM pos_sync_state').get(), { last_change_sequence: 101, waiting_updates: 1 });
  });

  it('holds updates across a gap, shows what they wait for, and applies the chain when the gap fills', async () => {
    const t = await startTestAgent();
    await t.post(u1);
    await t.settle();
    await t.post(u3);
    await t.settle();
    let status = t.agent.core.status()[0]!;
    assert.equal(status.lastChangeSequence, 101);
    assert.deepEqual(status.waiting.map((w) => [w.changeSequence, w.reason, w.waitingFor]), [[103, 'waiting', 102]]);
    assert.deepEqual(
      t.agent.core.tillDb.prepare('SELECT last_change_sequence, waiting_updates FROM pos_sync_state').get(),
      { last_change_sequence: 101, waiting_updates: 1 },
    );
    await t.post(u2);
    await t.settle();
    status = t.agent.core.status()[0]!;
    assert.equal(status.lastChangeSequence, 103);
    assert.deepEqual(status.waiting, []);
    assert.deepEqual(eatInPrices(t), [
      { date_from: '2026-12-01', date_to: '2026-12-09', sell_price: '5.00' },
      { date_from: '2026-12-10', date_to: '2026-12-10', sell_price: '6.00' },
      { date_from: '2026-12-11', date_to: '2026-12-19', sell_price: '5.00' },
      { date_from: '2026-12-20', date_to: '2026-12-31', sell_price: '7.00' },
    ]);
  });

  it('gives the same end state for every order of delivery', async () => {
    const orders = [[u1, u2, u3], [u1, u3, u2], [u2, u1, u3], [u3, u2, u1], [u2, u3, u1], [u3, u1, u2]];
    const results: unknown[] = [];
    for (const order of orders) {
      // Baseline is the lowest pending ChangeSequence when the applier runs: deliver all, then apply.
      const t = await startTestAgent();
      t.agent.setPaused(true);
      for (const body of order) assert.equal((await t.post(body)).status, 200);
      t.agent.setPaused(false);
      await t.settle();
      results.push(eatInPrices(t));
      assert.equal(t.agent.core.status()[0]!.lastChangeSequence, 103);
    }
    for (const r of results) assert.deepEqual(r, results[0]);
  });

  it('adopts the first update of a new location as its baseline', async () => {
    const t = await startTestAgent();
    await t.post(u2); // its parent 101 was never seen here
    await t.settle();
    assert.equal(t.agent.core.status()[0]!.lastChangeSequence, 102);
    assert.deepEqual(t.agent.core.agentDb.prepare('SELECT change_sequence, baseline FROM inbox').all(), [{ change_sequence: 102, baseline: 1 }]);
    // An older update arriving later is stale: it would roll the till back.
    await t.post(u1);
    await t.settle();
    assert.deepEqual(inboxStates(t), [
      { change_sequence: 102, state: 'applied' },
      { change_sequence: 101, state: 'stale' },
    ]);
    assert.equal(t.agent.core.deliveries()[0]!.result, 'stale');
  });

  it('with baseline "operator", waits for force-apply before adopting a location', async () => {
    const t = await startTestAgent({ sync: { baseline: 'operator' } });
    await t.post(u1);
    await t.post(u2);
    await t.settle();
    let status = t.agent.core.status()[0]!;
    assert.equal(status.lastChangeSequence, null);
    assert.deepEqual(status.waiting.map((w) => w.reason), ['needs-adoption', 'needs-adoption']);
    const result = await t.agent.forceApply(status.waiting[0]!.inboxId, 'tester', 'adopting the first publication');
    assert.equal(result.forced.baseline, true);
    assert.deepEqual(result.then.map((a) => a.changeSequence), [102]);
    status = t.agent.core.status()[0]!;
    assert.equal(status.lastChangeSequence, 102);
  });

  it('force-applies a waiting update across a gap, audits it, and skips what it supersedes', async () => {
    const t = await startTestAgent();
    await t.post(u1);
    await t.post(u3);
    await t.settle();
    const waiting = t.agent.core.status()[0]!.waiting[0]!;
    const { forced } = await t.agent.forceApply(waiting.inboxId, 'manager@pc', 'support confirmed 102 is lost');
    assert.equal(forced.changeSequence, 103);
    assert.equal(forced.forced, true);
    const audit = t.agent.core.agentDb.prepare('SELECT actor, action, details FROM audit_log').all() as { actor: string; action: string; details: string }[];
    assert.equal(audit.length, 1);
    assert.equal(audit[0]!.actor, 'manager@pc');
    assert.equal(audit[0]!.action, 'force-apply');
    assert.deepEqual(JSON.parse(audit[0]!.details), { inboxId: waiting.inboxId, locationId: 10, changeSequence: 103, parentChangeSequence: 102, previouslyApplied: 101, reason: 'support confirmed 102 is lost' });
    // The missing update arriving afterwards is stale, not applied over newer data.
    await t.post(u2);
    await t.settle();
    assert.deepEqual(inboxStates(t).at(-1), { change_sequence: 102, state: 'stale' });
    await assert.rejects(t.agent.forceApply(waiting.inboxId, 'x', 'again'), /only a waiting update/);
    await assert.rejects(t.agent.forceApply(999, 'x', 'none'), /no stored update #999/);
  });

  it('keeps locations apart: each has its own chain', async () => {
    const t = await startTestAgent();
    const other = (seq: number, parent: number, sell: number) => update(20, seq, parent, [item('1', 'B', [price('2026-12-01', '2026-12-31', 'Eat In', sell)])]);
    await t.post(u1);
    await t.post(other(7, 6, 1));
    await t.post(other(9, 8, 3)); // waits at location 20 only
    await t.post(u2);
    await t.settle();
    const status = t.agent.core.status();
    assert.deepEqual(status.map((s) => [s.locationId, s.lastChangeSequence, s.waiting.length]), [[10, 102, 0], [20, 7, 1]]);
    assert.deepEqual(t.agent.core.lookup('1', { locationId: 20, date: '2026-12-05' }).items[0]!.prices.map((p) => p.sellPrice), ['1.00']);
  });

  it('records skipped elements as warnings shown by status until acknowledged', async () => {
    const t = await startTestAgent();
    await t.post(update(10, 101, 100, [item('1', 'A', [price('2026-12-01', '2026-12-31', 'Eat In', 5), price('2026-12-31', '2026-12-01', 'Eat In', 5)], [schedule('2026-12-01', '2026-12-31', 'Lunch', 'SOLD_OUT' as 'AVAILABLE')])]));
    await t.settle();
    let status = t.agent.core.status()[0]!;
    assert.equal(status.lastChangeSequence, 101);
    assert.equal(status.warnings, 2);
    assert.deepEqual(status.recentWarnings.map((w) => w.path).sort(), ['ScheduledItems[0].PriceUpdates[1]', 'ScheduledItems[0].ScheduleUpdates[0].Status']);
    assert.equal((t.agent.core.tillDb.prepare('SELECT warnings FROM pos_sync_state').get() as { warnings: number }).warnings, 2);
    assert.equal(t.agent.core.acknowledgeWarnings('tester', 10), 2);
    status = t.agent.core.status()[0]!;
    assert.equal(status.warnings, 0);
  });

  it('keeps an item missing from a later update, and keeps both items sharing a PLU', async () => {
    const t = await startTestAgent();
    await t.post(update(10, 101, 100, [item('7', 'A', [price('2026-12-01', '2026-12-31', 'Eat In', 5)]), item('7', 'B', [price('2026-12-01', '2026-12-31', 'Eat In', 6)]), item('8', 'C', [price('2026-12-01', '2026-12-31', 'Eat In', 1)])]));
    await t.post(update(10, 102, 101, [item('8', 'C', [price('2026-12-05', '2026-12-05', 'Eat In', 2)])]));
    await t.settle();
    const answer = t.agent.core.lookup('7', { date: '2026-12-05' });
    assert.deepEqual(answer.items.map((i) => [i.itemId, i.prices[0]!.sellPrice]), [['A', '5.00'], ['B', '6.00']]);
    assert.equal(t.agent.core.lookup('8', { date: '2026-12-05' }).items[0]!.prices[0]!.sellPrice, '2.00');
  });

  it('turns an item unavailable for exactly the dates of the update and back again', async () => {
    const t = await startTestAgent();
    await t.post(update(10, 101, 100, [item('1', 'A', [], [schedule('2026-12-01', '2026-12-31', 'Dinner')])]));
    await t.post(update(10, 102, 101, [item('1', 'A', [], [schedule('2026-12-10', '2026-12-12', 'Dinner', 'UNAVAILABLE')])]));
    await t.post(update(10, 103, 102, [item('1', 'A', [], [schedule('2026-12-10', '2026-12-12', 'Dinner', 'AVAILABLE')])]));
    await t.settle();
    const rows = t.agent.core.tillDb.prepare('SELECT status, date_from, date_to FROM pos_availability ORDER BY date_from').all();
    // UNAVAILABLE back to AVAILABLE (not shown in the spec) is taken as the later data winning; ranges re-merge.
    assert.deepEqual(rows, [{ status: 'AVAILABLE', date_from: '2026-12-01', date_to: '2026-12-31' }]);
  });
});

describe('pausing', () => {
  it('stores and acknowledges while paused, applies nothing (not even imports) until resumed', async () => {
    const t = await startTestAgent();
    t.agent.setPaused(true);
    assert.equal((await t.post(u1)).status, 200);
    const imported = await t.agent.importPayload(Buffer.from(JSON.stringify(u2)), 'tester');
    assert.deepEqual(imported.applied, []);
    await t.settle();
    assert.equal(t.agent.core.status()[0]!.lastChangeSequence, null);
    t.agent.setPaused(false);
    await t.settle();
    assert.equal(t.agent.core.status()[0]!.lastChangeSequence, 102);
  });

  it('names a location from the config when the webhook sends no LocationName', async () => {
    const t = await startTestAgent({ locations: { '10': { name: 'Harbour Café' } } });
    await t.post({ ...u1, LocationName: undefined });
    await t.settle();
    assert.equal(t.agent.core.status()[0]!.locationName, 'Harbour Café');
  });
});

describe('baseline of a new location', () => {
  it('collects the first deliveries for baselineSettleSeconds, then adopts the lowest, so a retried first publication is not lost', async () => {
    const t = await startTestAgent({ sync: { baselineSettleSeconds: 1 } });
    // The sender's retry makes the first publication (101) arrive after the edit (102).
    await t.post(u2);
    await t.post(u1);
    await t.settle();
    const settling = t.agent.core.status()[0]!;
    assert.equal(settling.lastChangeSequence, null);
    assert.deepEqual(settling.waiting.map((w) => [w.changeSequence, w.reason]), [[101, 'settling'], [102, 'settling']]);
    await new Promise((r) => setTimeout(r, 1100));
    await t.settle();
    const done = t.agent.core.status()[0]!;
    assert.equal(done.lastChangeSequence, 102);
    assert.deepEqual(inboxStates(t), [
      { change_sequence: 102, state: 'applied' },
      { change_sequence: 101, state: 'applied' },
    ]);
    assert.deepEqual(eatInPrices(t), [
      { date_from: '2026-12-01', date_to: '2026-12-09', sell_price: '5.00' },
      { date_from: '2026-12-10', date_to: '2026-12-10', sell_price: '6.00' },
      { date_from: '2026-12-11', date_to: '2026-12-31', sell_price: '5.00' },
    ]);
  });

  it('applies an operator-imported first update at once, without settling', async () => {
    const t = await startTestAgent({ sync: { baselineSettleSeconds: 600 } });
    const { applied } = await t.agent.importPayload(Buffer.from(JSON.stringify(u1)), 'tester');
    assert.deepEqual(applied.map((a) => [a.changeSequence, a.baseline]), [[101, true]]);
  });
});

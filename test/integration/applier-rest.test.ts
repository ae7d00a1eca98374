import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Agent } from '../../src/agent';
import { AgentCore } from '../../src/core';
import { silentLogger } from '../../src/log';
import { waitFor } from '../../src/dev/child-agent';
import { startTestAgent } from '../helpers/agent';
import { item, price, update } from '../helpers/fixtures';

/**
 * The applier thread rests (ends) when it has had nothing to do for a while, so an idle agent does
 * not keep its memory, and starts again for the next piece of work: a delivery, or an update another
 * process stored (the poll notices agent.db changed).
 */

const body = (location: number, seq: number, sell: string): Record<string, unknown> =>
  update(location, seq, seq - 1, [item('1', 'A', [price('2026-12-01', '9999-12-31', 'Eat In', sell)])]);

/** The till's count of a location's waiting updates, refreshed by the applier thread after each drain. */
const tillWaiting = (agent: Agent, location: number): number | undefined =>
  (agent.core.tillDb.prepare('SELECT waiting_updates FROM locations WHERE location_id = ?').get(location) as { waiting_updates: number } | undefined)?.waiting_updates;

describe('the applier thread at rest', () => {
  it('rests when idle, stays resting while nothing changes, and wakes for a delivery or another process\'s import', { timeout: 60_000 }, async () => {
    const t = await startTestAgent({ sync: { pollIntervalMs: 100 } }, { applierRestAfterMs: 300 });
    const { agent } = t;
    const sellPrice = (location: number): string | undefined =>
      (agent.core.tillDb.prepare('SELECT sell_price FROM price_ranges WHERE location_id = ?').get(location) as { sell_price: string } | undefined)?.sell_price;

    await waitFor('the applier thread to rest after start', () => !agent.applier.awake, 20_000, 20);
    // Many polls later it still rests: a poll with nothing waiting does not start it.
    let woke = false;
    const watch = setInterval(() => (woke ||= agent.applier.awake), 5);
    await new Promise((r) => setTimeout(r, 1_500));
    clearInterval(watch);
    assert.equal(woke, false, 'the poll started the thread with nothing to do');
    assert.equal(await agent.applier.heapStatistics(), null, 'a resting thread has no heap');

    // A delivery wakes it and is applied (one element of it with a warning: a price that is not money).
    const first = body(10, 1, '4.50');
    (first.ScheduledItems as unknown[]).push(item('2', 'B', [price('2026-12-01', '9999-12-31', 'Eat In', 'four pounds')]));
    assert.equal((await t.post(first)).status, 200);
    await waitFor('the delivery to be applied', () => sellPrice(10) === '4.50', 20_000, 20);
    const tillWarnings = (): number => (agent.core.tillDb.prepare('SELECT warnings FROM locations WHERE location_id = 10').get() as { warnings: number }).warnings;
    // The till's counters follow the apply's commit (the applier refreshes them after each drain).
    await waitFor("the till's warning count", () => tillWarnings() === 1, 20_000, 20);
    await waitFor('the applier thread to rest again', () => !agent.applier.awake, 20_000, 20);

    // Another process acknowledges the warning: nothing to apply, but agent.db changed, so the poll
    // wakes the thread and the till's pos_sync_state shows the new count.
    const cli = new AgentCore(t.config, silentLogger, { applier: 'none' });
    try {
      assert.equal(cli.acknowledgeWarnings('cli', null), 1);
    } finally {
      cli.close();
    }
    await waitFor("the till's warning count to follow another process's acknowledgement", () => tillWarnings() === 0, 20_000, 20);
    await waitFor('the applier thread to rest after that', () => !agent.applier.awake, 20_000, 20);

    // Another process's import (its own connection to agent.db, no applier of its own): the poll
    // sees agent.db change and wakes the thread, which applies it.
    const other = new AgentCore(t.config, silentLogger, { applier: 'none' });
    try {
      other.storeImport(Buffer.from(JSON.stringify(body(10, 2, '4.75'))), 'another process');
    } finally {
      other.close();
    }
    await waitFor('the other process\'s import to be applied', () => sellPrice(10) === '4.75', 20_000, 20);
    await waitFor('the applier thread to rest once more', () => !agent.applier.awake, 20_000, 20);
  });

  it('rests through a chain gap, and wakes for the missing parent', { timeout: 60_000 }, async () => {
    const t = await startTestAgent({ sync: { pollIntervalMs: 100 } }, { applierRestAfterMs: 300 });
    const { agent } = t;
    const sellPrice = (): string | undefined => (agent.core.tillDb.prepare('SELECT sell_price FROM price_ranges WHERE location_id = 20').get() as { sell_price: string } | undefined)?.sell_price;
    const pending = (): number => (agent.core.agentDb.prepare("SELECT count(*) AS n FROM inbox WHERE state = 'pending'").get() as { n: number }).n;

    assert.equal((await t.post(body(20, 1, '1.00'))).status, 200);
    await waitFor('the baseline to be applied', () => sellPrice() === '1.00', 20_000, 20);
    // ChangeSequence 3 arrives before its parent 2: it waits (the till's count says the delivery's
    // drain has run), and the thread rests all the same.
    assert.equal((await t.post(body(20, 3, '3.00'))).status, 200);
    await waitFor("the delivery's drain", () => tillWaiting(agent, 20) === 1, 20_000, 20);
    await waitFor('the applier thread to rest with an update waiting', () => !agent.applier.awake, 20_000, 20);
    assert.equal(pending(), 1);
    let woke = false;
    const watch = setInterval(() => (woke ||= agent.applier.awake), 5);
    await new Promise((r) => setTimeout(r, 1_500));
    clearInterval(watch);
    assert.equal(woke, false, 'the poll started the thread for an update that waits for its parent');
    assert.equal(sellPrice(), '1.00');

    // The parent arrives: both are applied, in chain order.
    assert.equal((await t.post(body(20, 2, '2.00'))).status, 200);
    await waitFor('the chain to be applied', () => sellPrice() === '3.00', 20_000, 20);
    assert.equal(pending(), 0);
  });

  it("wakes by itself at a new location's baseline settle deadline", { timeout: 60_000 }, async () => {
    const t = await startTestAgent({ sync: { pollIntervalMs: 100, baselineSettleSeconds: 4 } }, { applierRestAfterMs: 300 });
    const { agent } = t;
    const sellPrice = (): string | undefined => (agent.core.tillDb.prepare('SELECT sell_price FROM price_ranges WHERE location_id = 30').get() as { sell_price: string } | undefined)?.sell_price;
    const posted = Date.now();
    assert.equal((await t.post(body(30, 5, '5.00'))).status, 200);
    // The delivery's drain leaves the baseline to settle; the thread rests before the deadline
    // (300 ms after that drain), and nothing else reaches agent.db: only the deadline can wake it.
    await waitFor("the delivery's drain", () => tillWaiting(agent, 30) === 1, 3_000, 10);
    await waitFor('the applier thread to rest while the baseline settles', () => !agent.applier.awake, 3_500, 10);
    assert.ok(Date.now() - posted < 4_000, 'the thread rested only after the settle deadline: this run proves nothing');
    assert.equal(sellPrice(), undefined, 'applied before the settle deadline');
    await waitFor('the baseline to be applied after it settled', () => sellPrice() === '5.00', 20_000, 20);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
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
});

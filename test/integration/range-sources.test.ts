import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AgentCore } from '../../src/core';
import type { IsoDate } from '../../src/domain/dates';
import { silentLogger } from '../../src/log';
import { upcomingChangesFor } from '../../src/till/changes';
import { item, price, schedule, tempDir, testConfig, update } from '../helpers/fixtures';

/**
 * A range's source_inbox_id names the update that set its value: when a later update changes some
 * days of a range, the pieces left on either side keep the earlier update, and only the days it sent
 * name the later one. Coming up's and `changes`' "caused by" for a change between two ranges is the
 * later of the two updates that wrote them.
 */
describe('the update that caused each range', () => {
  it('keeps the earlier update on the pieces a later one leaves of its range', () => {
    const core = new AgentCore(testConfig({ dataDir: tempDir() }), silentLogger);
    try {
      const store = (body: Record<string, unknown>): number => {
        const { outcome } = core.importPayload(Buffer.from(JSON.stringify(body)), 'tester');
        assert.equal(outcome.kind, 'stored');
        return (outcome as unknown as { inboxId: number }).inboxId;
      };
      const first = store(update(61, 1, 0, [item(2002, 2002, [price('2026-11-01', '2026-12-31', 'Eat In', '11.50')], [schedule('2026-11-01', '2026-12-31', 'Lunch')])]));
      const second = store(update(61, 2, 1, [item(2002, 2002, [price('2026-11-27', '2026-11-27', 'Eat In', '12.00')], [schedule('2026-11-28', '2026-11-28', 'Lunch', 'UNAVAILABLE')])]));
      assert.deepEqual(core.status()[0]!.lastChangeSequence, 2);
      const prices = core.tillDb
        .prepare<[], { date_from: string; date_to: string; sell_price: string; source_inbox_id: number }>('SELECT date_from, date_to, sell_price, source_inbox_id FROM price_ranges ORDER BY date_from')
        .all();
      assert.deepEqual(prices, [
        { date_from: '2026-11-01', date_to: '2026-11-26', sell_price: '11.50', source_inbox_id: first },
        { date_from: '2026-11-27', date_to: '2026-11-27', sell_price: '12.00', source_inbox_id: second },
        { date_from: '2026-11-28', date_to: '2026-12-31', sell_price: '11.50', source_inbox_id: first },
      ]);
      const meals = core.tillDb
        .prepare<[], { date_from: string; date_to: string; status: string; source_inbox_id: number }>('SELECT date_from, date_to, status, source_inbox_id FROM availability_ranges ORDER BY date_from')
        .all();
      assert.deepEqual(meals, [
        { date_from: '2026-11-01', date_to: '2026-11-27', status: 'AVAILABLE', source_inbox_id: first },
        { date_from: '2026-11-28', date_to: '2026-11-28', status: 'UNAVAILABLE', source_inbox_id: second },
        { date_from: '2026-11-29', date_to: '2026-12-31', status: 'AVAILABLE', source_inbox_id: first },
      ]);
      // A third update changes a day in December only: it caused none of November's changes.
      const third = store(update(61, 3, 2, [item(2002, 2002, [price('2026-12-10', '2026-12-10', 'Eat In', '13.00')])]));
      const { changes } = upcomingChangesFor(core, { locationId: 61, from: '2026-11-20' as IsoDate, days: 30 });
      assert.deepEqual(
        changes.map((c) => [c.date, c.tariffName ?? c.mealPeriod, c.before, c.after, c.cause?.inboxId]),
        [
          ['2026-11-27', 'Eat In', '11.50', '12.00', second],
          // The day after a one-day change: its end, caused by the update that made it, not by the first.
          ['2026-11-28', 'Eat In', '12.00', '11.50', second],
          ['2026-11-28', 'Lunch', 'AVAILABLE', 'UNAVAILABLE', second],
          ['2026-11-29', 'Lunch', 'UNAVAILABLE', 'AVAILABLE', second],
          ['2026-12-10', 'Eat In', '11.50', '13.00', third],
          ['2026-12-11', 'Eat In', '13.00', '11.50', third],
        ],
      );
      // Sent again with the first value, the changed days merge back into one range, which names the
      // update that changed them: one row names one update.
      const fourth = store(update(61, 4, 3, [item(2002, 2002, [price('2026-11-27', '2026-11-27', 'Eat In', '11.50'), price('2026-12-10', '2026-12-10', 'Eat In', '11.50')])]));
      const ranges = (): { date_from: string; date_to: string; source_inbox_id: number }[] =>
        core.tillDb.prepare<[], { date_from: string; date_to: string; source_inbox_id: number }>('SELECT date_from, date_to, source_inbox_id FROM price_ranges ORDER BY date_from').all();
      assert.deepEqual(ranges(), [{ date_from: '2026-11-01', date_to: '2026-12-31', source_inbox_id: fourth }]);
      // A price extended at the same value: the new end is the extending update's doing.
      const fifth = store(update(61, 5, 4, [item(2002, 2002, [price('2026-12-20', '2027-01-15', 'Eat In', '11.50')])]));
      assert.deepEqual(ranges(), [{ date_from: '2026-11-01', date_to: '2027-01-15', source_inbox_id: fifth }]);
      const end = upcomingChangesFor(core, { locationId: 61, from: '2027-01-10' as IsoDate, days: 14 }).changes.filter((c) => c.kind === 'price');
      assert.deepEqual(end.map((c) => [c.date, c.before, c.after, c.cause?.inboxId]), [['2027-01-16', '11.50', null, fifth]]);
    } finally {
      core.close();
    }
  });
});

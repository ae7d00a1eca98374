import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestAgent, type RunningTestAgent } from '../helpers/agent';
import { item, price, schedule, update } from '../helpers/fixtures';

/**
 * Issue 9, defect 1: open-ended ranges (9999-12-31, head office's "no end") left two rows for one
 * date, because the store widened its look-up window past the end of the date domain. Through real
 * HTTP and the real store, read back through the till's views.
 */
function rowsOn(t: RunningTestAgent, date: string): { prices: unknown[]; availability: unknown[] } {
  const till = t.agent.core.tillDb;
  return {
    prices: till.prepare("SELECT tariff_name, sell_price FROM pos_prices WHERE plu = '1' AND ? BETWEEN date_from AND date_to ORDER BY tariff_name").all(date),
    availability: till.prepare("SELECT meal_period, status FROM pos_availability WHERE plu = '1' AND ? BETWEEN date_from AND date_to ORDER BY meal_period").all(date),
  };
}

describe('ranges that touch the ends of the date domain', () => {
  it('a later open-ended price or availability replaces the earlier one from its start date: one row per date', async () => {
    const t = await startTestAgent();
    assert.equal((await t.post(update(5, 1, 0, [item('1', 'A', [price('2026-12-01', '9999-12-31', 'Eat In', '10.00')], [schedule('2026-12-01', '9999-12-31', 'Lunch')])]))).status, 200);
    await t.settle();
    assert.equal((await t.post(update(5, 2, 1, [item('1', 'A', [price('2027-02-01', '9999-12-31', 'Eat In', '13.00')], [schedule('2027-02-01', '9999-12-31', 'Lunch', 'UNAVAILABLE')])]))).status, 200);
    await t.settle();
    assert.deepEqual(rowsOn(t, '2027-03-01'), { prices: [{ tariff_name: 'Eat In', sell_price: '13.00' }], availability: [{ meal_period: 'Lunch', status: 'UNAVAILABLE' }] });
    assert.deepEqual(rowsOn(t, '2027-01-31'), { prices: [{ tariff_name: 'Eat In', sell_price: '10.00' }], availability: [{ meal_period: 'Lunch', status: 'AVAILABLE' }] });
    assert.deepEqual(rowsOn(t, '9999-12-31'), { prices: [{ tariff_name: 'Eat In', sell_price: '13.00' }], availability: [{ meal_period: 'Lunch', status: 'UNAVAILABLE' }] });
  });

  it('ranges from 0001-01-01 and to 9999-12-31 in one update, with other elements for the same key', async () => {
    const t = await startTestAgent();
    const prices = [price('0001-01-01', '9999-12-31', 'Eat In', '5.00'), price('2027-06-01', '2027-06-30', 'Eat In', '6.00'), price('9999-12-31', '9999-12-31', 'Eat In', '7.00')];
    assert.equal((await t.post(update(6, 1, 0, [item('1', 'A', prices, [schedule('0001-01-01', '0001-01-01', 'Lunch', 'UNAVAILABLE'), schedule('0001-01-02', '9999-12-31', 'Lunch')])]))).status, 200);
    await t.settle();
    const expect = (date: string, sell: string, status: string): void =>
      assert.deepEqual(rowsOn(t, date), { prices: [{ tariff_name: 'Eat In', sell_price: sell }], availability: [{ meal_period: 'Lunch', status }] }, date);
    expect('0001-01-01', '5.00', 'UNAVAILABLE');
    expect('0001-01-02', '5.00', 'AVAILABLE');
    expect('2027-06-15', '6.00', 'AVAILABLE');
    expect('2027-07-01', '5.00', 'AVAILABLE');
    expect('9999-12-30', '5.00', 'AVAILABLE');
    expect('9999-12-31', '7.00', 'AVAILABLE');
    // A later update that ends exactly where the domain ends merges with nothing beyond it.
    assert.equal((await t.post(update(6, 2, 1, [item('1', 'A', [price('9999-01-01', '9999-12-31', 'Eat In', '5.00')])]))).status, 200);
    await t.settle();
    expect('9999-12-31', '5.00', 'AVAILABLE');
    const overlapping = t.agent.core.tillDb
      .prepare('SELECT count(*) AS n FROM price_ranges a JOIN price_ranges b ON a.id < b.id AND a.location_id = b.location_id AND a.item_id = b.item_id AND a.tariff_name = b.tariff_name AND a.date_from <= b.date_to AND b.date_from <= a.date_to')
      .get() as { n: number };
    assert.equal(overlapping.n, 0);
  });
});

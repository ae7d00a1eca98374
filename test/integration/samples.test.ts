import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openReadOnly, databasePath } from '../../src/store/database';
import { startTestAgent } from '../helpers/agent';
import { sampleBodies } from '../helpers/fixtures';

type Row = Record<string, unknown>;

/** The end state test/fixtures/menu-cycles/README.md documents, read through the POS views. */
function assertDocumentedEndState(dataDir: string): void {
  const pos = openReadOnly(databasePath(dataDir));
  try {
    const priceOn = (plu: string, tariff: string, date: string): Row[] =>
      pos
        .prepare('SELECT sell_price, sell_price_minor, tax_code, tax_rate, currency FROM pos_prices WHERE location_id = 3021 AND plu = ? AND tariff_name = ? AND ? BETWEEN date_from AND date_to')
        .all(plu, tariff, date) as Row[];
    // PLU 1001 Eat In: 11.50 everywhere in the range except Christmas Day, 15.00 then.
    for (const date of ['2026-12-01', '2026-12-24', '2026-12-26', '2027-02-28']) {
      assert.deepEqual(priceOn('1001', 'Eat In', date), [{ sell_price: '11.50', sell_price_minor: 1150, tax_code: 'S', tax_rate: 20, currency: 'GBP' }], date);
    }
    assert.deepEqual(priceOn('1001', 'Eat In', '2026-12-25'), [{ sell_price: '15.00', sell_price_minor: 1500, tax_code: 'S', tax_rate: 20, currency: 'GBP' }]);
    for (const date of ['2026-12-01', '2026-12-25', '2027-02-28']) {
      assert.deepEqual(priceOn('1001', 'Take Away', date).map((r) => r.sell_price), ['10.95'], date);
    }
    assert.deepEqual(priceOn('1001', 'Eat In', '2026-11-30'), []);
    assert.deepEqual(priceOn('1001', 'Eat In', '2027-03-01'), []);
    const eatIn = pos.prepare("SELECT date_from, date_to, sell_price FROM pos_prices WHERE plu = '1001' AND tariff_name = 'Eat In' ORDER BY date_from").all();
    assert.deepEqual(eatIn, [
      { date_from: '2026-12-01', date_to: '2026-12-24', sell_price: '11.50' },
      { date_from: '2026-12-25', date_to: '2026-12-25', sell_price: '15.00' },
      { date_from: '2026-12-26', date_to: '2027-02-28', sell_price: '11.50' },
    ]);

    const availability = pos
      .prepare("SELECT meal_period, status, date_from, date_to FROM pos_availability WHERE location_id = 3021 AND plu = '2040' ORDER BY meal_period, date_from")
      .all();
    assert.deepEqual(availability, [
      { meal_period: 'Dinner', status: 'AVAILABLE', date_from: '2026-12-01', date_to: '2027-01-03' },
      { meal_period: 'Dinner', status: 'UNAVAILABLE', date_from: '2027-01-04', date_to: '2027-01-10' },
      { meal_period: 'Dinner', status: 'AVAILABLE', date_from: '2027-01-11', date_to: '2027-02-28' },
      { meal_period: 'Lunch', status: 'AVAILABLE', date_from: '2026-12-01', date_to: '2027-02-28' },
    ]);

    const water = pos.prepare("SELECT tariff_name, tax_code, tax_rate, sell_price FROM pos_prices WHERE plu = '3300' ORDER BY tariff_name").all();
    assert.deepEqual(water, [
      { tariff_name: 'Eat In', tax_code: 'S', tax_rate: 20, sell_price: '1.80' },
      { tariff_name: 'Take Away', tax_code: 'Z', tax_rate: 0, sell_price: '1.50' },
    ]);
    assert.deepEqual(pos.prepare("SELECT count(*) AS n FROM pos_availability WHERE plu = '3300'").get(), { n: 0 });

    // ItemID with a hyphen and numeric identifiers are normalised to text.
    assert.deepEqual(pos.prepare('SELECT plu, item_id, typeof(plu) AS t1, typeof(item_id) AS t2 FROM items ORDER BY plu').all(), [
      { plu: '1001', item_id: '8812-0001', t1: 'text', t2: 'text' },
      { plu: '2040', item_id: '55123', t1: 'text', t2: 'text' },
      { plu: '3300', item_id: '8812-0107', t1: 'text', t2: 'text' },
    ]);
    assert.deepEqual(pos.prepare('SELECT location_id, location_name, currency, last_change_sequence, waiting_updates, warnings FROM pos_sync_state').all(), [
      { location_id: 3021, location_name: 'Riverside Kitchen', currency: 'GBP', last_change_sequence: 1043, waiting_updates: 0, warnings: 0 },
    ]);
  } finally {
    pos.close();
  }
}

describe('the shared sample updates', () => {
  it('give the documented end state when delivered in order over HTTP', async () => {
    const t = await startTestAgent();
    for (const { raw } of sampleBodies()) {
      const res = await t.post(raw);
      assert.equal(res.status, 200);
      await t.settle();
    }
    assertDocumentedEndState(t.config.dataDir);
  });

  it('give the same end state when 03 arrives before 02: 03 waits for 02', async () => {
    const t = await startTestAgent();
    const [first, second, third] = sampleBodies();
    assert.equal((await t.post(first!.raw)).status, 200);
    await t.settle();
    assert.equal((await t.post(third!.raw)).status, 200);
    await t.settle();
    const waiting = t.agent.core.status()[0]!;
    assert.equal(waiting.lastChangeSequence, 1041);
    assert.deepEqual(
      waiting.waiting.map((w) => [w.changeSequence, w.reason, w.waitingFor]),
      [[1043, 'waiting', 1042]],
    );
    assert.equal((await t.post(second!.raw)).status, 200);
    await t.settle();
    assertDocumentedEndState(t.config.dataDir);
  });
});

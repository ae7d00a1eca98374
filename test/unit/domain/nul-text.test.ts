import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { AgentCore } from '../../../src/core';
import { parseExact } from '../../../src/domain/json-scan';
import { planUpdate, validateEnvelope, type Envelope } from '../../../src/domain/payload';
import { silentLogger } from '../../../src/log';
import { tempDir, testConfig } from '../../helpers/fixtures';

/**
 * A NUL character (JSON's \u0000) in text the till reads: SQLite stores it, but a till reading text
 * as a C string (ODBC, the sqlite3 shell) takes it as the end, so `1001\u0000X` showed and matched as
 * another item's `1001`, and `S\u0000` escaped a query by tax code. The plan skips the item or
 * element whose key or name holds one, with a warning naming the field, as it does for a lone
 * surrogate; a LocationName with one is ignored.
 */

function body(): Record<string, unknown> & { LocationName: string; ScheduledItems: Record<string, unknown>[] } {
  const price = (tariff: string): Record<string, unknown> => ({ DateFrom: '2026-12-01', DateTo: '2026-12-31', TariffName: tariff, PriceModel: 'S', TaxCode: 'S', TaxRate: 20, SellPrice: 1.5 });
  const meal = (): Record<string, unknown> => ({ DateFrom: '2026-12-01', DateTo: '2026-12-31', Status: 'AVAILABLE', MealPeriodName: 'Lunch' });
  return {
    ChangeSequence: 11,
    ParentChangeSequence: 10,
    LocationID: 6003,
    LocationName: 'Riverside',
    CurrencyIsoCode: 'GBP',
    ScheduledItems: [
      { PLU: '1', ItemID: 'I1', ItemName: 'Tea', ItemType: 'RECIPE', PriceUpdates: [price('Eat In')], ScheduleUpdates: [meal()] },
      { PLU: '2', ItemID: 'I2', ItemName: 'Cake', ItemType: 'RECIPE', PriceUpdates: [price('Take Out')], ScheduleUpdates: [meal()] },
    ],
  };
}

type Body = ReturnType<typeof body>;
const first = (b: Body): Record<string, unknown> => b.ScheduledItems[0]!;
const firstPrice = (b: Body): Record<string, unknown> => (first(b).PriceUpdates as Record<string, unknown>[])[0]!;
const secondMeal = (b: Body): Record<string, unknown> => (b.ScheduledItems[1]!.ScheduleUpdates as Record<string, unknown>[])[0]!;

const FIELDS = [
  ['PLU', (b: Body, v: string) => (first(b).PLU = v), 'ScheduledItems[0].PLU', 'item'],
  ['ItemID', (b: Body, v: string) => (first(b).ItemID = v), 'ScheduledItems[0].ItemID', 'item'],
  ['ItemName', (b: Body, v: string) => (first(b).ItemName = v), 'ScheduledItems[0].ItemName', 'item'],
  ['TariffName', (b: Body, v: string) => (firstPrice(b).TariffName = v), 'ScheduledItems[0].PriceUpdates[0].TariffName', 'element'],
  ['TaxCode', (b: Body, v: string) => (firstPrice(b).TaxCode = v), 'ScheduledItems[0].PriceUpdates[0].TaxCode', 'element'],
  ['PriceModel', (b: Body, v: string) => (firstPrice(b).PriceModel = v), 'ScheduledItems[0].PriceUpdates[0].PriceModel', 'element'],
  ['MealPeriodName', (b: Body, v: string) => (secondMeal(b).MealPeriodName = v), 'ScheduledItems[1].ScheduleUpdates[0].MealPeriodName', 'element'],
  ['LocationName', (b: Body, v: string) => (b.LocationName = v), 'LocationName', 'ignored'],
] as const;

/** Text with a NUL at its start, in its middle or at its end (nothing else around it trimmed away). */
const withNul = fc
  .tuple(fc.constantFrom('start', 'middle', 'end'), fc.string({ minLength: 1, maxLength: 6 }).filter((s) => s.trim() === s && s !== '' && !s.includes('\u0000')))
  .map(([where, text]) => (where === 'start' ? `\u0000${text}` : where === 'end' ? `${text}\u0000` : `${text.slice(0, 1)}\u0000${text.slice(1)}`));

function plan(b: Body): ReturnType<typeof planUpdate> {
  const checked = validateEnvelope(parseExact(JSON.stringify(b)));
  assert.ok(checked.ok);
  return planUpdate(checked.envelope as Envelope, checked.body);
}

describe('NUL characters in text the till reads', () => {
  it('skips the item or element, or ignores the LocationName, with a warning naming the field; no planned text has one', () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(fc.constantFrom(...FIELDS), withNul, ([name, put, path, skipped], text) => {
        const b = body();
        put(b, text);
        assert.ok(JSON.stringify(b).includes('\\u0000'), 'sent as JSON\'s escape');
        const p = plan(b);
        const warning = p.warnings.find((w) => w.path === path);
        assert.ok(warning, `${name}: ${JSON.stringify(p.warnings)}`);
        assert.match(warning.message, new RegExp(`NUL character.*; ${skipped === 'ignored' ? 'ignored' : `${skipped} skipped`}$`));
        assert.equal(JSON.stringify(p.items).includes('\\u0000'), false, name);
        assert.equal((p.locationName ?? '').includes('\u0000'), false);
        assert.equal(p.items.length, skipped === 'item' ? 1 : 2);
        seen.add(name);
      }),
      { numRuns: 300 },
    );
    assert.equal(seen.size, FIELDS.length);
  });

  it("keeps the reviewer's NUL PLU and tax code out of the till file: one item 1001, one tax code S", () => {
    const core = new AgentCore(testConfig({ dataDir: tempDir() }), silentLogger);
    try {
      const payload =
        '{"ChangeSequence":1,"ParentChangeSequence":0,"LocationID":7101,"LocationName":"nul","CurrencyIsoCode":"GBP","ScheduledItems":[' +
        '{"PLU":"1001\\u0000X","ItemID":"N1","ItemName":"nul plu","ItemType":"RECIPE","PriceUpdates":[{"DateFrom":"2020-01-01","DateTo":"2030-12-31","TariffName":"Eat In","PriceModel":"Std","TaxCode":"S","TaxRate":20,"SellPrice":1.00}]},' +
        '{"PLU":"1001","ItemID":"N2","ItemName":"plain","ItemType":"RECIPE","PriceUpdates":[{"DateFrom":"2020-01-01","DateTo":"2030-12-31","TariffName":"Eat In","PriceModel":"Std","TaxCode":"S\\u0000","TaxRate":20,"SellPrice":2.00},' +
        '{"DateFrom":"2020-01-01","DateTo":"2030-12-31","TariffName":"Take Away","PriceModel":"Std","TaxCode":"Z","TaxRate":0,"SellPrice":2.00}]}]}';
      assert.equal(core.importPayload(Buffer.from(payload), 'tester').outcome.kind, 'stored');
      const rows = core.tillDb.prepare('SELECT plu, item_id, tariff_name, tax_code FROM pos_prices ORDER BY item_id, tariff_name').all();
      assert.deepEqual(rows, [{ plu: '1001', item_id: 'N2', tariff_name: 'Take Away', tax_code: 'Z' }]);
      const text = JSON.stringify(core.tillDb.prepare("SELECT group_concat(plu || tax_code, ',') AS t FROM pos_prices").get());
      assert.equal(text.includes('\\u0000'), false);
    } finally {
      core.close();
    }
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseSellPrice } from '../../../src/domain/money';
import { parseEnvelope, planUpdate } from '../../../src/domain/payload';

/**
 * Found by the bad-input suite (test/faults/bad-input.test.ts): a body with a valid envelope but a
 * deeply nested value in an item field was answered 200, then planUpdate threw "Maximum call stack
 * size exceeded" while quoting the value in a warning, so the apply failed on every retry and the
 * location's chain was blocked for good. Huge strings were copied whole into the warning text.
 */
function bodyWith(field: string, rawValue: string): string {
  // The field once, with the value given (sent twice, the plan would skip the item for that instead).
  const item = `{"PLU":"1","ItemID":"1","ItemName":"x","ItemType":"RECIPE","PriceUpdates":[],"ScheduleUpdates":[],"${field}":${rawValue}}`.replace(new RegExp(`"${field}":"[^"]*",`), '');
  return `{"ChangeSequence":2,"ParentChangeSequence":1,"LocationID":1,"CurrencyIsoCode":"GBP","ScheduledItems":[${item}]}`;
}

function plan(raw: string): ReturnType<typeof planUpdate> {
  const parsed = parseEnvelope(raw);
  assert.ok(parsed.ok, 'the envelope is valid');
  return planUpdate(parsed.envelope, parsed.body);
}

describe('regression: warnings quote sent values safely', () => {
  const deep = '['.repeat(50_000) + ']'.repeat(50_000);

  for (const field of ['PLU', 'ItemID', 'ItemType']) {
    it(`a deeply nested ${field} becomes a warning instead of an exception`, () => {
      const result = plan(bodyWith(field, deep));
      assert.equal(result.items.length, 0);
      assert.equal(result.warnings.length, 1);
      assert.match(result.warnings[0]!.message, /deeply nested array/);
    });
  }

  it('a deeply nested date, tax rate or status becomes a bounded warning', () => {
    const raw = `{"ChangeSequence":2,"ParentChangeSequence":1,"LocationID":1,"CurrencyIsoCode":"GBP","ScheduledItems":[{"PLU":1,"ItemID":1,"ItemName":"x","ItemType":"RECIPE",
      "PriceUpdates":[{"DateFrom":${deep},"DateTo":"2026-01-01","TariffName":"T","TaxCode":"S","TaxRate":20,"SellPrice":1},
                      {"DateFrom":"2026-01-01","DateTo":"2026-01-01","TariffName":"T","TaxCode":"S","TaxRate":${deep},"SellPrice":1}],
      "ScheduleUpdates":[{"DateFrom":"2026-01-01","DateTo":"2026-01-01","MealPeriodName":"L","Status":${deep}}]}]}`;
    const result = plan(raw);
    assert.equal(result.warnings.length, 3);
    for (const w of result.warnings) assert.ok(w.message.length < 300, w.message.slice(0, 100));
  });

  it('a huge string is quoted in a few dozen characters, with its length', () => {
    const huge = JSON.stringify('x'.repeat(2_000_000));
    const result = plan(bodyWith('ItemType', huge));
    assert.equal(result.warnings.length, 1);
    assert.ok(result.warnings[0]!.message.length < 300);
    assert.match(result.warnings[0]!.message, /2000002 characters/);
    const price = parseSellPrice('9'.repeat(100_000) + 'x', 'GBP');
    assert.equal(price.ok, false);
    assert.ok(!price.ok && price.reason.length < 300);
  });
});

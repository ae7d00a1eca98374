import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { sameMeaning } from '../../../src/domain/body';
import { parseEnvelope, planUpdate, type UpdateWarning } from '../../../src/domain/payload';
import { amountArb, bodyWithPrice, Coverage, expected, formArb, sellPriceJson, type Amount, type Form } from '../../helpers/amount-forms';

/**
 * Every JSON form of one SellPrice (number or string, exponent of either sign and case, trailing and
 * leading zeros) is read as the same amount, or refused with the same warning, and two bodies that
 * differ only in the form are the same update (src/domain/body.ts, sameMeaning). The same property
 * through the webhook and the till file: test/integration/amount-forms.test.ts.
 */

interface Read {
  readonly price: { minor: number; text: string } | null;
  readonly warnings: readonly UpdateWarning[];
}

function read(body: string): Read {
  const parsed = parseEnvelope(body);
  assert.ok(parsed.ok, body);
  const plan = planUpdate(parsed.envelope, parsed.body);
  const value = plan.items[0]?.prices[0]?.value;
  return { price: value ? { minor: value.sellPriceMinor, text: value.sellPrice } : null, warnings: plan.warnings };
}

function check(a: Amount, f: Form, r: Read): void {
  const want = expected(a);
  const what = `${sellPriceJson(a, f)} ${a.currency}`;
  if (want.ok) {
    assert.deepEqual(r.price, { minor: Number(want.minor), text: want.text }, what);
    const wide = want.minor > 2_147_483_647n;
    assert.deepEqual(r.warnings.map((w) => w.path), wide ? ['ScheduledItems[0].PriceUpdates[0].SellPrice'] : [], what);
    if (wide) assert.match(r.warnings[0]!.message, /32-bit/);
  } else {
    assert.equal(r.price, null, what);
    assert.equal(r.warnings.length, 1, what);
    const pattern = { negative: /is negative; element skipped$/, decimals: /has more decimals than/, 'too large': /is too large; element skipped$/ }[want.why];
    assert.match(r.warnings[0]!.message, pattern, what);
  }
}

describe('every JSON form of one amount', () => {
  it('is read as the same stored value, or refused with the same warning, and is the same update on redelivery', () => {
    const coverage = new Coverage();
    fc.assert(
      fc.property(amountArb, formArb, formArb, (a, f1, f2) => {
        coverage.see(a, [f1, f2]);
        const first = bodyWithPrice(1, 2, a.currency, sellPriceJson(a, f1));
        const again = bodyWithPrice(1, 2, a.currency, sellPriceJson(a, f2));
        const r1 = read(first);
        const r2 = read(again);
        check(a, f1, r1);
        check(a, f2, r2);
        assert.deepEqual(r2, r1, `${sellPriceJson(a, f1)} and ${sellPriceJson(a, f2)}`);
        assert.equal(sameMeaning(Buffer.from(first), Buffer.from(again)), true, `${sellPriceJson(a, f1)} and ${sellPriceJson(a, f2)} are one update`);
        // One minor unit (or last decimal) more is another update, whatever the form.
        const other = { ...a, units: a.units + 1n };
        assert.equal(sameMeaning(Buffer.from(first), Buffer.from(bodyWithPrice(1, 2, a.currency, sellPriceJson(other, f2)))), false);
      }),
      { numRuns: 4000 },
    );
    assert.deepEqual(coverage.missing(20), [], 'the generators reach every form and every edge');
  });

  it('reads the issue\'s examples', () => {
    const gbp = (json: string): Read => read(bodyWithPrice(1, 2, 'GBP', json));
    for (const json of ['10', '1e1', '"1e1"', '"1E+1"', '"10.00"', '" 010 "', '"100e-1"', '"0.1e2"']) assert.deepEqual(gbp(json).price, { minor: 1000, text: '10.00' }, json);
    for (const json of ['189.80', '"1.898e2"', '"18980E-2"', '1.898e2', '"189.8"']) assert.deepEqual(gbp(json).price, { minor: 18980, text: '189.80' }, json);
    assert.equal(sameMeaning(Buffer.from(bodyWithPrice(1, 2, 'GBP', '189.80')), Buffer.from(bodyWithPrice(1, 2, 'GBP', '"1.898e2"'))), true);
    // Text that is not a JSON number's is refused, in any case.
    for (const json of ['"+1e1"', '".5"', '"5."', '"1e"', '"1,50"', '"0x10"', '"Infinity"', '"1e1.5"']) {
      const r = gbp(json);
      assert.equal(r.price, null, json);
      assert.match(r.warnings[0]!.message, /is not a decimal amount; element skipped$/, json);
    }
    // The same warning whatever the form: the amount is quoted in plain decimal form.
    assert.deepEqual(gbp('"1.14999e1"').warnings, gbp('11.4999').warnings);
    assert.equal(gbp('11.4999').warnings[0]!.message, 'SellPrice 11.4999 has more decimals than GBP allows (2); element skipped');
    assert.deepEqual(gbp('"9007199254740992e-2"').warnings, gbp('90071992547409.92').warnings);
    assert.equal(gbp('90071992547409.92').warnings[0]!.message, 'SellPrice 90071992547409.92 is too large; element skipped');
    // An exponent far beyond any amount is refused without writing the amount out, in every form.
    for (const json of ['1e401', '"1e401"', '"10e400"', '"1e-401"', '"1e99999999999999999999999"', '"0.1e100000000000000000000000"']) {
      assert.match(gbp(json).warnings[0]!.message, /^SellPrice is out of range \(its first digit is more than 400 places from the decimal point\); element skipped$/, json);
    }
    // Zero however written, exponent as large as it likes.
    for (const json of ['0', '-0', '"-0.00"', '"0e99999999999999999999"', '0E-400']) assert.deepEqual(gbp(json).price, { minor: 0, text: '0.00' }, json);
  });
});

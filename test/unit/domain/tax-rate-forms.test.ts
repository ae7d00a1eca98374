import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { sameMeaning } from '../../../src/domain/body';
import { parseEnvelope, planUpdate } from '../../../src/domain/payload';
import { amountText, bodyWithPrice, formArb, type Amount, type Form } from '../../helpers/amount-forms';

/**
 * TaxRate, like SellPrice, means the same whichever JSON form carries it: 20, 20.0, 2e1, "20", "2.0E+1"
 * and " 020 " are all twenty percent, and two bodies that differ only in that form are the same update.
 * A rate that is not a whole percentage from 0 to 100 is refused with the same warning in every form.
 */

/** A rate as an exact decimal: units / 10^scale (scale 1 gives a non-whole rate such as 20.5). */
interface Rate {
  readonly negative: boolean;
  readonly units: bigint;
  readonly scale: number;
}

const rateArb: fc.Arbitrary<Rate> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(0n, 1n, 20n, 99n, 100n).map((units) => ({ negative: false, units, scale: 0 })) },
  { weight: 3, arbitrary: fc.bigInt({ min: 0n, max: 100n }).map((units) => ({ negative: false, units, scale: 0 })) },
  { weight: 1, arbitrary: fc.constantFrom(101n, 1000n, 2n ** 53n).map((units) => ({ negative: false, units, scale: 0 })) },
  { weight: 1, arbitrary: fc.bigInt({ min: 1n, max: 100n }).map((units) => ({ negative: true, units, scale: 0 })) },
  { weight: 1, arbitrary: fc.constant({ negative: true, units: 0n, scale: 0 }) },
  { weight: 1, arbitrary: fc.bigInt({ min: 0n, max: 999n }).filter((u) => u % 10n !== 0n).map((units) => ({ negative: false, units, scale: 1 })) },
);

/** The percentage a till must get, or null when the element must be skipped. */
function expectedRate(r: Rate): number | null {
  if (r.scale !== 0) return null;
  if (r.negative && r.units !== 0n) return null;
  return r.units <= 100n ? Number(r.units) : null;
}

function taxRateJson(r: Rate, f: Form): string {
  const a: Amount = { currency: 'JPY', digits: 0, negative: r.negative, units: r.units, scale: r.scale };
  const text = amountText(a, f);
  return f.asString ? JSON.stringify(f.spaces ? ` ${text} ` : text) : text;
}

function body(taxRate: string): string {
  return bodyWithPrice(3021, 2, 'GBP', '1.50').replace('"TaxRate":20', `"TaxRate":${taxRate}`);
}

function read(text: string): { rate: number | null; warnings: string[] } {
  const parsed = parseEnvelope(text);
  assert.ok(parsed.ok, text);
  const plan = planUpdate(parsed.envelope, parsed.body);
  return { rate: plan.items[0]?.prices[0]?.value.taxRate ?? null, warnings: plan.warnings.map((w) => w.path) };
}

describe('TaxRate in every JSON form', () => {
  it('reads one rate the same in every form, and two forms of it are the same update', () => {
    const seen = { string: 0, exponent: 0, fraction: 0, refused: 0, hundred: 0, zero: 0 };
    fc.assert(
      fc.property(rateArb, formArb, formArb, (r, f1, f2) => {
        const want = expectedRate(r);
        const a = body(taxRateJson(r, f1));
        const b = body(taxRateJson(r, f2));
        for (const [text, f] of [[a, f1], [b, f2]] as const) {
          const got = read(text);
          if (want === null) {
            assert.equal(got.rate, null, text);
            assert.deepEqual(got.warnings, ['ScheduledItems[0].PriceUpdates[0].TaxRate'], text);
          } else {
            assert.equal(got.rate, want, text);
            assert.deepEqual(got.warnings, [], text);
          }
          if (f.asString) seen.string++;
          if (f.exponent) seen.exponent++;
          if (f.trailingZeros > 0) seen.fraction++;
        }
        if (want === null) seen.refused++;
        if (want === 100) seen.hundred++;
        if (want === 0) seen.zero++;
        assert.ok(sameMeaning(Buffer.from(a), Buffer.from(b)), `${a}\n${b}`);
      }),
      { numRuns: 2000 },
    );
    for (const [what, n] of Object.entries(seen)) assert.ok(n >= 20, `the generator drew too few of: ${what} (${n})`);
  });

  it('reads the issue-style examples', () => {
    for (const form of ['20', '20.0', '2e1', '2E+1', '200e-1', '"20"', '"20.0"', '"2e1"', '" 020 "', '"2.0E+1"']) {
      assert.equal(read(body(form)).rate, 20, form);
    }
    for (const form of ['20.5', '"20.5"', '101', '"1.01e2"', '-1', '"-1e0"', '"twenty"', '"+20"', '"0x14"']) {
      assert.equal(read(body(form)).rate, null, form);
    }
  });
});

describe('dates before the first day', () => {
  it('skips an element dated in the year 0000 with a warning, as any date outside 0001-01-01..9999-12-31', () => {
    const text = body('20').replace('"DateFrom":"2027-01-01"', '"DateFrom":"0000-12-31"');
    const got = read(text);
    assert.equal(got.rate, null);
    assert.deepEqual(got.warnings, ['ScheduledItems[0].PriceUpdates[0].DateFrom']);
    assert.equal(read(body('20').replace('"DateFrom":"2027-01-01"', '"DateFrom":"0001-01-01"')).rate, 20);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { startTestAgent, type RunningTestAgent } from '../helpers/agent';
import { amountArb, bodyWithPrice, Coverage, EDGE_AMOUNTS, expected, formArb, sellPriceJson, type Amount, type Form } from '../helpers/amount-forms';

/**
 * Issue 28, case 3, through the real webhook and the till's view: every JSON form of one SellPrice
 * (number or string, exponent of either sign and case, trailing zeros, leading zeros where JSON allows
 * them) gives the same `pos_prices` row, or the same warning, and a redelivery that only changes the
 * form is a duplicate. (The same property over many more cases, in the domain alone:
 * test/unit/domain/amount-forms.test.ts.)
 */

interface Stored {
  readonly row: { sell_price_minor: number; sell_price: string; currency: string } | null;
  readonly warnings: readonly string[];
}

function stored(t: RunningTestAgent, locationId: number): Stored {
  const row = t.agent.core.tillDb.prepare('SELECT sell_price_minor, sell_price, currency FROM pos_prices WHERE location_id = ?').get(locationId) as Stored['row'] | undefined;
  const warnings = (t.agent.core.agentDb.prepare('SELECT path, message FROM update_warnings WHERE location_id = ? ORDER BY id').all(locationId) as { path: string; message: string }[]).map((w) => `${w.path}: ${w.message}`);
  return { row: row ?? null, warnings };
}

async function post(t: RunningTestAgent, body: string): Promise<string> {
  const res = await t.post(body);
  assert.equal(res.status, 200, JSON.stringify(res.json));
  return (res.json as { status: string }).status;
}

function want(a: Amount): Stored['row'] {
  const e = expected(a);
  return e.ok ? { sell_price_minor: Number(e.minor), sell_price: e.text, currency: a.currency } : null;
}

const PLAIN_NUMBER: Form = { asString: false, shift: 0, exponent: false, expLetter: 'e', plusSign: false, expZeros: 0, trailingZeros: 0, leadingZeros: 0, spaces: false };
/** Each edge amount is sent in these pairs of forms too, whatever the random runs draw. */
const EDGE_FORMS: readonly (readonly [Form, Form])[] = [
  [PLAIN_NUMBER, { asString: true, shift: -3, exponent: true, expLetter: 'E', plusSign: false, expZeros: 1, trailingZeros: 2, leadingZeros: 1, spaces: true }],
  [{ ...PLAIN_NUMBER, shift: 2, exponent: true, plusSign: true }, { ...PLAIN_NUMBER, asString: true, shift: 5, exponent: true, trailingZeros: 1 }],
  [{ ...PLAIN_NUMBER, shift: -7, exponent: true, expLetter: 'E', trailingZeros: 3 }, { ...PLAIN_NUMBER, asString: true, leadingZeros: 2 }],
];

describe('every JSON form of one amount, through the webhook', () => {
  it('gives the same stored value and warnings, and a redelivery in another form is a duplicate', async () => {
    const t = await startTestAgent();
    const coverage = new Coverage();
    let location = 1000;
    await fc.assert(
      fc.asyncProperty(amountArb, formArb, formArb, async (a, f1, f2) => {
        coverage.see(a, [f1, f2]);
        const one = (location += 2);
        const two = one + 1;
        const what = `${sellPriceJson(a, f1)} then ${sellPriceJson(a, f2)} (${a.currency})`;
        // The first form at one location, the second at another: the same row, the same warnings.
        assert.equal(await post(t, bodyWithPrice(one, 2, a.currency, sellPriceJson(a, f1))), 'stored');
        assert.equal(await post(t, bodyWithPrice(two, 2, a.currency, sellPriceJson(a, f2))), 'stored');
        await t.settle();
        const first = stored(t, one);
        const second = stored(t, two);
        assert.deepEqual(first.row, want(a), what);
        assert.deepEqual(second.row, first.row, what);
        assert.deepEqual(second.warnings, first.warnings, what);
        // The second form redelivered under the first location's update: the same update.
        assert.equal(await post(t, bodyWithPrice(one, 2, a.currency, sellPriceJson(a, f2))), 'duplicate', what);
        // Another amount under the same ChangeSequence is a conflict, in any form.
        assert.equal(await post(t, bodyWithPrice(one, 2, a.currency, sellPriceJson({ ...a, units: a.units + 1n }, f2))), 'conflict', what);
      }),
      { numRuns: 60, examples: EDGE_AMOUNTS.flatMap((a) => EDGE_FORMS.map(([f1, f2]): [Amount, Form, Form] => [a, f1, f2])) },
    );
    assert.deepEqual(coverage.missing(1), [], 'every form and every edge was sent');
  });

  it('the issue\'s cases: "1e1" is 10.00 like the number 1e1, and "1.898e2" redelivered against 189.80 is a duplicate', async () => {
    const t = await startTestAgent();
    assert.equal(await post(t, bodyWithPrice(1, 2, 'GBP', '"1e1"')), 'stored');
    assert.equal(await post(t, bodyWithPrice(2, 2, 'GBP', '1e1')), 'stored');
    assert.equal(await post(t, bodyWithPrice(3, 2, 'GBP', '189.80')), 'stored');
    await t.settle();
    assert.deepEqual([stored(t, 1), stored(t, 2)].map((s) => [s.row?.sell_price_minor, s.warnings]), [[1000, []], [1000, []]]);
    assert.equal(await post(t, bodyWithPrice(3, 2, 'GBP', '"1.898e2"')), 'duplicate');
    assert.equal(await post(t, bodyWithPrice(3, 2, 'GBP', '"18980E-2"')), 'duplicate');
    assert.equal(stored(t, 3).row?.sell_price, '189.80');
  });
});

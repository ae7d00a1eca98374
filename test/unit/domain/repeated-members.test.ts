import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { BODY_READERS } from './scan-harness';
import { parseExact, repeatedMembers } from '../../../src/domain/json-scan';
import { planUpdate, REPEATED_MESSAGE, validateEnvelope, type Envelope } from '../../../src/domain/payload';

/**
 * A member name sent twice in one object (`"SellPrice":1.00,"SellPrice":2.00`): JSON.parse keeps the
 * last value, other parsers the first (RFC 8259, section 4, leaves it open). The agent does not guess:
 * in the envelope (location, chain, currency, the items) the body is refused, 400 duplicate_member;
 * in an item or an element the plan skips it with a warning. The same value twice means one thing
 * and is taken.
 */

const readers = BODY_READERS;

const ITEM = '{"PLU":"1","ItemID":"A","ItemName":"Tea","ItemType":"RECIPE","PriceUpdates":[{"DateFrom":"2026-12-01","DateTo":"2026-12-31","TariffName":"Eat In","PriceModel":"S","TaxCode":"S","TaxRate":20,"SellPrice":1.5}],"ScheduleUpdates":[]}';
const ENVELOPE: Record<string, string> = { LocationID: '6000', ChangeSequence: '12', ParentChangeSequence: '11', CurrencyIsoCode: '"GBP"', ScheduledItems: `[${ITEM}]` };
/** A different value of the same member: what a second copy sends. */
const OTHER: Record<string, string> = { LocationID: '4000', ChangeSequence: '60', ParentChangeSequence: '59', CurrencyIsoCode: '"EUR"', ScheduledItems: '[]' };

/** The envelope with `key` sent a second time (`value`), before or after the first, in the JSON given. */
function withRepeat(key: string, value: string, first: boolean): Buffer {
  const members = Object.entries(ENVELOPE).map(([k, v]) => `"${k}":${v}`);
  const at = Object.keys(ENVELOPE).indexOf(key);
  members.splice(first ? at : at + 1, 0, `"${key}":${value}`);
  return Buffer.from(`{${members.join(',')}}`);
}

describe('a member sent twice in the envelope', () => {
  for (const [what, read] of readers) {
    it(`is refused, naming it, when the values differ, and taken when they are the same (${what})`, () => {
      const seen = new Set<string>();
      fc.assert(
        fc.property(fc.constantFrom(...Object.keys(ENVELOPE)), fc.boolean(), fc.boolean(), (key, first, same) => {
          const result = read(withRepeat(key, same ? ENVELOPE[key]! : OTHER[key]!, first));
          // The items twice are two lists of items, whatever they hold.
          if (same && key !== 'ScheduledItems') assert.equal(result.ok, true, `${key}: ${JSON.stringify(result.ok ? null : result.error)}`);
          else assert.deepEqual(result, { ok: false, error: { id: 'duplicate_member', field: key, message: 'sent more than once with different values: which one head office meant is not known' } }, key);
          seen.add(`${key} ${same}`);
        }),
        { numRuns: 200 },
      );
      assert.equal(seen.size, Object.keys(ENVELOPE).length * 2);
    });

    it(`takes any other top-level member sent twice (${what})`, () => {
      const raw = Buffer.from(`{"Note":1,${Object.entries(ENVELOPE).map(([k, v]) => `"${k}":${v}`).join(',')},"Note":2,"LocationName":"A","LocationName":"B"}`);
      assert.equal(read(raw).ok, true);
    });
  }

  it("refuses the reviewer's body: ChangeSequence 12 then 60, LocationID 6000 then 4000", () => {
    const raw = Buffer.from(`{"ChangeSequence":12,"ParentChangeSequence":11,"LocationID":6000,"CurrencyIsoCode":"GBP","ChangeSequence":60,"LocationID":4000,"ScheduledItems":[${ITEM}]}`);
    for (const [, read] of readers) assert.deepEqual(read(raw), { ok: false, error: { id: 'duplicate_member', field: 'LocationID', message: 'sent more than once with different values: which one head office meant is not known' } });
  });
});

describe('a member sent twice in an item or an element', () => {
  it('parseExact keeps the last value, as JSON.parse does, and marks the name only when the values differ', () => {
    const differing = parseExact('{"a":1,"b":{"x":[1,2]},"a":2,"b":{"x":[1,2]}}') as Record<string, unknown>;
    assert.deepEqual(JSON.parse(JSON.stringify(differing)), JSON.parse('{"a":1,"b":{"x":[1,2]},"a":2,"b":{"x":[1,2]}}'));
    assert.deepEqual([...(repeatedMembers(differing) ?? [])], ['a']);
    assert.equal(repeatedMembers(parseExact('{"a":1.5,"a":1.5}') as object), undefined);
    // The same amount written two ways is two texts: the plan cannot know they were meant as one.
    assert.deepEqual([...(repeatedMembers(parseExact('{"a":1.5,"a":1.50}') as object) ?? [])], ['a']);
    // Not enumerable: nothing that copies or writes the object carries the mark.
    assert.deepEqual(Object.keys(differing), ['a', 'b']);
    assert.equal(JSON.stringify(differing).includes('repeated'), false);
  });

  function plan(itemText: string): ReturnType<typeof planUpdate> {
    const checked = validateEnvelope(parseExact(`{"LocationID":6000,"ChangeSequence":12,"ParentChangeSequence":11,"CurrencyIsoCode":"GBP","ScheduledItems":[${itemText},{"PLU":"2","ItemID":"B","ItemName":"Cake","ItemType":"RECIPE","PriceUpdates":[],"ScheduleUpdates":[]}]}`));
    assert.ok(checked.ok);
    return planUpdate(checked.envelope as Envelope, checked.body);
  }

  it('skips the element whose SellPrice (or any member the plan reads) differs, with a warning; the rest applies', () => {
    for (const member of ['SellPrice', 'TaxRate', 'TaxCode', 'TariffName', 'DateFrom', 'DateTo', 'PriceModel']) {
      const values: Record<string, [string, string]> = { SellPrice: ['1.00', '2.00'], TaxRate: ['20', '5'], TaxCode: ['"S"', '"Z"'], TariffName: ['"Eat In"', '"Take Out"'], DateFrom: ['"2026-12-01"', '"2026-12-02"'], DateTo: ['"2026-12-30"', '"2026-12-31"'], PriceModel: ['"S"', '"M"'] };
      const [a, b] = values[member]!;
      const item = ITEM.replace('"SellPrice":1.5}', `"SellPrice":1.5,"${member}":${a},"${member}":${b}}`);
      const p = plan(item);
      assert.deepEqual(p.warnings, [{ path: `ScheduledItems[0].PriceUpdates[0].${member}`, message: `${REPEATED_MESSAGE}; element skipped` }], member);
      assert.deepEqual(p.items.map((i) => [i.itemId, i.prices.length]), [['A', 0], ['B', 0]]);
    }
    const availability = ITEM.replace('"ScheduleUpdates":[]', '"ScheduleUpdates":[{"DateFrom":"2026-12-01","DateTo":"2026-12-31","MealPeriodName":"Lunch","Status":"AVAILABLE","Status":"UNAVAILABLE"}]');
    assert.deepEqual(plan(availability).warnings, [{ path: 'ScheduledItems[0].ScheduleUpdates[0].Status', message: `${REPEATED_MESSAGE}; element skipped` }]);
  });

  it('skips an item whose PLU or ItemID differs, and takes one whose repeats agree or are members it does not read', () => {
    const p = plan(ITEM.replace('"PLU":"1"', '"PLU":"1","PLU":"9"'));
    assert.deepEqual(p.warnings, [{ path: 'ScheduledItems[0].PLU', message: `${REPEATED_MESSAGE}; item skipped` }]);
    assert.deepEqual(p.items.map((i) => i.itemId), ['B']);
    const agreeing = plan(ITEM.replace('"PLU":"1"', '"PLU":"1","Note":1,"Note":2,"PLU":"1"'));
    assert.deepEqual(agreeing.warnings, []);
    assert.deepEqual(agreeing.items.map((i) => [i.itemId, i.prices.length]), [['A', 1], ['B', 0]]);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { MAX_DEPTH, MAX_MEMBER_BYTES, planBody, readBody, readBodyFrom, type ReadBodyResult } from '../../../src/domain/body';
import { JsonLimitError, parseLazily } from '../../../src/domain/json-scan';
import { pieces as scanPieces, sourceOf, whole as scanWhole } from './scan-harness';

/**
 * How deep a body may nest arrays and objects (MAX_DEPTH, the body's own object the first), and how
 * many bytes its members other than ScheduledItems may take together (MAX_MEMBER_BYTES). Both are
 * checked by the scanners, in memory and piece by piece alike, before anything is parsed: deep values
 * and many large members cost the parsers far more memory than their bytes, and a body over either
 * once ended the webhook's thread (receipt) or the applier's (every retry of a body answered 200).
 */

const member = 'ScheduledItems';

const whole = (bytes: Buffer, maxDepth: number): string => scanWhole(bytes, { maxDepth });
const pieces = (bytes: Buffer, maxDepth: number, block: number): string => scanPieces(bytes, { maxDepth }, block);

/** The deepest nesting of arrays and objects in JSON text (brackets in strings ignored). */
function textDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      for (i++; text[i] !== '"'; i++) if (text[i] === '\\') i++;
    } else if (c === '[' || c === '{') deepest = Math.max(deepest, ++depth);
    else if (c === ']' || c === '}') depth--;
  }
  return deepest;
}

const nestedArray = (levels: number, inner = '1'): string => '['.repeat(levels) + inner + ']'.repeat(levels);
const nestedObject = (levels: number): string => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);

/** Valid bodies nested a little deeper than the small limits drawn below, some with deep chains spliced in. */
const bodies = fc
  .tuple(
    fc.record(
      { ChangeSequence: fc.integer(), Extra: fc.jsonValue({ maxDepth: 4 }), [member]: fc.oneof(fc.array(fc.jsonValue({ maxDepth: 4 }), { maxLength: 5 }), fc.jsonValue({ maxDepth: 4 })) },
      { requiredKeys: [] },
    ),
    fc.constantFrom(undefined, 1),
    fc.option(fc.tuple(fc.integer({ min: 1, max: 9 }), fc.boolean()), { nil: null }),
  )
  .map(([value, indent, chain]) => {
    let text = JSON.stringify(value, null, indent);
    if (chain) {
      // A chain of arrays or objects as one more member, or in place of the first item.
      const deep = chain[1] ? nestedArray(chain[0]) : nestedObject(chain[0]);
      const items = text.indexOf(`"${member}":[`);
      if (items >= 0 && chain[0] % 2 === 0) {
        const at = items + member.length + 4;
        text = `${text.slice(0, at)}${deep}${text[at] === ']' ? '' : ','}${text.slice(at)}`;
      } else text = text === '{}' ? `{"Deep":${deep}}` : `{"Deep":${deep},${text.slice(1)}`;
    }
    return Buffer.from(text);
  });

describe('the depth limit in the two scanners', () => {
  it('accepts a body exactly as deep as the limit and refuses one a level deeper, the same in memory and in pieces', () => {
    let accepted = 0;
    let refused = 0;
    fc.assert(
      fc.property(bodies, fc.integer({ min: 1, max: 7 }), fc.oneof(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 9, max: 300 })), (bytes, maxDepth, block) => {
        const text = bytes.toString();
        const want = whole(bytes, maxDepth);
        assert.equal(pieces(bytes, maxDepth, block), want, `${text} in pieces of ${block}, limit ${maxDepth}`);
        assert.equal(want.startsWith('ok'), textDepth(text) <= maxDepth, `${text}: ${want}, limit ${maxDepth}`);
        if (!want.startsWith('ok')) assert.match(want, /^JsonLimitError: .* is nested more than \d+ levels deep at byte \d+$/);
        if (want.startsWith('ok')) accepted++;
        else refused++;
      }),
      { numRuns: 3000 },
    );
    assert.ok(accepted > 500 && refused > 500, `drawn: ${accepted} accepted, ${refused} refused`);
  });

  it('refuses at the bracket one level too deep, naming where it is: a member, or an item and the path inside it', () => {
    const cases: [string, number, string, number][] = [
      // [body, limit, where, byte of the bracket too deep]
      ['{"a":[[1]]}', 3, '', -1],
      ['{"a":[[[1]]]}', 3, 'a[0][0]', 7],
      ['{"a":1,"ScheduledItems":[{"P":[2]}]}', 3, 'ScheduledItems[0].P', 30],
      ['{"ScheduledItems":[1, {"x": 1, "y z": [[3]]}]}', 4, 'ScheduledItems[1]["y z"][0]', 39],
      ['{"ScheduledItems":[[], [1, 2, [3]]]}', 3, 'ScheduledItems[1][2]', 30],
      ['{"d":{"a":{"b":{"c":{"e":{"f":[]}}}}}}', 6, 'd.a.b.c.e...', 30],
      ['{"ScheduledItems":{"a":[1]}}', 2, 'ScheduledItems.a', 23],
      ['{"ScheduledItems":[]}', 1, 'ScheduledItems', 18],
    ];
    for (const [text, maxDepth, where, at] of cases) {
      const bytes = Buffer.from(text);
      const want = at < 0 ? 'ok' : `JsonLimitError: ${new JsonLimitError('depth', where, maxDepth, at).message}`;
      assert.equal(whole(bytes, maxDepth).slice(0, want.length), want, text);
      for (const block of [1, 2, 5, 64]) assert.equal(pieces(bytes, maxDepth, block), whole(bytes, maxDepth), `${text} in pieces of ${block}`);
    }
  });

  it('is no limit at all unless one is set (JSON.parse reads any depth, and so do the scanners by default)', () => {
    const bytes = Buffer.from(`{"a":${nestedArray(50_000)}}`);
    assert.equal(parseLazily(bytes, member).head.a !== undefined, true);
    assert.ok(whole(bytes, Number.POSITIVE_INFINITY).startsWith('ok'));
  });
});

/** A body whose member `where` (or a field of its one item) holds arrays nested `levels` deep. */
function deepBody(where: 'member' | 'item' | 'price', levels: number): Buffer {
  const v = nestedArray(levels, '"x"');
  const price = `{"DateFrom":"2026-12-01","DateTo":"2026-12-31","TariffName":"Eat In","PriceModel":${where === 'price' ? v : '"S"'},"TaxCode":"S","TaxRate":20,"SellPrice":1.5}`;
  const item = `{"PLU":${where === 'item' ? v : '"9"'},"ItemID":"9","ItemName":"Tea","ItemType":"RECIPE","PriceUpdates":[${price}],"ScheduleUpdates":[]}`;
  return Buffer.from(`{"ChangeSequence":2,"ParentChangeSequence":1,"LocationID":7,"CurrencyIsoCode":"GBP"${where === 'member' ? `,"Extra":${v}` : ''},"ScheduledItems":[${item}]}`);
}

/** Levels above the deep value: the body (member), or the body, items and item (PLU), then price list and price. */
const ABOVE = { member: 1, item: 3, price: 5 } as const;

const readers = [
  ['in memory', (raw: Buffer, checkItems = true) => readBody(raw, { checkItems })],
  ['from a file, piece by piece', (raw: Buffer, checkItems = true) => readBodyFrom(sourceOf(raw), { checkItems, block: 4096 })],
] as const;

describe('MAX_DEPTH at receipt', () => {
  for (const [what, read] of readers) {
    for (const where of ['member', 'item', 'price'] as const) {
      it(`accepts a ${where === 'member' ? 'top-level member' : where === 'item' ? "field of an item" : "field of an item's price"} exactly MAX_DEPTH deep and refuses one a level deeper (${what})`, () => {
        const atLimit = read(deepBody(where, MAX_DEPTH - ABOVE[where]));
        assert.equal(atLimit.ok, true, JSON.stringify(atLimit.ok ? null : atLimit.error));
        // What was accepted applies: it plans without throwing.
        if (atLimit.ok) assert.equal([...planBody(atLimit).items].length, where === 'item' ? 0 : 1);
        const raw = deepBody(where, MAX_DEPTH - ABOVE[where] + 1);
        const over = read(raw);
        const field = { member: 'Extra[0][0][0][0]...', item: 'ScheduledItems[0].PLU[0][0][0]...', price: 'ScheduledItems[0].PriceUpdates[0].PriceModel[0]...' }[where];
        const at = raw.indexOf('"x"') - 1;
        assert.deepEqual(over.ok ? null : over.error, {
          id: 'too_deep',
          field,
          message: `arrays and objects nested more than ${MAX_DEPTH} levels deep (the body's own object is the first), at byte ${at}`,
        });
        // The applier reads a stored body with the same limit.
        assert.equal(read(raw, false).ok, false);
      });
    }

    it(`refuses the reviewer's bodies: members and item fields hundreds of thousands of levels deep (${what})`, () => {
      const deep = nestedArray(400_000);
      const headBomb = Buffer.from(`{"ChangeSequence":2,"ParentChangeSequence":1,"LocationID":7,${Array.from({ length: 4 }, (_, i) => `"X${i}":${deep}`).join(',')},"ScheduledItems":[]}`);
      const itemBomb = Buffer.from(`{"ChangeSequence":2,"ParentChangeSequence":1,"LocationID":7,"ScheduledItems":[{"PLU":${deep},"ItemID":${nestedObject(100_000)}}]}`);
      assert.equal(errorOf(read(headBomb)), 'too_deep X0[0][0][0][0]...');
      assert.equal(errorOf(read(itemBomb)), 'too_deep ScheduledItems[0].PLU[0][0][0]...');
    });
  }
});

function errorOf(result: ReadBodyResult): string {
  return result.ok ? 'ok' : `${result.error.id} ${result.error.field}`;
}

describe('the members other than ScheduledItems, together', () => {
  /** A body whose members other than ScheduledItems take `total` bytes, in `count` members of (nearly) equal size. */
  function members(total: number, count: number): Buffer {
    // ChangeSequence, ParentChangeSequence and LocationID take a byte each.
    const rest = total - 3;
    const sizes = Array.from({ length: count }, (_, i) => Math.floor(rest / count) + (i < rest % count ? 1 : 0));
    const pads = sizes.map((size, i) => `"Pad${i}":"${'x'.repeat(size - 2)}"`);
    return Buffer.from(`{"ChangeSequence":2,"ParentChangeSequence":1,"LocationID":7,${pads.join(',')},"ScheduledItems":[]}`);
  }

  for (const [what, read] of readers) {
    for (const count of [1, 2, 10]) {
      it(`take at most MAX_MEMBER_BYTES, in ${count} member${count > 1 ? 's' : ''}: at the limit accepted, a byte over it refused naming the member that passes it (${what})`, () => {
        const at = read(members(MAX_MEMBER_BYTES, count));
        assert.ok(at.ok, JSON.stringify(at.ok ? null : at.error));
        const over = read(members(MAX_MEMBER_BYTES + 1, count));
        assert.deepEqual(over.ok ? null : over.error, {
          id: 'member_too_large',
          field: `Pad${count - 1}`,
          message: `the members other than ScheduledItems take more than the ${MAX_MEMBER_BYTES} bytes they may take together`,
        });
      });
    }

    it(`refuses ten members of half the limit each (the reviewer's body, nested within MAX_DEPTH) at the second (${what})`, () => {
      const wide = `[${new Array(Math.floor(MAX_MEMBER_BYTES / 16)).fill('[[[1]]]').join(',')}]`;
      const raw = Buffer.from(`{"ChangeSequence":2,"ParentChangeSequence":1,"LocationID":7,${Array.from({ length: 10 }, (_, i) => `"X${i}":${wide}`).join(',')},"ScheduledItems":[]}`);
      assert.equal(errorOf(read(raw)), 'member_too_large X1');
    });
  }
});

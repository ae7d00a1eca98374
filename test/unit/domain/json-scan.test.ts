import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseOutcome } from '../../helpers/parse-outcome';
import { parseLazily, scanObject } from '../../../src/domain/json-scan';

/** What the lazy reader gives, put back together: equal to JSON.parse's result when both succeed. */
function whole(bytes: Buffer, member: string): unknown {
  const lazy = parseLazily(bytes, member);
  const out: Record<string, unknown> = { ...lazy.head };
  if (lazy.elements) out[member] = lazy.elements.map((s) => lazy.element(s));
  // Key order is not compared (a repeated key moves in JSON.parse's object but not here).
  return out;
}

function reference(bytes: Buffer): unknown {
  const parsed = JSON.parse(bytes.toString('utf8')) as unknown;
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new SyntaxError('not an object');
  return parsed;
}

const member = 'ScheduledItems';
const objectWithItems = fc.record(
  {
    ChangeSequence: fc.integer(),
    LocationID: fc.oneof(fc.integer(), fc.string()),
    [member]: fc.oneof(fc.array(fc.jsonValue(), { maxLength: 8 }), fc.jsonValue()),
    extra: fc.jsonValue(),
  },
  { requiredKeys: [] },
);

describe('lazy JSON body reader', () => {
  it('gives exactly what JSON.parse gives for any object, however it is spaced', () => {
    fc.assert(
      fc.property(objectWithItems, fc.constantFrom(undefined, 1, 2, '\t'), (value, indent) => {
        const bytes = Buffer.from(JSON.stringify(value, null, indent));
        assert.deepEqual(whole(bytes, member), reference(bytes));
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses exactly what JSON.parse refuses (random edits of valid bodies, and random text)', () => {
    let refused = 0;
    let accepted = 0;
    const edited = fc
      .tuple(objectWithItems, fc.nat(), fc.constantFrom('', ',', ']', '}', '[', '{', '"', ':', 'tru', '1e', '-', ' ', '\\', '\u0001', 'null', '0x1'))
      .map(([value, at, insert]) => {
        const text = JSON.stringify(value);
        const i = at % (text.length + 1);
        return Buffer.from(text.slice(0, i) + insert + text.slice(i + (insert === '' ? 1 : 0)));
      });
    fc.assert(
      fc.property(fc.oneof(edited, fc.string().map((s) => Buffer.from(s))), (bytes) => {
        const want = parseOutcome(() => reference(bytes));
        const got = parseOutcome(() => whole(bytes, member));
        assert.equal(got.ok, want.ok, `${bytes.toString()} : JSON.parse ${want.ok ? 'accepts' : 'refuses'}`);
        if (got.ok && want.ok) assert.deepEqual(got.value, want.value);
        if (want.ok) accepted++;
        else refused++;
      }),
      { numRuns: 5000 },
    );
    assert.ok(refused > 1000 && accepted > 500, `both branches drawn often: ${refused} refused, ${accepted} accepted`);
  });

  it('skips a UTF-8 byte-order mark, keeps a repeated key last, and finds element spans', () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(' {"a": 1, "ScheduledItems": [ {"x":"]"} , 2 ], "a": 3}\n')]);
    const lazy = parseLazily(bytes, member);
    assert.deepEqual(lazy.head, { a: 3 });
    assert.deepEqual(lazy.elements!.map((s) => lazy.element(s)), [{ x: ']' }, 2]);
    const scanned = scanObject(bytes, member, (s) => JSON.parse(bytes.toString('utf8', s.start, s.end)) as string);
    assert.equal(scanned.elements!.length, 2);
    assert.throws(() => parseLazily(Buffer.from('[1, 2]'), member), SyntaxError);
    assert.throws(() => parseLazily(Buffer.from('{"a": 1} x'), member), /after the JSON object/);
  });
});

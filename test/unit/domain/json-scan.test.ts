import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { referenceJsonParse } from '../../helpers/json-reference';
import { parseOutcome } from '../../helpers/parse-outcome';
import { JsonNumber, largestNameShapeGroup, MAX_NAMES_PER_SHAPE, parseExact, parseLazily, scanObject } from '../../../src/domain/json-scan';

/** parseExact's result with each JsonNumber as the number JSON.parse gives. */
function asParsed(value: unknown): unknown {
  if (value instanceof JsonNumber) return Number(value.source);
  if (Array.isArray(value)) return value.map(asParsed);
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) Object.defineProperty(out, k, { value: asParsed(v), enumerable: true, writable: true, configurable: true });
    return out;
  }
  return value;
}

/** What the lazy reader gives, put back together: equal to JSON.parse's result when both succeed. */
function whole(bytes: Buffer, member: string): unknown {
  const lazy = parseLazily(bytes, member);
  const out: Record<string, unknown> = { ...lazy.head };
  if (lazy.elements) out[member] = lazy.elements.map((s) => lazy.element(s));
  // Key order is not compared (a repeated key moves in JSON.parse's object but not here).
  return out;
}

function reference(bytes: Buffer): unknown {
  const parsed = referenceJsonParse(bytes.toString('utf8'));
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

  it('reads member names compared in place as JSON.parse reads them: same length and first character, escapes, empty, unicode', () => {
    // Names met before are matched in the text by length and first character (readKey); each of these
    // shares that shape with another, and some spell a known name with escapes.
    const names = ['DateFrom', 'DateTo', 'DateFrum', 'Dxxxxxxx', '', 'é', 'ü', '\\u00e9', 'Date\\u0046rom', '__proto__', 'a\\"b', 'a\\\\', '\\ud83d\\ude00', '😀'];
    for (let round = 0; round < 3; round++) {
      for (const name of names) {
        const text = `{"${name}": 1, "k${name}": "v", "${name}x": [{"${name}": null}]}`;
        assert.deepEqual(asParsed(parseExact(text)), referenceJsonParse(text), text);
        assert.deepEqual(Object.keys(parseExact(text) as object), Object.keys(referenceJsonParse(text) as object), text);
      }
    }
  });

  it('reads the next name right whatever name followed the same name last time (the guess is only a hint)', () => {
    // Each text first teaches "after a, b" (and what comes first), then breaks the guess: a longer
    // name that starts with it, a shorter one it starts with, the same name spelt with escapes, a name
    // with an escaped quote right after the guessed text, a missing colon, whitespace before the name.
    const teach = '{"a": 1, "b": 2, "c": 3}';
    const breakers = [
      '{"a": 1, "bb": 2}',
      '{"a": 1, "": 2}',
      '{"a": 1, "\\u0062": 2}',
      '{"a": 1, "b\\"": 2}',
      '{"a": 1, "b\\\\": 2}',
      '{"a": 1, "b" 2}',
      '{"a": 1,\n\t "b"\n:\n2}',
      '{"a": 1, "b": 2, "b": 3}',
      '{"b": 1, "a": 2}',
      '{"a": 1, "b',
      '{"\\u0000{": 1, "a": 2}',
    ];
    for (const text of breakers) {
      for (let round = 0; round < 2; round++) {
        parseExact(teach);
        const want = parseOutcome(() => referenceJsonParse(text));
        const got = parseOutcome(() => parseExact(text));
        assert.equal(got.ok, want.ok, `${text}: JSON.parse ${want.ok ? 'accepts' : 'refuses'}`);
        if (got.ok && want.ok) {
          assert.deepEqual(asParsed(got.value), want.value, text);
          assert.deepEqual(Object.keys(got.value as object), Object.keys(want.value as object), text);
        }
      }
    }
  });

  it('reads a name with an escape right after a document with a similar name (where Node 24\'s JSON.parse does not)', (t) => {
    const earlier = String.raw`{"ab":1,"a\\":1}`;
    const later = String.raw`{"ab":1,"a\"":2}`;
    for (const parse of [parseExact, referenceJsonParse]) {
      parse(earlier);
      assert.deepEqual(Object.keys(parse(later) as object), ['ab', 'a"'], parse.name);
    }
    // The bug the reference works around (seen on Node 24.21, V8 13.6; not on Node 20), for the record.
    JSON.parse(earlier);
    t.diagnostic(`this Node's JSON.parse names it ${JSON.stringify(Object.keys(JSON.parse(later) as object)[1])}`);
  });

  it('compares a name in place against a bounded few: thousands of names of one length and first character still read right', () => {
    // A crafted body: 3,000 distinct names of length 6 starting with "Z", each used twice, in objects
    // nested in an array, then every name again in a second pass (now known or past the limit).
    const names = Array.from({ length: 3000 }, (_, i) => `Z${String(i).padStart(5, '0')}`);
    const text = `[${names.map((n, i) => `{"${n}": ${i}, "x": {"${n}": "${n}"}}`).join(',')}]`;
    for (let pass = 0; pass < 2; pass++) {
      const ours = parseExact(text) as Record<string, unknown>[];
      assert.deepEqual(asParsed(ours), referenceJsonParse(text));
      // The names are canonical strings all the same (the second pass reads the ones past the limit too).
      assert.deepEqual(ours.map((o) => Object.keys(o)[0]), names);
    }
    assert.ok(largestNameShapeGroup() <= MAX_NAMES_PER_SHAPE, `a group of ${largestNameShapeGroup()} names`);
    assert.equal(largestNameShapeGroup(), MAX_NAMES_PER_SHAPE, 'the crafted names filled their group to the limit');
  });
});

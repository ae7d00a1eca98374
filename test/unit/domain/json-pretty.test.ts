import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { prettyJson } from '../../../src/domain/json-pretty';
import { bodyLines, diffHunks, diffLines } from '../../../src/domain/line-diff';

/** Number and string tokens of JSON text, in order (whitespace and punctuation dropped). */
function tokens(text: string): { numbers: string[]; strings: string[] } {
  const numbers: string[] = [];
  const strings: string[] = [];
  for (const m of text.matchAll(/"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g)) {
    if (m[0].startsWith('"')) strings.push(m[0]);
    else numbers.push(m[0]);
  }
  return { numbers, strings };
}

const space = fc.stringMatching(/^[ \t\n\r]{0,3}$/);

/** Number tokens as JSON allows them to be written, not only as a double prints. */
const numberText = fc.oneof(
  fc.stringMatching(/^-?(0|[1-9]\d{0,24})(\.\d{1,6})?([eE][+-]?\d{1,3})?$/),
  fc.constantFrom('11.50', '24.00', '-0', '0.0', '1e400', '-1E-400', '12345678901234567890', '100000000000000000001', '1E+2'),
);

/** String tokens with escapes, as written by hand or by another serialiser. */
const stringText = fc
  .array(
    fc.oneof(
      // Any characters a JSON string may hold unescaped (no quote, backslash or control character).
      fc.string({ maxLength: 3, unit: 'binary' }).map((s) => [...s].filter((c) => c !== '"' && c !== '\\' && c.charCodeAt(0) >= 0x20).join('')),
      fc.constantFrom('\\"', '\\\\', '\\/', '\\n', '\\t', '\\u00e9', '\\uD83D\\uDE00', '{', '}', '[', ']', ',', ':', ' '),
    ),
    { maxLength: 5 },
  )
  .map((parts) => `"${parts.join('')}"`);

/** Any JSON text, whitespace between every token. */
const { json: jsonText } = fc.letrec<{ json: string; value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    numberText,
    stringText,
    fc.constantFrom('true', 'false', 'null'),
    fc.tuple(fc.array(fc.tuple(space, tie('value'), space), { maxLength: 4 }), space).map(([els, s]) => (els.length ? `[${els.map((e) => e.join('')).join(',')}]` : `[${s}]`)),
    fc
      .tuple(fc.array(fc.tuple(space, stringText, space, space, tie('value'), space), { maxLength: 4 }), space)
      .map(([ms, s]) => (ms.length ? `{${ms.map(([a, k, b, c, v, d]) => `${a}${k}${b}:${c}${v}${d}`).join(',')}}` : `{${s}}`)),
  ),
  json: fc.tuple(space, tie('value'), space).map((parts) => parts.join('')),
}));

describe('JSON pretty-printing that keeps the text of every value', () => {
  it('parses to the same value as its input, with the same number and string tokens in the same order', () => {
    fc.assert(
      fc.property(jsonText, (text) => {
        const pretty = prettyJson(text);
        assert.notEqual(pretty, null, text);
        // deepStrictEqual compares primitives with Object.is: -0 stays -0.
        assert.deepStrictEqual(JSON.parse(pretty!), JSON.parse(text));
        assert.deepEqual(tokens(pretty!), tokens(text));
        assert.equal(prettyJson(pretty!), pretty, 'printing again changes nothing');
      }),
      { numRuns: 500 },
    );
  });

  it('lays out as JSON.stringify(value, null, 2) does when the text is as JSON.stringify writes it', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        assert.equal(prettyJson(JSON.stringify(value)), JSON.stringify(value, null, 2));
      }),
      { numRuns: 300 },
    );
  });

  it('keeps prices, long integers, exponents and negative zero as written', () => {
    const text = '{"SellPrice":11.50,"Other":24.00,"PLU":12345678901234567890,"Huge":1e400,"Zero":-0,"E":1E+2,"S":"a\\u00e9\\"b","Empty":{ },"None":[ ]}';
    assert.equal(
      prettyJson(text),
      [
        '{',
        '  "SellPrice": 11.50,',
        '  "Other": 24.00,',
        '  "PLU": 12345678901234567890,',
        '  "Huge": 1e400,',
        '  "Zero": -0,',
        '  "E": 1E+2,',
        '  "S": "a\\u00e9\\"b",',
        '  "Empty": {},',
        '  "None": []',
        '}',
      ].join('\n'),
    );
  });

  it('gives null for text that is not JSON, so the caller shows it as it is', () => {
    for (const text of ['', 'not json', '{"a":1', '{"a":1,}', '[01]', "{'a':1}", '{"a":1} x', '\uFEFF{}', 'NaN', '"\u0001"']) {
      assert.equal(prettyJson(text), null, JSON.stringify(text));
    }
    assert.deepEqual(bodyLines('not json\r\nat all'), ['not json', 'at all']);
  });

  it('shows two bodies that differ only in the digits of a long number as differing', () => {
    const first = '{"ChangeSequence":7,"ScheduledItems":[{"PLU":12345678901234567890,"SellPrice":11.50}]}';
    const later = '{"ChangeSequence":7,"ScheduledItems":[{"PLU":12345678901234567891,"SellPrice":11.50}]}';
    const changed = diffHunks(diffLines(bodyLines(first), bodyLines(later))).filter((l) => l.kind === 'removed' || l.kind === 'added');
    assert.deepEqual(changed, [
      { kind: 'removed', text: '      "PLU": 12345678901234567890,' },
      { kind: 'added', text: '      "PLU": 12345678901234567891,' },
    ]);
    assert.ok(bodyLines(first).includes('      "SellPrice": 11.50'));
  });
});

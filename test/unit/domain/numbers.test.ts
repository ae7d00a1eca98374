import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { referenceJsonParse } from '../../helpers/json-reference';
import { parseOutcome } from '../../helpers/parse-outcome';
import { JsonNumber, parseExact } from '../../../src/domain/json-scan';
import { formatMinor, parseSellPrice } from '../../../src/domain/money';
import { plainDecimal, wholeNumberDigits } from '../../../src/domain/numbers';
import { readTaxRate } from '../../../src/domain/tax-rate';
import { parseEnvelope, planUpdate } from '../../../src/domain/payload';

/** parseExact's result with every JsonNumber read as JSON.parse would read it. */
function asJsonParse(value: unknown): unknown {
  if (value instanceof JsonNumber) return Number(value.source);
  if (Array.isArray(value)) return value.map(asJsonParse);
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, asJsonParse(v)]));
  return value;
}

/** An exact rational as (integer, power of ten to divide by), for comparing decimals without floats. */
function rational(text: string): { n: bigint; scale: number } {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  assert.ok(m, text);
  const fraction = m[3] ?? '';
  const n = BigInt(`${m[1]}${m[2]}${fraction}`);
  return { n, scale: fraction.length - Number(m[4] ?? 0) };
}

function sameRational(a: string, b: string): boolean {
  const x = rational(a);
  const y = rational(b);
  const scale = Math.max(x.scale, y.scale);
  return x.n * 10n ** BigInt(scale - x.scale) === y.n * 10n ** BigInt(scale - y.scale);
}

describe('parseExact: JSON.parse with numbers kept as their source text', () => {
  it('gives what JSON.parse gives for any JSON value, numbers aside, and keeps each number\'s text', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom(undefined, 2, '\t'), (value, indent) => {
        const text = JSON.stringify(value, null, indent);
        assert.deepEqual(asJsonParse(parseExact(text)), referenceJsonParse(text));
      }),
      { numRuns: 2000 },
    );
    const parsed = parseExact('{"p": 11.499999999999999999, "id": 12345678901234567890, "e": -1.5E+3, "s": "a\\"\\u00e9"}') as Record<string, unknown>;
    assert.deepEqual(parsed, { p: new JsonNumber('11.499999999999999999'), id: new JsonNumber('12345678901234567890'), e: new JsonNumber('-1.5E+3'), s: 'a"é' });
  });

  it('refuses exactly what JSON.parse refuses (random edits of valid text, and random text)', () => {
    let refused = 0;
    let accepted = 0;
    const edited = fc
      .tuple(fc.jsonValue(), fc.nat(), fc.constantFrom('', ',', ']', '}', '[', '{', '"', ':', 'tru', '1e', '-', '01', '1.', '.5', '+1', ' ', '\\', '\\u12', '\u0001', 'null', '0x1', 'NaN', '1e+'))
      .map(([value, at, insert]) => {
        const text = JSON.stringify(value);
        const i = at % (text.length + 1);
        return text.slice(0, i) + insert + text.slice(i + (insert === '' ? 1 : 0));
      });
    fc.assert(
      fc.property(fc.oneof(edited, fc.string()), (text) => {
        const want = parseOutcome(() => referenceJsonParse(text));
        const got = parseOutcome(() => parseExact(text));
        assert.equal(got.ok, want.ok, `${text} : JSON.parse ${want.ok ? 'accepts' : 'refuses'}`);
        if (got.ok && want.ok) assert.deepEqual(asJsonParse(got.value), want.value);
        if (want.ok) accepted++;
        else refused++;
      }),
      { numRuns: 5000 },
    );
    assert.ok(refused > 1000 && accepted > 500, `both branches drawn often: ${refused} refused, ${accepted} accepted`);
  });

  it('keeps every number\'s text exactly as written, in every form the grammar allows', () => {
    // -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?, every optional part drawn often, inside arrays and objects.
    const numberText = fc
      .tuple(fc.boolean(), fc.oneof(fc.constant('0'), fc.stringMatching(/^[1-9]\d{0,30}$/)), fc.option(fc.stringMatching(/^\d{1,30}$/)), fc.option(fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), fc.stringMatching(/^\d{1,4}$/))))
      .map(([neg, whole, fraction, exponent]) => `${neg ? '-' : ''}${whole}${fraction === null ? '' : `.${fraction}`}${exponent === null ? '' : exponent.join('')}`);
    let withExponent = 0;
    let withFraction = 0;
    fc.assert(
      fc.property(fc.array(numberText, { minLength: 1, maxLength: 8 }), fc.constantFrom('', ' ', '\n\t'), (texts, space) => {
        const inArray = parseExact(`[${space}${texts.join(`${space},${space}`)}${space}]`) as JsonNumber[];
        assert.deepEqual(inArray.map((n) => n.source), texts);
        const inObject = parseExact(`{${texts.map((t, i) => `"k${i}"${space}:${space}${t}`).join(',')}}`) as Record<string, JsonNumber>;
        assert.deepEqual(Object.values(inObject).map((n) => n.source), texts);
        for (const t of texts) {
          if (/[eE]/.test(t)) withExponent++;
          if (t.includes('.')) withFraction++;
        }
      }),
      { numRuns: 2000 },
    );
    assert.ok(withExponent > 1000 && withFraction > 1000, `forms drawn often: ${withExponent} with an exponent, ${withFraction} with a fraction`);
  });

  it('reads deep nesting without overflowing the stack, and keeps __proto__ as an own member', () => {
    const depth = 200_000;
    const deep = parseExact(`${'['.repeat(depth)}1${']'.repeat(depth)}`);
    let level = 0;
    for (let v: unknown = deep; Array.isArray(v); v = v[0]) level++;
    assert.equal(level, depth);
    const withProto = parseExact('{"__proto__": {"x": 1}}') as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(withProto), Object.prototype);
    assert.deepEqual(Object.keys(withProto), ['__proto__']);
  });
});

describe('numbers read from their text', () => {
  it('plainDecimal moves digits exactly, whatever the exponent', () => {
    const decimal = fc
      .tuple(fc.boolean(), fc.stringMatching(/^(0|[1-9]\d{0,25})$/), fc.option(fc.stringMatching(/^\d{1,25}$/)), fc.option(fc.integer({ min: -40, max: 40 })))
      .map(([neg, whole, fraction, exponent]) => `${neg ? '-' : ''}${whole}${fraction === null ? '' : `.${fraction}`}${exponent === null ? '' : `e${exponent}`}`);
    fc.assert(
      fc.property(decimal, (text) => {
        const plain = plainDecimal(text);
        assert.ok(plain !== null && /^-?(0|[1-9]\d*)(\.\d*[1-9])?$/.test(plain), `${text} -> ${plain}`);
        assert.ok(sameRational(plain, text), `${text} -> ${plain}`);
        assert.notEqual(plain, '-0');
      }),
      { numRuns: 3000 },
    );
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (d) => {
        assert.equal(Number(plainDecimal(String(d))), d === 0 ? 0 : d);
      }),
    );
    assert.equal(plainDecimal('1e401'), null);
    assert.equal(plainDecimal('1.5.5'), null);
  });

  it('identifiers keep every digit; integers are refused rather than rounded', () => {
    assert.equal(wholeNumberDigits(new JsonNumber('12345678901234567890')), '12345678901234567890');
    assert.equal(wholeNumberDigits(new JsonNumber('1001.0')), '1001');
    assert.equal(wholeNumberDigits(new JsonNumber('1.5')), null);
    assert.equal(wholeNumberDigits(new JsonNumber('-1')), null);
    assert.equal(wholeNumberDigits(2 ** 64), null, 'a JS number past 2^53 has lost its digits already');
    assert.equal(wholeNumberDigits(1001), '1001');
    assert.deepEqual(readTaxRate(new JsonNumber('20')), { ok: true, rate: 20 });
    assert.equal(readTaxRate(new JsonNumber('20.000000000000000001')).ok, false);
    assert.equal(readTaxRate(new JsonNumber('9007199254740993')).ok, false);
  });

  it('any amount of minor units below 2^53 is read back exactly from its text as a number; one more decimal is refused', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), fc.constantFrom(['GBP', 2], ['JPY', 0], ['KWD', 3]), (minor, [currency, digits]) => {
        const text = formatMinor(minor, digits);
        const read = parseSellPrice(new JsonNumber(text), currency);
        assert.ok(read.ok && read.money.minor === minor && read.money.text === text, `${text} ${currency}`);
        const tooPrecise = parseSellPrice(new JsonNumber(`${text}${digits === 0 ? '.' : ''}1`), currency);
        assert.ok(!tooPrecise.ok && tooPrecise.reason.includes(`more decimals than ${currency} allows`));
      }),
      { numRuns: 2000 },
    );
  });

  it('parseEnvelope reads the same way: identifiers beyond 2^53 as digits, LocationID past 2^53 refused with a clear reason', () => {
    const parsed = parseEnvelope('{"LocationID": 1, "ChangeSequence": 2, "ParentChangeSequence": 1, "CurrencyIsoCode": "GBP", "ScheduledItems": [{"ItemID": 12345678901234567890, "PLU": 1001, "ItemType": "RECIPE", "ItemName": "A"}]}');
    assert.ok(parsed.ok);
    const plan = planUpdate(parsed.envelope, parsed.body);
    assert.deepEqual(plan.items.map((i) => [i.itemId, i.plu]), [['12345678901234567890', '1001']]);
    const tooBig = parseEnvelope('{"LocationID": 9007199254740993, "ChangeSequence": 2, "ParentChangeSequence": 1, "ScheduledItems": []}');
    assert.ok(!tooBig.ok);
    assert.deepEqual([tooBig.error.id, tooBig.error.field, tooBig.error.message], ['invalid_envelope', 'LocationID', 'integer too large']);
    const fraction = parseEnvelope('{"LocationID": 1.5, "ChangeSequence": 2, "ParentChangeSequence": 1, "ScheduledItems": []}');
    assert.ok(!fraction.ok && fraction.error.field === 'LocationID');
  });
});

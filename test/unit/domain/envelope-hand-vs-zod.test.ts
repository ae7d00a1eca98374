import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inspect } from 'node:util';
import fc from 'fast-check';
import { z } from 'zod';
import { JsonNumber, parseExact } from '../../../src/domain/json-scan';
import { wholeNumberDigits } from '../../../src/domain/numbers';
import { parseEnvelope, validateEnvelope, type Envelope, type EnvelopeResult } from '../../../src/domain/payload';

/**
 * src/domain/payload.ts checks the webhook envelope by hand since zod left it (zod cost each worker
 * thread that loads payload.ts about 13 MB). The zod schema and the validateEnvelope that read it are
 * kept below exactly as they were, and both are run on the same bodies: every body, built from JSON
 * text the way the agent reads it (parseExact) or handed over as an object, gives the same result,
 * down to which envelope keys are present, -0, and the first error's id, field and message.
 */

// The replaced code, unchanged (the oracle).

function oldEnvelopeNumber(value: unknown): unknown {
  if (!(value instanceof JsonNumber)) return value;
  const digits = wholeNumberDigits(value);
  if (digits === null) return value.source;
  const n = Number(digits);
  return Number.isSafeInteger(n) ? n : digits;
}

const oldIntegerLike = z.preprocess(oldEnvelopeNumber, z.union([
  z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  z
    .string()
    .trim()
    .regex(/^\d+$/, 'expected an integer')
    .transform((s) => Number(s))
    .refine((n) => Number.isSafeInteger(n), 'integer too large'),
], { error: 'expected an integer (number or string of digits)' }));

const OldEnvelopeSchema = z
  .object({
    LocationID: oldIntegerLike,
    ChangeSequence: oldIntegerLike,
    ParentChangeSequence: oldIntegerLike,
    LocationName: z.string().optional().catch(undefined),
    CurrencyIsoCode: z.string().optional().catch(undefined),
    ScheduledItems: z.array(z.unknown(), { error: 'expected an array' }),
  })
  .refine((e) => e.ChangeSequence > e.ParentChangeSequence, {
    path: ['ChangeSequence'],
    message: 'must be greater than ParentChangeSequence',
  });

function oldValidateEnvelope(body: unknown): EnvelopeResult {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: false, error: { id: 'invalid_json', field: '(body)', message: 'expected a JSON object' } };
  }
  const parsed = OldEnvelopeSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue && issue.path.length > 0 ? issue.path.join('.') : '(body)';
    const present = issue && issue.path.length > 0 && (body as Record<string, unknown>)[String(issue.path[0])] !== undefined;
    const message = present ? (issue?.message ?? 'invalid') : 'is required';
    return { ok: false, error: { id: field === '(body)' ? 'invalid_json' : 'invalid_envelope', field, message } };
  }
  return { ok: true, envelope: parsed.data, body: body as Record<string, unknown> };
}

/** The hand-written Envelope is the type zod inferred, not merely a compatible one (checked by tsc). */
type Exactly<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const envelopeTypeUnchanged: Exactly<Envelope, z.infer<typeof OldEnvelopeSchema>> = true;

// What is sent.

const NOT_AN_INTEGER = 'expected an integer (number or string of digits)';
const MAX_SAFE = String(Number.MAX_SAFE_INTEGER);

/**
 * One member value: the edges it stands for, its JSON text (null for values JSON cannot write: they
 * are only handed over in objects), and a maker of the value itself (a fresh one per body).
 */
interface Sent {
  readonly edges: readonly string[];
  readonly json: string | null;
  make(): unknown;
  /** The key is left out of the body. */
  readonly absent?: true;
}

const fromJson = (edge: string, json: string): Sent => ({ edges: [edge], json, make: () => parseExact(json) });
const fromCode = (edge: string, make: () => unknown): Sent => ({ edges: [edge], json: null, make });
const jsonCases = (edge: string, ...texts: string[]): fc.Arbitrary<Sent> => fc.constantFrom(...texts).map((t) => fromJson(edge, t));
const codeCases = (edge: string, ...values: unknown[]): fc.Arbitrary<Sent> => fc.constantFrom(...values).map((v) => fromCode(edge, () => v));

/** A whole number (its digits) written as a JSON number or a JSON string, in one of the forms a sender may use. */
function wholeForms(d: string): { edge: string; json: string }[] {
  const forms = [
    { edge: 'number: whole', json: d },
    { edge: 'number: decimal point (10.0)', json: `${d}.0` },
    { edge: 'number: exponent (1e0, 1E+0)', json: `${d}e0` },
    { edge: 'number: exponent (1e0, 1E+0)', json: `${d}E+0` },
    { edge: 'string: digits', json: `"${d}"` },
    { edge: 'string: digits with spaces around', json: `" ${d} "` },
    { edge: 'string: digits with spaces around', json: `"\\t${d}\\n"` },
    { edge: 'string: digits with spaces around', json: `"\\u00a0${d}\\u2028"` },
    { edge: 'string: leading zeros', json: `"00${d}"` },
  ];
  if (d !== '0') forms.push({ edge: 'number: exponent (1e3, 10e-1)', json: `${d}0e-1` });
  if (d.length > 1) forms.push({ edge: 'number: exponent (1e3, 10e-1)', json: `${d[0]}.${d.slice(1)}E+${d.length - 1}` });
  return forms;
}

/** Small values often, so ChangeSequence and ParentChangeSequence are often equal, less or greater. */
const wholeDigits = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 0, max: 3 }).map((n) => ({ size: n === 0 ? 'zero' : 'small', digits: String(n) })) },
  { weight: 2, arbitrary: fc.nat().map((n) => ({ size: 'nat', digits: String(n) })) },
  { weight: 1, arbitrary: fc.constant({ size: 'MAX_SAFE_INTEGER', digits: MAX_SAFE }) },
  { weight: 1, arbitrary: fc.constantFrom('9007199254740992', '9007199254740993').map((digits) => ({ size: 'MAX_SAFE_INTEGER + 1 or 2', digits })) },
  { weight: 1, arbitrary: fc.bigInt({ min: 10n ** 16n, max: 10n ** 40n }).map((n) => ({ size: 'huge', digits: String(n) })) },
);

const wholeWritten: fc.Arbitrary<Sent> = fc.tuple(wholeDigits, fc.nat()).map(([{ size, digits }, pick]) => {
  const forms = wholeForms(digits);
  const form = forms[pick % forms.length]!;
  return { edges: [form.edge, `value: ${size}`], json: form.json, make: () => parseExact(form.json) };
});

/** Whole numbers in exponent forms written the way people write them. */
const exponentWritten = jsonCases('number: exponent as written (1e3, 1E+3, 10.0)', '1e3', '1E+3', '10.0', '1.5e1', '2.50E1', '1e15', '9.007199254740991e15', '9.007199254740992e15');

/** Everything else JSON can send for an integer field. */
const notWholeJson = fc.oneof(
  jsonCases('null', 'null'),
  jsonCases('boolean', 'true', 'false'),
  jsonCases('object', '{}', '{"LocationID":1}'),
  jsonCases('array', '[]', '[1]', '["1"]'),
  jsonCases('string: empty or spaces', '""', '"  "'),
  jsonCases('string: not digits', '"abc"', '"12a"', '"0x10"', '"Infinity"', '"\u0661\u0662"', '"1_000"', '"1 000"', '"+1"'),
  jsonCases('string: negative', '"-1"', '"-0"', '" -5 "'),
  jsonCases('string: decimal point', '"1.0"', '"1.5"', '"10."', '".5"'),
  jsonCases('string: exponent', '"1e3"', '"1E+3"'),
  jsonCases('number: minus zero', '-0', '-0.0', '-0e5'),
  jsonCases('number: negative', '-1', '-9007199254740993', '-1e3', '-0.5'),
  jsonCases('number: fraction', '1.5', '0.1', '1e-3', '15e-1', '1e-400'),
  jsonCases('number: huge', '1e400', '1E+400', '123456789012345678901234567890'),
);

/** Values only code can hand over: JS numbers of every kind, undefined, and odd JsonNumbers. */
const integerFromCode = fc.oneof(
  fc.integer({ min: 0, max: 3 }).map((n) => fromCode('js number: whole', () => n)),
  codeCases('js number: whole', Number.MAX_SAFE_INTEGER, 1000),
  codeCases('js number: minus zero', -0),
  fc.integer({ min: -1000, max: -1 }).map((n) => fromCode('js number: negative', () => n)),
  codeCases('js number: negative', -Number.MAX_SAFE_INTEGER),
  codeCases('js number: fraction', 1.5, -1.5, 0.1, Number.EPSILON),
  codeCases('js number: unsafe', 2 ** 53, 1e20, Number.MAX_VALUE, -(2 ** 53), -1e20),
  codeCases('js number: not finite', Number.NaN, Infinity, -Infinity),
  codeCases('undefined', undefined),
  codeCases('bigint', 1n),
  fc.constantFrom('0123', ' 7', 'abc', '').map((s) => fromCode('JsonNumber built in code', () => new JsonNumber(s))),
);

const absent = (edge: string): fc.Arbitrary<Sent> => fc.constant({ edges: [edge], json: null, make: () => undefined, absent: true });

const integerJson = fc.oneof(
  { weight: 10, arbitrary: wholeWritten },
  { weight: 1, arbitrary: exponentWritten },
  { weight: 3, arbitrary: notWholeJson },
  { weight: 1, arbitrary: absent('absent') },
);
const integerAny = fc.oneof({ weight: 7, arbitrary: integerJson }, { weight: 3, arbitrary: integerFromCode });

const textJson = fc.oneof(
  { weight: 2, arbitrary: absent('text field: absent') },
  { weight: 3, arbitrary: jsonCases('text field: text', '"GBP"', '""', '" The Strand "', '"\\u00e9"') },
  { weight: 2, arbitrary: jsonCases('text field: not text', 'null', '5', '1.5', 'true', '{}', '[]', '["GBP"]') },
);
const textAny = fc.oneof(
  { weight: 4, arbitrary: textJson },
  { weight: 1, arbitrary: fc.oneof(codeCases('text field: undefined', undefined), codeCases('text field: not text', 5, Symbol('x'))) },
);

const itemsJson = fc.oneof(
  { weight: 1, arbitrary: absent('items: absent') },
  { weight: 8, arbitrary: jsonCases('items: array', '[]', '[{"ItemID":1}]', '[null,1,"x",[]]') },
  { weight: 2, arbitrary: jsonCases('items: not an array', 'null', '{}', '"x"', '0', 'true', '{"0":1,"length":1}') },
);
const itemsAny = fc.oneof(
  { weight: 4, arbitrary: itemsJson },
  { weight: 1, arbitrary: fc.constantFrom(0, 3).map((n) => fromCode('items: array with holes', () => new Array<unknown>(n))) },
  { weight: 1, arbitrary: fc.nat(4).map((n) => fromCode('items: array of nulls (as body.ts builds)', () => new Array<null>(n).fill(null))) },
  { weight: 1, arbitrary: codeCases('items: undefined', undefined) },
);

const extraKeys = ['Foo', 'locationid', 'LocationId', '__proto__', 'constructor', 'toString', 'LocationID', 'ChangeSequence', 'ScheduledItems'];
const extraMember = fc.tuple(fc.constantFrom(...extraKeys), fc.jsonValue({ maxDepth: 2 })).map(([key, value]) => ({ key, sent: fromJson('extra', JSON.stringify(value)) }));

interface Member {
  readonly key: string;
  readonly sent: Sent;
}

const envelopeKeys = ['LocationID', 'ChangeSequence', 'ParentChangeSequence', 'LocationName', 'CurrencyIsoCode', 'ScheduledItems'] as const;

/** A body's members: the six envelope keys and unknown or repeated keys, in any order. */
function membersOf(integer: fc.Arbitrary<Sent>, text: fc.Arbitrary<Sent>, items: fc.Arbitrary<Sent>): fc.Arbitrary<Member[]> {
  return fc
    .tuple(fc.tuple(integer, integer, integer, text, text, items), fc.array(extraMember, { maxLength: 3 }), fc.boolean())
    .map(([sent, extra, reversed]) => {
      // An absent key stays in the list (so it is counted) and is left out when the body is built.
      const members: Member[] = envelopeKeys.map((key, i) => ({ key, sent: sent[i]! }));
      members.push(...extra);
      return reversed ? members.reverse() : members;
    });
}

const isSent = (m: Member): boolean => m.sent.absent !== true;

interface Case {
  readonly route: string;
  readonly members: readonly Member[];
  /** The JSON text of the body, when it came as text. */
  readonly text: string | null;
  make(): unknown;
}

const textBody: fc.Arbitrary<Case> = fc.tuple(membersOf(integerJson, textJson, itemsJson), fc.constantFrom('', ' ', '\n  ')).map(([members, space]) => {
  const text = `{${space}${members.filter(isSent).map((m) => `${JSON.stringify(m.key)}:${space}${m.sent.json}`).join(`,${space}`)}${space}}`;
  return { route: 'JSON text', members, text, make: () => parseExact(text) };
});

type Prototype = 'plain' | 'inherited' | 'none';

/** An object with the members, as parseExact builds one ("__proto__" an own member), or with some inherited or no prototype. */
function objectOf(members: readonly Member[], prototype: Prototype): Record<string, unknown> {
  const proto: Record<string, unknown> = {};
  const body = (prototype === 'inherited' ? Object.create(proto) : prototype === 'none' ? Object.create(null) : {}) as Record<string, unknown>;
  members.filter(isSent).forEach((m, i) => {
    const target = prototype === 'inherited' && i % 2 === 1 ? proto : body;
    Object.defineProperty(target, m.key, { value: m.sent.make(), writable: true, enumerable: true, configurable: true });
  });
  return body;
}

const objectBody: fc.Arbitrary<Case> = fc
  .tuple(membersOf(integerAny, textAny, itemsAny), fc.constantFrom<Prototype>('plain', 'plain', 'inherited', 'none'))
  .map(([members, prototype]) => ({
    route: prototype === 'inherited' ? 'object with inherited members' : prototype === 'none' ? 'object without prototype' : 'object',
    members,
    text: null,
    make: () => objectOf(members, prototype),
  }));

const notAnObject: fc.Arbitrary<Case> = fc.oneof(
  fc.constantFrom('null', '1', '"x"', 'true', '[]', '[{"LocationID":1,"ChangeSequence":2,"ParentChangeSequence":1,"ScheduledItems":[]}]', '1e400').map((text) => ({ route: 'not a JSON object', members: [], text, make: () => parseExact(text) })),
  fc.constantFrom<unknown>(undefined, null, 0, 'x', [], [{}], 5n, Symbol('body')).map((value) => ({ route: 'not a JSON object', members: [], text: null, make: () => value })),
);

const bodyCase = fc.oneof({ weight: 5, arbitrary: textBody }, { weight: 4, arbitrary: objectBody }, { weight: 1, arbitrary: notAnObject });

/** How often each named edge was drawn, so a generator that stops reaching one fails the test. */
class Coverage {
  private readonly counts = new Map<string, number>();

  constructor(expected: readonly string[]) {
    for (const name of expected) this.counts.set(name, 0);
  }

  see(name: string): void {
    this.counts.set(name, (this.counts.get(name) ?? 0) + 1);
  }

  missing(min: number): string[] {
    return [...this.counts].filter(([, n]) => n < min).map(([name, n]) => `${name}: ${n}`);
  }
}

const EDGES = [
  ...['absent', 'null', 'boolean', 'object', 'array', 'string: empty or spaces', 'string: not digits', 'string: negative', 'string: decimal point', 'string: exponent'],
  ...['string: digits', 'string: digits with spaces around', 'string: leading zeros'],
  ...['number: whole', 'number: decimal point (10.0)', 'number: exponent (1e0, 1E+0)', 'number: exponent (1e3, 10e-1)', 'number: exponent as written (1e3, 1E+3, 10.0)', 'number: minus zero', 'number: negative', 'number: fraction', 'number: huge'],
  ...['value: zero', 'value: small', 'value: nat', 'value: MAX_SAFE_INTEGER', 'value: MAX_SAFE_INTEGER + 1 or 2', 'value: huge'],
  ...['js number: whole', 'js number: minus zero', 'js number: negative', 'js number: fraction', 'js number: unsafe', 'js number: not finite', 'undefined', 'bigint', 'JsonNumber built in code'],
  ...['text field: absent', 'text field: text', 'text field: not text', 'text field: undefined', 'extra'],
  ...['items: absent', 'items: array', 'items: not an array', 'items: array with holes', 'items: array of nulls (as body.ts builds)', 'items: undefined'],
  ...['route: JSON text', 'route: object', 'route: object with inherited members', 'route: object without prototype', 'route: not a JSON object'],
  ...['ChangeSequence = ParentChangeSequence', 'ChangeSequence < ParentChangeSequence', 'ChangeSequence > ParentChangeSequence'],
  ...['accepted', 'accepted with LocationName undefined', 'accepted with CurrencyIsoCode text', 'accepted without LocationName'],
  ...['is required', NOT_AN_INTEGER, 'integer too large', 'expected an array', 'must be greater than ParentChangeSequence', 'expected a JSON object'],
  ...['Too small: expected number to be >=0', 'Too big: expected int to be <=9007199254740991', 'Too small: expected int to be >=-9007199254740991'],
  ...['refused at LocationID', 'refused at ChangeSequence', 'refused at ParentChangeSequence', 'refused at ScheduledItems'],
];

/** The value zod made of a field, when it accepted it. */
function integerValue(value: unknown): number | null {
  const r = oldIntegerLike.safeParse(value);
  return r.success ? r.data : null;
}

function tally(coverage: Coverage, c: Case, body: unknown, want: EnvelopeResult): void {
  coverage.see(`route: ${c.route}`);
  for (const m of c.members) for (const edge of m.sent.edges) coverage.see(edge);
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
    const record = body as Record<string, unknown>;
    const sequence = integerValue(record.ChangeSequence);
    const parent = integerValue(record.ParentChangeSequence);
    if (sequence !== null && parent !== null) coverage.see(`ChangeSequence ${sequence === parent ? '=' : sequence < parent ? '<' : '>'} ParentChangeSequence`);
  }
  if (!want.ok) {
    coverage.see(want.error.message);
    coverage.see(`refused at ${want.error.field}`);
    return;
  }
  coverage.see('accepted');
  if ('LocationName' in want.envelope && want.envelope.LocationName === undefined) coverage.see('accepted with LocationName undefined');
  if (!('LocationName' in want.envelope)) coverage.see('accepted without LocationName');
  if (typeof want.envelope.CurrencyIsoCode === 'string') coverage.see('accepted with CurrencyIsoCode text');
}

function shownCase(c: Case, body: unknown): string {
  return c.text ?? `${c.route}: ${inspect(body, { depth: 3, showHidden: false })}`;
}

/** The same result in every respect a caller can see. */
function assertSame(body: unknown, what: string): void {
  const want = oldValidateEnvelope(body);
  const got = validateEnvelope(body);
  assert.deepEqual(got, want, what);
  if (got.ok && want.ok) {
    assert.deepEqual(Object.keys(got.envelope), Object.keys(want.envelope), `${what}: envelope key order`);
    assert.equal(got.body, body, what);
    const items = (body as Record<string, unknown>).ScheduledItems;
    assert.equal(got.envelope.ScheduledItems === items, want.envelope.ScheduledItems === items, `${what}: the envelope's items are its own array`);
  }
}

describe('envelope checked by hand, compared with the zod schema it replaced', () => {
  it('Envelope is the type zod inferred', () => {
    assert.equal(envelopeTypeUnchanged, true);
  });

  it('gives the same result as zod for every kind of body, through JSON text and as objects', () => {
    const coverage = new Coverage(EDGES);
    fc.assert(
      fc.property(bodyCase, (c) => {
        const body = c.make();
        const what = shownCase(c, body);
        assertSame(body, what);
        // parseEnvelope is parseExact and then validateEnvelope: the same through its own entry.
        if (c.text !== null) assert.deepEqual(parseEnvelope(c.text), oldValidateEnvelope(parseExact(c.text)), what);
        tally(coverage, c, body, oldValidateEnvelope(body));
      }),
      { numRuns: 12_000 },
    );
    assert.deepEqual(coverage.missing(20), [], 'the generators reach every edge and every outcome');
  });

  it('agrees on the cases where zod behaves unexpectedly', () => {
    const base = { LocationID: 1, ChangeSequence: 2, ParentChangeSequence: 1, ScheduledItems: [] as unknown[] };
    const refusal = (body: Record<string, unknown>): string => {
      assertSame(body, inspect(body));
      const r = validateEnvelope(body);
      return r.ok ? 'accepted' : `${r.error.field}: ${r.error.message}`;
    };
    // A string that is not digits: zod's string branch stopped at the pattern, so its own message
    // ("expected an integer") never surfaced; the union's did.
    assert.equal(refusal({ ...base, LocationID: 'abc' }), `LocationID: ${NOT_AN_INTEGER}`);
    assert.equal(refusal({ ...base, LocationID: parseExact('-1') }), `LocationID: ${NOT_AN_INTEGER}`);
    // Digits past 2^53, written either way and however spaced, are "too large".
    assert.equal(refusal({ ...base, LocationID: ' 9007199254740993 ' }), 'LocationID: integer too large');
    assert.equal(refusal({ ...base, LocationID: parseExact('1e400') }), 'LocationID: integer too large');
    // JS numbers (only from code) get zod's default wording, the int check's before the range's.
    assert.equal(refusal({ ...base, LocationID: -1 }), 'LocationID: Too small: expected number to be >=0');
    assert.equal(refusal({ ...base, LocationID: 2 ** 53 }), 'LocationID: Too big: expected int to be <=9007199254740991');
    assert.equal(refusal({ ...base, LocationID: -(2 ** 53) }), 'LocationID: Too small: expected int to be >=-9007199254740991');
    assert.equal(refusal({ ...base, LocationID: 1.5 }), `LocationID: ${NOT_AN_INTEGER}`);
    // The sequence order is checked only once every field passed; a field's refusal comes first.
    assert.equal(refusal({ ...base, ChangeSequence: 1, ParentChangeSequence: '9007199254740993' }), 'ParentChangeSequence: integer too large');
    assert.equal(refusal({ ...base, ChangeSequence: 1, ScheduledItems: null }), 'ScheduledItems: expected an array');
    assert.equal(refusal({ ...base, ChangeSequence: ' 01 ' }), 'ChangeSequence: must be greater than ParentChangeSequence');
    // Present but undefined reads as missing.
    assert.equal(refusal({ ...base, ScheduledItems: undefined }), 'ScheduledItems: is required');
    // A LocationName that is not text is kept as an undefined key; an absent one stays absent.
    const kept = validateEnvelope({ ...base, LocationName: 5 });
    assert.ok(kept.ok && 'LocationName' in kept.envelope && kept.envelope.LocationName === undefined);
    const absent = validateEnvelope(base);
    assert.ok(absent.ok && !('LocationName' in absent.envelope));
    // -0 from code stays -0; from JSON it is 0.
    assert.equal(refusal({ ...base, LocationID: -0 }), 'accepted');
    const minusZero = validateEnvelope({ ...base, LocationID: -0 });
    assert.ok(minusZero.ok && Object.is(minusZero.envelope.LocationID, -0));
  });
});

import fc from 'fast-check';

/**
 * Amounts and the JSON forms that carry them, for the property tests that every form of one SellPrice
 * means the same (test/unit/domain/amount-forms.test.ts, test/integration/amount-forms.test.ts).
 *
 * An amount is exact: ±units × 10^-scale. The generator weights the edges: zero (and minus zero), the
 * largest amount a till file accepts (2^53 - 1 minor units) and the first one past it, the 32-bit
 * edge (2^31 - 1 and 2^31 minor units), one decimal more than the currency has, and negatives.
 */

export const MAX_MINOR = BigInt(Number.MAX_SAFE_INTEGER);
export const INT32_MAX = 2_147_483_647n;

/** Currencies with each number of minor digits ISO 4217 uses. */
export const CURRENCIES = [
  ['JPY', 0],
  ['GBP', 2],
  ['KWD', 3],
  ['CLF', 4],
] as const;

export interface Amount {
  readonly currency: string;
  /** The currency's minor digits. */
  readonly digits: number;
  readonly negative: boolean;
  readonly units: bigint;
  /** Decimal places of `units`: the value is ±units / 10^scale. */
  readonly scale: number;
}

export type Expected =
  | { readonly ok: true; readonly minor: bigint; readonly text: string }
  | { readonly ok: false; readonly why: 'negative' | 'decimals' | 'too large' };

/** What the till file must hold for an amount (or why it must refuse it), by integer arithmetic only. */
export function expected(a: Amount): Expected {
  if (a.negative && a.units !== 0n) return { ok: false, why: 'negative' };
  const extra = a.scale - a.digits;
  if (extra > 0 && a.units % 10n ** BigInt(extra) !== 0n) return { ok: false, why: 'decimals' };
  const minor = extra > 0 ? a.units / 10n ** BigInt(extra) : a.units * 10n ** BigInt(-extra);
  if (minor > MAX_MINOR) return { ok: false, why: 'too large' };
  const s = minor.toString().padStart(a.digits + 1, '0');
  return { ok: true, minor, text: a.digits === 0 ? s : `${s.slice(0, -a.digits)}.${s.slice(-a.digits)}` };
}

const minorArb: fc.Arbitrary<bigint> = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom(MAX_MINOR, MAX_MINOR - 1n) },
  { weight: 2, arbitrary: fc.constantFrom(INT32_MAX - 1n, INT32_MAX, INT32_MAX + 1n) },
  { weight: 2, arbitrary: fc.constantFrom(0n, 1n, 9n, 10n, 99n, 100n, 1150n, 18980n) },
  { weight: 3, arbitrary: fc.bigInt({ min: 0n, max: MAX_MINOR }) },
  { weight: 2, arbitrary: fc.bigInt({ min: 0n, max: 100_000n }) },
);

const pastLargestArb: fc.Arbitrary<bigint> = fc.oneof(
  { weight: 3, arbitrary: fc.constant(MAX_MINOR + 1n) },
  { weight: 1, arbitrary: fc.constantFrom(MAX_MINOR + 2n, MAX_MINOR * 10n) },
  { weight: 1, arbitrary: fc.bigInt({ min: MAX_MINOR + 1n, max: 10n ** 30n }) },
);

export const amountArb: fc.Arbitrary<Amount> = fc
  .tuple(
    fc.constantFrom(...CURRENCIES),
    fc.oneof(
      // Accepted: whole minor units.
      { weight: 6, arbitrary: minorArb.map((minor) => ({ negative: false, minor, extra: 0, last: 0n })) },
      // Just past the largest: 2^53 minor units and a little more, or far more.
      { weight: 2, arbitrary: pastLargestArb.map((minor) => ({ negative: false, minor, extra: 0, last: 0n })) },
      // One decimal more than the currency has (a non-zero last digit).
      { weight: 2, arbitrary: fc.tuple(minorArb, fc.bigInt({ min: 1n, max: 9n })).map(([minor, last]) => ({ negative: false, minor, extra: 1, last })) },
      // Negative, and minus zero (which is zero).
      { weight: 1, arbitrary: minorArb.map((minor) => ({ negative: true, minor, extra: 0, last: 0n })) },
      { weight: 1, arbitrary: fc.constant({ negative: true, minor: 0n, extra: 0, last: 0n }) },
    ),
  )
  .map(([[currency, digits], { negative, minor, extra, last }]) => ({ currency, digits, negative, units: minor * 10n ** BigInt(extra) + last, scale: digits + extra }));

/** Each edge once, in GBP, for a property with few runs (passed to fc.assert as `examples`). */
export const EDGE_AMOUNTS: readonly Amount[] = [
  ...[0n, 1n, INT32_MAX, INT32_MAX + 1n, MAX_MINOR, MAX_MINOR + 1n].map((units) => ({ currency: 'GBP', digits: 2, negative: false, units, scale: 2 })),
  { currency: 'GBP', digits: 2, negative: false, units: 11499n, scale: 3 },
  { currency: 'GBP', digits: 2, negative: true, units: 1150n, scale: 2 },
  { currency: 'GBP', digits: 2, negative: true, units: 0n, scale: 2 },
];

/** One way of writing an amount in a body: as a JSON number's text, or as a JSON string's content. */
export interface Form {
  readonly asString: boolean;
  /** Power of ten moved into the exponent (0 and no exponent when `exponent` is false). */
  readonly shift: number;
  readonly exponent: boolean;
  readonly expLetter: 'e' | 'E';
  /** '+' written before a non-negative exponent. */
  readonly plusSign: boolean;
  /** Zeros before the exponent's digits (JSON allows `1e01`). */
  readonly expZeros: number;
  /** Zeros after the last decimal. */
  readonly trailingZeros: number;
  /** Zeros before the whole part (a string only: a JSON number cannot have them). */
  readonly leadingZeros: number;
  /** Spaces around a string's text (trimmed). */
  readonly spaces: boolean;
}

export const formArb: fc.Arbitrary<Form> = fc.record({
  asString: fc.boolean(),
  shift: fc.oneof(fc.integer({ min: -6, max: 6 }), fc.integer({ min: -40, max: 40 })),
  exponent: fc.boolean(),
  expLetter: fc.constantFrom('e' as const, 'E' as const),
  plusSign: fc.boolean(),
  expZeros: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 3 }) }),
  trailingZeros: fc.oneof({ weight: 2, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 4 }) }),
  leadingZeros: fc.oneof({ weight: 2, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 3 }) }),
  spaces: fc.boolean(),
});

/** The amount's text in a form: `189.80`, `1.898e2`, `18980E-2`, `0189.8000`, `1898e+01`... */
export function amountText(a: Amount, f: Form): string {
  const shift = f.exponent ? f.shift : 0;
  const places = a.scale + shift;
  const units = a.units.toString();
  let whole: string;
  let fraction: string;
  if (places <= 0) {
    whole = units === '0' ? '0' : units + '0'.repeat(-places);
    fraction = '';
  } else {
    const padded = units.padStart(places + 1, '0');
    whole = padded.slice(0, -places);
    fraction = padded.slice(-places);
  }
  fraction += '0'.repeat(f.trailingZeros);
  if (f.asString) whole = '0'.repeat(f.leadingZeros) + whole;
  const exponent = f.exponent ? `${f.expLetter}${shift < 0 ? '-' : f.plusSign ? '+' : ''}${'0'.repeat(f.expZeros)}${Math.abs(shift)}` : '';
  return `${a.negative ? '-' : ''}${whole}${fraction === '' ? '' : `.${fraction}`}${exponent}`;
}

/** The SellPrice as raw JSON in a body: the number's text, or a string. */
export function sellPriceJson(a: Amount, f: Form): string {
  const text = amountText(a, f);
  return f.asString ? JSON.stringify(f.spaces ? ` ${text} ` : text) : text;
}

/** A body for location `locationId` with one item priced by `sellPriceJson`. */
export function bodyWithPrice(locationId: number, changeSequence: number, currency: string, sellPriceJson: string): string {
  return (
    `{"LocationID":${locationId},"ChangeSequence":${changeSequence},"ParentChangeSequence":${changeSequence - 1},"LocationName":"L${locationId}",` +
    `"CurrencyIsoCode":"${currency}","ScheduledItems":[{"ItemID":"A","PLU":"1001","ItemName":"Item A","ItemType":"RECIPE",` +
    `"PriceUpdates":[{"DateFrom":"2027-01-01","DateTo":"2027-12-31","TariffName":"Eat In","PriceModel":"Standard","TaxCode":"S","TaxRate":20,"SellPrice":${sellPriceJson}}],"ScheduleUpdates":[]}]}`
  );
}

/** Tallies of which forms and amounts a sample drew, for the checks that the generators reach the edges. */
export class Coverage {
  readonly counts = new Map<string, number>();

  see(a: Amount, forms: readonly Form[]): void {
    const e = expected(a);
    const minor = e.ok ? e.minor : null;
    this.tally('largest accepted', minor === MAX_MINOR);
    this.tally('just past the largest', !e.ok && e.why === 'too large' && a.scale === a.digits && a.units === MAX_MINOR + 1n);
    this.tally('32-bit edge', minor === INT32_MAX || minor === INT32_MAX + 1n);
    this.tally('one decimal too many', !e.ok && e.why === 'decimals');
    this.tally('negative', !e.ok && e.why === 'negative');
    this.tally('minus zero', a.negative && a.units === 0n);
    for (const f of forms) {
      this.tally(f.asString ? 'string' : 'number', true);
      this.tally('negative exponent', f.exponent && f.shift < 0);
      this.tally('positive exponent', f.exponent && f.shift > 0);
      this.tally('E', f.exponent && f.expLetter === 'E');
      this.tally('e+', f.exponent && f.shift >= 0 && f.plusSign);
      this.tally('trailing zeros', f.trailingZeros > 0);
      this.tally('leading zeros', f.asString && f.leadingZeros > 0);
      this.tally('exponent with leading zeros', f.exponent && f.expZeros > 0);
    }
  }

  private tally(key: string, hit: boolean): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + (hit ? 1 : 0));
  }

  /** Fails unless every tally was hit at least `min` times. */
  missing(min: number): string[] {
    return [...this.counts].filter(([, n]) => n < min).map(([k, n]) => `${k}: ${n}`);
  }
}

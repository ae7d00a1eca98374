import { JsonNumber } from './json-scan';

/**
 * Numbers read from their source text. A body is parsed with `parseExact` (src/domain/json-scan.ts),
 * so a JSON number reaches the domain as a JsonNumber holding exactly what head office wrote; tests
 * and tools that build bodies in code still pass JS numbers, which are read through their shortest
 * round-trip text (exact for every number a JS program can hold).
 */

const DECIMAL_SOURCE = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/**
 * The largest exponent we shift digits by. Beyond it a value is far outside any price or identifier
 * (and writing it out in full would allocate without bound: `1e999999999`).
 */
const MAX_EXPONENT = 400;

/**
 * A decimal in plain form, with no exponent, no leading zeros in the whole part and no trailing zeros
 * in the fraction (`1.150e1` -> `11.5`, `1001.0` -> `1001`, `-0` -> `0`). Exact: digits are moved, never
 * computed. Null for text that is not a JSON-style decimal, or an exponent beyond +-400.
 */
export function plainDecimal(source: string): string | null {
  // Most numbers in a publication are already plain whole numbers (TaxRate, PLU): given back as they
  // are, without the regular expression and the slicing below (one or more for every price of every item).
  if (isPlainWhole(source)) return source;
  const m = DECIMAL_SOURCE.exec(source);
  if (!m) return null;
  const exponent = m[4] === undefined ? 0 : Number(m[4]);
  if (!Number.isSafeInteger(exponent) || Math.abs(exponent) > MAX_EXPONENT) return null;
  const whole = m[2] as string;
  const digits = whole + (m[3] ?? '');
  const point = whole.length + exponent;
  let intPart: string;
  let fraction: string;
  if (point <= 0) {
    intPart = '0';
    fraction = '0'.repeat(-point) + digits;
  } else if (point >= digits.length) {
    intPart = digits + '0'.repeat(point - digits.length);
    fraction = '';
  } else {
    intPart = digits.slice(0, point);
    fraction = digits.slice(point);
  }
  intPart = intPart.replace(/^0+(?=\d)/, '');
  fraction = fraction.replace(/0+$/, '');
  const zero = intPart === '0' && fraction === '';
  return `${m[1] === '-' && !zero ? '-' : ''}${intPart}${fraction === '' ? '' : `.${fraction}`}`;
}

/**
 * A decimal reduced to its value: `digits` × 10^`exponent`, with no leading or trailing zeros in
 * `digits` ('' for zero, whatever its sign or exponent). Every way of writing one value reduces to the
 * same Decimal: `189.80`, `1.898e2`, `18980E-2`, `0189.8`, `1898e+1`... all give digits `1898`,
 * exponent -1. An exponent written with more than 15 digits is beyond any amount or identifier: it
 * becomes +-Infinity (unless the digits are all zeros), so nothing is ever shifted by it.
 */
export interface Decimal {
  readonly negative: boolean;
  readonly digits: string;
  readonly exponent: number;
}

/**
 * The text of a decimal amount, as a JSON number writes it (an optional minus, digits, an optional
 * fraction, an optional exponent `e`/`E` with an optional sign) or with leading zeros in the whole
 * part; the form a SellPrice string may take (docs/pos-database.md, "How the body is read").
 */
const DECIMAL_TEXT = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?)(\d+))?$/;

/** Longest exponent, in digits after its leading zeros, that is read as a number. */
const MAX_EXPONENT_DIGITS = 15;

/** Reads decimal text (see DECIMAL_TEXT) into its value, exactly: digits are moved, never computed. Null for anything else. */
export function readDecimal(text: string): Decimal | null {
  const m = DECIMAL_TEXT.exec(text);
  if (!m) return null;
  const fraction = m[3] ?? '';
  const all = (m[2] as string) + fraction;
  let start = 0;
  while (start < all.length && all.charCodeAt(start) === 0x30) start++;
  let end = all.length;
  while (end > start && all.charCodeAt(end - 1) === 0x30) end--;
  const digits = all.slice(start, end);
  const negative = m[1] === '-';
  if (digits === '') return { negative, digits, exponent: 0 };
  const exponentDigits = (m[5] ?? '').replace(/^0+/, '');
  const written = exponentDigits.length > MAX_EXPONENT_DIGITS ? Infinity : Number(exponentDigits || '0');
  const exponent = (m[4] === '-' ? -written : written) - fraction.length + (all.length - end);
  return { negative, digits, exponent };
}

/** Position of a Decimal's first significant digit (0 for units, 2 for hundreds, -1 for tenths); 0 for zero. */
export function magnitude(d: Decimal): number {
  return d.digits === '' ? 0 : d.exponent + d.digits.length - 1;
}

/** A Decimal as plain text (`189.8`, `-0.05`, `1000`); call only for a bounded magnitude. */
export function decimalText(d: Decimal): string {
  if (d.digits === '') return '0';
  const sign = d.negative ? '-' : '';
  if (d.exponent >= 0) return sign + d.digits + '0'.repeat(d.exponent);
  const point = d.digits.length + d.exponent;
  if (point > 0) return `${sign}${d.digits.slice(0, point)}.${d.digits.slice(point)}`;
  return `${sign}0.${'0'.repeat(-point)}${d.digits}`;
}

/** `0`, or a digit 1-9 followed by digits: a whole number already in plain form. */
function isPlainWhole(source: string): boolean {
  const n = source.length;
  if (n === 0) return false;
  const first = source.charCodeAt(0);
  if (first === 0x30) return n === 1;
  if (first < 0x31 || first > 0x39) return false;
  for (let i = 1; i < n; i++) {
    const c = source.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

/** The text of a sent number (JsonNumber or JS number), or null when the value is not a number. */
export function numberSource(value: unknown): string | null {
  if (value instanceof JsonNumber) return value.source;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return null;
}

/**
 * The exact digits of a non-negative whole number sent as a number (`12345678901234567890` stays
 * exactly that, `1001.0` is `1001`); null for anything else. Digits are text: identifiers beyond 2^53
 * keep every digit.
 */
export function wholeNumberDigits(value: unknown): string | null {
  // A JS number past 2^53 (built in code, never read from a body) has already lost digits.
  if (typeof value === 'number' && !Number.isSafeInteger(value)) return null;
  const source = numberSource(value);
  if (source === null) return null;
  const plain = plainDecimal(source);
  return plain !== null && /^\d+$/.test(plain) ? plain : null;
}


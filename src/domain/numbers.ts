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
  // are, without the regular expression and the slicing below (about 210,000 of them in the L menu).
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

/** A sent integer (number, JsonNumber or string of digits, optionally signed) as a safe JS integer, else null. */
export function safeInteger(value: unknown): number | null {
  let text: string | null;
  if (typeof value === 'string') text = value.trim();
  else {
    const source = numberSource(value);
    text = source === null ? null : plainDecimal(source);
  }
  if (text === null || !/^-?\d+$/.test(text)) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : null;
}

import { decimalText, magnitude, numberSource, readDecimal, type Decimal } from './numbers';

/**
 * Money as integer minor units of the location's currency, never a float in the database.
 *
 * ISO 4217 gives each currency its number of minor digits. Most use 2; the exceptions are listed
 * here explicitly (from the ISO 4217 list) rather than taken from Intl, whose CLDR data differs from
 * ISO for some currencies (e.g. cash rounding).
 */

const ZERO_DIGIT = ['BIF', 'CLP', 'DJF', 'GNF', 'ISK', 'JPY', 'KMF', 'KRW', 'PYG', 'RWF', 'UGX', 'UYI', 'VND', 'VUV', 'XAF', 'XOF', 'XPF'];
const THREE_DIGIT = ['BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND'];
const FOUR_DIGIT = ['CLF', 'UYW'];
const TWO_DIGIT = [
  'AED', 'AFN', 'ALL', 'AMD', 'ANG', 'AOA', 'ARS', 'AUD', 'AWG', 'AZN', 'BAM', 'BBD', 'BDT', 'BGN', 'BMD', 'BND',
  'BOB', 'BOV', 'BRL', 'BSD', 'BTN', 'BWP', 'BYN', 'BZD', 'CAD', 'CDF', 'CHE', 'CHF', 'CHW', 'CNY', 'COP', 'COU',
  'CRC', 'CUP', 'CVE', 'CZK', 'DKK', 'DOP', 'DZD', 'EGP', 'ERN', 'ETB', 'EUR', 'FJD', 'FKP', 'GBP', 'GEL', 'GHS',
  'GIP', 'GMD', 'GTQ', 'GYD', 'HKD', 'HNL', 'HTG', 'HUF', 'IDR', 'ILS', 'INR', 'IRR', 'JMD', 'KES', 'KGS', 'KHR',
  'KPW', 'KYD', 'KZT', 'LAK', 'LBP', 'LKR', 'LRD', 'LSL', 'MAD', 'MDL', 'MGA', 'MKD', 'MMK', 'MNT', 'MOP', 'MRU',
  'MUR', 'MVR', 'MWK', 'MXN', 'MXV', 'MYR', 'MZN', 'NAD', 'NGN', 'NIO', 'NOK', 'NPR', 'NZD', 'PAB', 'PEN', 'PGK',
  'PHP', 'PKR', 'PLN', 'QAR', 'RON', 'RSD', 'RUB', 'SAR', 'SBD', 'SCR', 'SDG', 'SEK', 'SGD', 'SHP', 'SLE', 'SOS',
  'SRD', 'SSP', 'STN', 'SVC', 'SYP', 'SZL', 'THB', 'TJS', 'TMT', 'TOP', 'TRY', 'TTD', 'TWD', 'TZS', 'UAH', 'USD',
  'USN', 'UYU', 'UZS', 'VED', 'VES', 'WST', 'XCD', 'XCG', 'YER', 'ZAR', 'ZMW', 'ZWG',
];

const MINOR_DIGITS: ReadonlyMap<string, number> = new Map([
  ...ZERO_DIGIT.map((c) => [c, 0] as const),
  ...TWO_DIGIT.map((c) => [c, 2] as const),
  ...THREE_DIGIT.map((c) => [c, 3] as const),
  ...FOUR_DIGIT.map((c) => [c, 4] as const),
]);

/** Minor digits of an ISO 4217 currency, or undefined for a code we do not know. */
export function minorDigits(currency: string): number | undefined {
  return MINOR_DIGITS.get(currency.toUpperCase());
}

export interface Money {
  /** Integer count of minor units (pence for GBP). */
  readonly minor: number;
  /** The same amount as fixed-point text with exactly the currency's digits, e.g. `11.50`. */
  readonly text: string;
}

export type MoneyResult = { ok: true; money: Money } | { ok: false; reason: string };

/**
 * Largest magnitude of a SellPrice, in digits either side of the point: far beyond any amount (2^53
 * minor units have 16 digits), and small enough that the amount is always written out in a warning.
 */
const MAX_MAGNITUDE = 400;

/** The amount in a warning: plain decimal text of its value, the same whichever form it was sent in. */
function quoted(d: Decimal): string {
  const text = decimalText(d);
  return text.length > 80 ? `${text.slice(0, 80)}... (${text.length} characters)` : text;
}

/**
 * Converts a SellPrice as it arrives (a JSON number such as 11.5, or a string such as "11.50" or
 * "1.15e1") into minor units. A JSON number is read from its source text (a JsonNumber from
 * `parseExact`) and a string from its text, through the same reader (`readDecimal`): every form of one
 * amount (number or string, exponent of either sign and case, trailing zeros, leading zeros) gives the
 * same result, or is refused with the same reason, which quotes the amount in plain decimal form. No
 * float arithmetic touches the amount. A string must be a JSON number's text (leading zeros allowed,
 * surrounding spaces trimmed): no `+`, no `.5`, no `5.`, no thousands separator. More decimals than the
 * currency has, negatives, and amounts beyond 2^53 - 1 minor units are refused with a reason.
 */
export function parseSellPrice(value: unknown, currency: string): MoneyResult {
  const digits = minorDigits(currency);
  if (digits === undefined) return { ok: false, reason: `unknown currency ${JSON.stringify(currency)}` };
  if (typeof value === 'number' && !Number.isFinite(value)) return { ok: false, reason: 'SellPrice is not a finite number' };
  const source = numberSource(value);
  let text: string;
  if (source !== null) text = source;
  else if (typeof value === 'string') text = value.trim();
  else return { ok: false, reason: 'SellPrice is not a number' };
  const d = readDecimal(text);
  if (d === null) return { ok: false, reason: `SellPrice ${JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}...` : text)} is not a decimal amount` };
  if (Math.abs(magnitude(d)) > MAX_MAGNITUDE) return { ok: false, reason: `SellPrice is out of range (its first digit is more than ${MAX_MAGNITUDE} places from the decimal point)` };
  if (d.negative && d.digits !== '') return { ok: false, reason: `SellPrice ${quoted(d)} is negative` };
  if (d.digits !== '' && -d.exponent > digits) {
    return { ok: false, reason: `SellPrice ${quoted(d)} has more decimals than ${currency.toUpperCase()} allows (${digits})` };
  }
  const minor = d.digits === '' ? 0 : Number(d.digits + '0'.repeat(d.exponent + digits));
  if (!Number.isSafeInteger(minor)) return { ok: false, reason: `SellPrice ${quoted(d)} is too large` };
  return { ok: true, money: { minor, text: formatMinor(minor, digits) } };
}

export function formatMinor(minor: number, digits: number): string {
  if (digits === 0) return String(minor);
  const sign = minor < 0 ? '-' : '';
  const abs = String(Math.abs(minor)).padStart(digits + 1, '0');
  return `${sign}${abs.slice(0, -digits)}.${abs.slice(-digits)}`;
}

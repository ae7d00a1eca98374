import { numberSource, plainDecimal } from './numbers';

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

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/**
 * Converts a SellPrice as it arrives (a JSON number such as 11.5, or a decimal string such as "11.50")
 * into minor units. A JSON number is read from its source text (a JsonNumber from `parseExact`), so
 * `11.499999999999999999` is refused for its decimals exactly as the same text in a string is, and
 * `90071992547409.91` keeps its last digit; an exponent only moves the decimal point (`1.15e1` is
 * 11.50). No float arithmetic touches the amount. More decimals than the currency has, negatives,
 * non-decimal text, and amounts beyond 2^53 minor units are refused with a reason.
 */
export function parseSellPrice(value: unknown, currency: string): MoneyResult {
  const digits = minorDigits(currency);
  if (digits === undefined) return { ok: false, reason: `unknown currency ${JSON.stringify(currency)}` };
  let text: string;
  if (typeof value === 'number' && !Number.isFinite(value)) return { ok: false, reason: 'SellPrice is not a finite number' };
  const source = numberSource(value);
  if (source !== null) {
    const plain = plainDecimal(source);
    if (plain === null) return { ok: false, reason: `SellPrice ${source.length > 80 ? `${source.slice(0, 80)}...` : source} is out of range` };
    if (plain.startsWith('-')) return { ok: false, reason: `SellPrice ${source} is negative` };
    const fraction = plain.split('.')[1] ?? '';
    if (fraction.length > digits) {
      return { ok: false, reason: `SellPrice ${source} has more decimals than ${currency.toUpperCase()} allows (${digits})` };
    }
    text = plain;
  } else if (typeof value === 'string') {
    text = value.trim();
  } else {
    return { ok: false, reason: 'SellPrice is not a number' };
  }
  if (text.startsWith('-')) return { ok: false, reason: `SellPrice ${text} is negative` };
  const m = DECIMAL.exec(text);
  if (!m) return { ok: false, reason: `SellPrice ${JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}...` : text)} is not a plain decimal amount` };
  const whole = m[1] as string;
  const fraction = (m[2] ?? '').replace(/0+$/, '');
  if (fraction.length > digits) {
    return { ok: false, reason: `SellPrice ${text} has more decimals than ${currency.toUpperCase()} allows (${digits})` };
  }
  const minorText = whole + fraction.padEnd(digits, '0');
  const minor = Number(minorText);
  if (!Number.isSafeInteger(minor)) return { ok: false, reason: `SellPrice ${text} is too large` };
  return { ok: true, money: { minor, text: formatMinor(minor, digits) } };
}

export function formatMinor(minor: number, digits: number): string {
  if (digits === 0) return String(minor);
  const sign = minor < 0 ? '-' : '';
  const abs = String(Math.abs(minor)).padStart(digits + 1, '0');
  return `${sign}${abs.slice(0, -digits)}.${abs.slice(-digits)}`;
}

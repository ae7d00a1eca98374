import { decimalText, magnitude, numberSource, readDecimal } from './numbers';

export type TaxRateResult = { readonly ok: true; readonly rate: number } | { readonly ok: false; readonly reason: string };

/**
 * Reads a TaxRate as it arrives (a JSON number such as 20 or 2e1, or a string such as "20" or "20.0")
 * through the same exact reader as SellPrice (`readDecimal`), so every form of one rate gives the same
 * percentage, or is refused with the same reason, which quotes the rate in plain decimal form. The till's
 * `tax_rate` is an integer: a rate must be a whole percentage from 0 to 100.
 */
export function readTaxRate(value: unknown): TaxRateResult {
  const source = numberSource(value);
  const text = source ?? (typeof value === 'string' ? value.trim() : null);
  const d = text === null ? null : readDecimal(text);
  if (d === null || Math.abs(magnitude(d)) > 3) {
    return { ok: false, reason: `expected a whole percentage 0..100, got ${describe(value, d)}` };
  }
  const plain = decimalText(d);
  if (!/^\d+$/.test(plain) || Number(plain) > 100) return { ok: false, reason: `expected a whole percentage 0..100, got ${plain}` };
  return { ok: true, rate: Number(plain) };
}

function describe(value: unknown, d: ReturnType<typeof readDecimal>): string {
  if (d !== null) return 'a number outside 0..100';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
  return value === null ? 'null' : typeof value;
}

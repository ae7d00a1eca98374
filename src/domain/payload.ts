import { z } from 'zod';
import { isIsoDate, type IsoDate } from './dates';
import { minorDigits, parseSellPrice, type Money } from './money';

/**
 * The webhook body (spec section 2), parsed in two layers:
 *  1. the envelope (LocationID, ChangeSequence, ParentChangeSequence, ScheduledItems): without a valid
 *     one we cannot place the update in a chain, so the whole body is rejected (400, quarantined);
 *  2. each item and each price/schedule element on its own: a bad element is skipped with a warning
 *     recorded against the update, and the rest applies.
 *
 * Identifiers: the spec types LocationID, PLU and ItemID as integers but the samples send strings, so
 * both are accepted. LocationID becomes an integer (it must be one). PLU and ItemID become text: a
 * number is written in decimal (1001 -> "1001"), a string is trimmed and otherwise kept as sent, so
 * "8812-0001" and "01001" survive unchanged and the till matches what head office configured.
 */

const digitsOnly = /^\d+$/;

/** An integer sent as a JSON number or as a string of digits. */
const integerLike = z.union([
  z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  z
    .string()
    .trim()
    .regex(digitsOnly, 'expected an integer')
    .transform((s) => Number(s))
    .refine((n) => Number.isSafeInteger(n), 'integer too large'),
], { error: 'expected an integer (number or string of digits)' });

export const EnvelopeSchema = z
  .object({
    LocationID: integerLike,
    ChangeSequence: integerLike,
    ParentChangeSequence: integerLike,
    LocationName: z.string().max(1000).optional().catch(undefined),
    CurrencyIsoCode: z.string().optional().catch(undefined),
    ScheduledItems: z.array(z.unknown(), { error: 'expected an array' }),
  })
  .refine((e) => e.ChangeSequence > e.ParentChangeSequence, {
    path: ['ChangeSequence'],
    message: 'must be greater than ParentChangeSequence',
  });

export type Envelope = z.infer<typeof EnvelopeSchema>;

export interface EnvelopeError {
  /** Dotted path of the first offending field, e.g. `ChangeSequence` or `(body)`. */
  readonly field: string;
  readonly message: string;
}

export type EnvelopeResult = { ok: true; envelope: Envelope; body: Record<string, unknown> } | { ok: false; error: EnvelopeError };

/** Parses raw bytes as a webhook body. Pure: the caller decides what to store. */
export function parseEnvelope(raw: Buffer | string): EnvelopeResult {
  let body: unknown;
  try {
    body = JSON.parse(typeof raw === 'string' ? raw : raw.toString('utf8'));
  } catch (err) {
    return { ok: false, error: { field: '(body)', message: `not valid JSON: ${(err as Error).message}` } };
  }
  return validateEnvelope(body);
}

export function validateEnvelope(body: unknown): EnvelopeResult {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: false, error: { field: '(body)', message: 'expected a JSON object' } };
  }
  const parsed = EnvelopeSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue && issue.path.length > 0 ? issue.path.join('.') : '(body)';
    const present = issue && issue.path.length > 0 && (body as Record<string, unknown>)[String(issue.path[0])] !== undefined;
    const message = present ? (issue?.message ?? 'invalid') : 'is required';
    return { ok: false, error: { field, message } };
  }
  return { ok: true, envelope: parsed.data, body: body as Record<string, unknown> };
}

export type ItemType = 'RECIPE' | 'MENU';
export type AvailabilityStatus = 'AVAILABLE' | 'UNAVAILABLE';

export interface PriceValue {
  readonly priceModel: string | null;
  readonly taxCode: string;
  readonly taxRate: number;
  readonly sellPriceMinor: number;
  readonly sellPrice: string;
  readonly currency: string;
}

export interface PriceRange {
  readonly tariffName: string;
  readonly from: IsoDate;
  readonly to: IsoDate;
  readonly value: PriceValue;
}

export interface AvailabilityRange {
  readonly mealPeriod: string;
  readonly from: IsoDate;
  readonly to: IsoDate;
  readonly status: AvailabilityStatus;
}

export interface PlannedItem {
  readonly itemId: string;
  readonly plu: string;
  readonly name: string;
  readonly type: ItemType;
  readonly prices: readonly PriceRange[];
  readonly availability: readonly AvailabilityRange[];
}

export interface UpdateWarning {
  /** Where in the body, e.g. `ScheduledItems[2].PriceUpdates[0].SellPrice`. */
  readonly path: string;
  readonly message: string;
}

export interface UpdatePlan {
  readonly locationId: number;
  readonly locationName: string | null;
  readonly currency: string | null;
  readonly changeSequence: number;
  readonly parentChangeSequence: number;
  readonly items: Iterable<PlannedItem>;
  /** Complete once `items` has been iterated (element warnings are found while planning items). */
  readonly warnings: readonly UpdateWarning[];
}

/**
 * A sent value quoted in a warning: bounded in length, and safe for any shape. JSON.stringify alone
 * throws on deeply nested input (stack overflow), which made planUpdate throw and blocked the
 * location's chain on a body already answered 200; a huge string would have been copied whole into
 * update_warnings.
 */
export function shown(value: unknown, max = 80): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = Array.isArray(value) ? '[deeply nested array]' : typeof value === 'object' && value !== null ? '[deeply nested object]' : '[unprintable value]';
  }
  return text.length > max ? `${text.slice(0, max)}... (${text.length} characters)` : text;
}

function identifierText(value: unknown): string | null {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return String(value);
  if (typeof value === 'string') {
    const trimmed = value.trim();
    return trimmed.length > 0 && trimmed.length <= 100 ? trimmed : null;
  }
  return null;
}

function nonEmptyText(value: unknown, max = 200): string | null {
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  return trimmed.length > 0 && trimmed.length <= max ? trimmed : null;
}

function integerValue(value: unknown): number | null {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  if (typeof value === 'string' && /^-?\d+$/.test(value.trim())) {
    const n = Number(value.trim());
    return Number.isSafeInteger(n) ? n : null;
  }
  return null;
}

function arrayField(item: Record<string, unknown>, name: string, path: string, warnings: UpdateWarning[]): unknown[] {
  const value = item[name];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    warnings.push({ path: `${path}.${name}`, message: 'expected an array; ignored' });
    return [];
  }
  return value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function dateRange(element: Record<string, unknown>, path: string, warnings: UpdateWarning[]): { from: IsoDate; to: IsoDate } | null {
  const from = element.DateFrom;
  const to = element.DateTo;
  if (!isIsoDate(from)) {
    warnings.push({ path: `${path}.DateFrom`, message: `not a date (YYYY-MM-DD): ${shown(from)}; element skipped` });
    return null;
  }
  if (!isIsoDate(to)) {
    warnings.push({ path: `${path}.DateTo`, message: `not a date (YYYY-MM-DD): ${shown(to)}; element skipped` });
    return null;
  }
  if (from > to) {
    warnings.push({ path, message: `reversed date range ${from}..${to}; element skipped` });
    return null;
  }
  return { from, to };
}

function planPrice(element: unknown, path: string, currency: string | null, warnings: UpdateWarning[]): PriceRange | null {
  if (!isRecord(element)) {
    warnings.push({ path, message: 'expected an object; element skipped' });
    return null;
  }
  const range = dateRange(element, path, warnings);
  if (!range) return null;
  const tariffName = nonEmptyText(element.TariffName);
  if (tariffName === null) {
    warnings.push({ path: `${path}.TariffName`, message: 'missing or empty; element skipped' });
    return null;
  }
  const taxCode = nonEmptyText(element.TaxCode, 50);
  if (taxCode === null) {
    warnings.push({ path: `${path}.TaxCode`, message: 'missing or empty; element skipped' });
    return null;
  }
  const taxRate = integerValue(element.TaxRate);
  if (taxRate === null || taxRate < 0 || taxRate > 100) {
    warnings.push({ path: `${path}.TaxRate`, message: `expected a whole percentage 0..100, got ${shown(element.TaxRate)}; element skipped` });
    return null;
  }
  if (currency === null) {
    warnings.push({ path: `${path}.SellPrice`, message: 'the update has no known CurrencyIsoCode, so the price cannot be read; element skipped' });
    return null;
  }
  const price = parseSellPrice(element.SellPrice, currency);
  if (!price.ok) {
    warnings.push({ path: `${path}.SellPrice`, message: `${price.reason}; element skipped` });
    return null;
  }
  const money: Money = price.money;
  const priceModel = typeof element.PriceModel === 'string' ? element.PriceModel.trim().slice(0, 200) : null;
  return {
    tariffName,
    ...range,
    value: { priceModel, taxCode, taxRate, sellPriceMinor: money.minor, sellPrice: money.text, currency },
  };
}

function planAvailability(element: unknown, path: string, warnings: UpdateWarning[]): AvailabilityRange | null {
  if (!isRecord(element)) {
    warnings.push({ path, message: 'expected an object; element skipped' });
    return null;
  }
  const range = dateRange(element, path, warnings);
  if (!range) return null;
  const mealPeriod = nonEmptyText(element.MealPeriodName);
  if (mealPeriod === null) {
    warnings.push({ path: `${path}.MealPeriodName`, message: 'missing or empty; element skipped' });
    return null;
  }
  const status = typeof element.Status === 'string' ? element.Status.trim().toUpperCase() : null;
  if (status !== 'AVAILABLE' && status !== 'UNAVAILABLE') {
    warnings.push({ path: `${path}.Status`, message: `unknown Status ${shown(element.Status)}; element skipped` });
    return null;
  }
  return { mealPeriod, ...range, status };
}

/**
 * Turns a body with a valid envelope into what the store writes. Never throws on content: every
 * element it cannot use becomes a warning. `items` is planned lazily, one item at a time as the store
 * writes it, so a large publication's plan never exists in memory all at once; `warnings` is complete
 * after `items` has been iterated. Use `planUpdate` for the whole plan at once.
 */
export function streamUpdate(envelope: Omit<Envelope, 'ScheduledItems'> & { readonly ScheduledItems: Iterable<unknown> }, body: Record<string, unknown>): UpdatePlan {
  const warnings: UpdateWarning[] = [];
  const currencyText = typeof envelope.CurrencyIsoCode === 'string' ? envelope.CurrencyIsoCode.trim().toUpperCase() : '';
  let currency: string | null = null;
  if (minorDigits(currencyText) !== undefined) currency = currencyText;
  else warnings.push({ path: 'CurrencyIsoCode', message: `unknown or missing ISO 4217 code ${shown(body.CurrencyIsoCode)}; prices in this update are skipped` });
  const locationName = typeof envelope.LocationName === 'string' ? envelope.LocationName.trim() : null;
  return {
    locationId: envelope.LocationID,
    locationName: locationName === '' ? null : locationName,
    currency,
    changeSequence: envelope.ChangeSequence,
    parentChangeSequence: envelope.ParentChangeSequence,
    items: planItems(envelope.ScheduledItems, currency, warnings),
    warnings,
  };
}

/** The whole plan at once (tests, small tools). */
export function planUpdate(envelope: Envelope, body: Record<string, unknown>): UpdatePlan & { readonly items: readonly PlannedItem[] } {
  const plan = streamUpdate(envelope, body);
  return { ...plan, items: [...plan.items] };
}

function* planItems(scheduledItems: Iterable<unknown>, currency: string | null, warnings: UpdateWarning[]): Generator<PlannedItem> {
  // Any iterable: the applier passes items parsed one at a time from the stored bytes (src/domain/body.ts).
  let index = -1;
  for (const raw of scheduledItems) {
    index++;
    const path = `ScheduledItems[${index}]`;
    if (!isRecord(raw)) {
      warnings.push({ path, message: 'expected an object; item skipped' });
      continue;
    }
    const itemId = identifierText(raw.ItemID);
    if (itemId === null) {
      warnings.push({ path: `${path}.ItemID`, message: `missing or not an identifier: ${shown(raw.ItemID)}; item skipped` });
      continue;
    }
    const plu = identifierText(raw.PLU);
    if (plu === null) {
      warnings.push({ path: `${path}.PLU`, message: `missing or not an identifier: ${shown(raw.PLU)}; item skipped` });
      continue;
    }
    const type = typeof raw.ItemType === 'string' ? raw.ItemType.trim().toUpperCase() : null;
    if (type !== 'RECIPE' && type !== 'MENU') {
      warnings.push({ path: `${path}.ItemType`, message: `unknown ItemType ${shown(raw.ItemType)}; item skipped` });
      continue;
    }
    const name = typeof raw.ItemName === 'string' ? raw.ItemName.trim().slice(0, 500) : '';
    if (name === '') warnings.push({ path: `${path}.ItemName`, message: 'missing or empty; stored as empty' });
    const prices = arrayField(raw, 'PriceUpdates', path, warnings)
      .map((e, i) => planPrice(e, `${path}.PriceUpdates[${i}]`, currency, warnings))
      .filter((p): p is PriceRange => p !== null);
    const availability = arrayField(raw, 'ScheduleUpdates', path, warnings)
      .map((e, i) => planAvailability(e, `${path}.ScheduleUpdates[${i}]`, warnings))
      .filter((a): a is AvailabilityRange => a !== null);
    yield { itemId, plu, name, type, prices, availability };
  }
}

export function samePriceValue(a: PriceValue, b: PriceValue): boolean {
  return (
    a.priceModel === b.priceModel &&
    a.taxCode === b.taxCode &&
    a.taxRate === b.taxRate &&
    a.sellPriceMinor === b.sellPriceMinor &&
    a.currency === b.currency
  );
}

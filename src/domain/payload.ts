import { inDateDomain, isIsoDate, type IsoDate } from './dates';
import { JsonNumber, parseExact, repeatedMembers } from './json-scan';
import { minorDigits, parseSellPrice, type Money, type MoneyResult } from './money';
import { wholeNumberDigits } from './numbers';
import { readTaxRate } from './tax-rate';
import { beyond32Bits, wideIntegerMessage } from './till-integers';

/**
 * The webhook body (spec section 2), parsed in two layers:
 *  1. the envelope (LocationID, ChangeSequence, ParentChangeSequence, ScheduledItems): without a valid
 *     one we cannot place the update in a chain, so the whole body is rejected (400, quarantined);
 *  2. each item and each price/schedule element on its own: a bad element is skipped with a warning
 *     recorded against the update, and the rest applies.
 *
 * Identifiers: the spec types LocationID, PLU and ItemID as integers but the samples send strings, so
 * both are accepted. LocationID becomes an integer (it must be one). PLU and ItemID become text: a
 * number is written as its exact decimal digits, read from the body's text (1001 -> "1001",
 * 12345678901234567890 -> "12345678901234567890", never through a float), a string is trimmed and
 * otherwise kept as sent, so "8812-0001" and "01001" survive unchanged and the till matches what head
 * office configured.
 *
 * Numbers: bodies are parsed with `parseExact`, so every JSON number arrives as a JsonNumber holding
 * its source text; money and identifiers are read from that text (src/domain/numbers.ts). A price,
 * LocationID or ChangeSequence past what a 32-bit integer holds is stored with a warning
 * (src/domain/till-integers.ts).
 *
 * Text limits (docs/pos-database.md): a key longer than its limit is skipped with a warning naming the
 * field and the limit, never cut; descriptive text (ItemName, PriceModel, LocationName) is stored as
 * sent, trimmed of surrounding spaces.
 */
export const TEXT_LIMITS = {
  ItemID: 100,
  PLU: 100,
  TariffName: 200,
  MealPeriodName: 200,
  TaxCode: 50,
} as const;

const digitsOnly = /^\d+$/;

/**
 * The envelope, checked by hand rather than with zod: every worker thread that imports this file would
 * otherwise load zod, for six fields (what zod costs a thread: the floor line of `npm run bench`). The checks, their order and their messages are those of the
 * zod schema this replaced (test/unit/domain/envelope-hand-vs-zod.test.ts keeps that schema and compares
 * the two over every input shape), so a body is refused or accepted exactly as before.
 */
export interface Envelope {
  LocationID: number;
  ChangeSequence: number;
  ParentChangeSequence: number;
  // Text of any length, stored as sent. Anything else is left out of the envelope (which crosses
  // threads and must stay small and flat) and streamUpdate warns about it from the body. A key the
  // body has is kept (undefined when it is not text); a key it lacks stays absent.
  LocationName?: string | undefined;
  CurrencyIsoCode?: string | undefined;
  ScheduledItems: unknown[];
}

/**
 * A JsonNumber handed to the envelope checks: a safe whole number becomes a JS number; anything else
 * becomes its text, which the string check refuses ("integer too large" for digits past 2^53, else as
 * not an integer). No float is ever made of it.
 */
function envelopeNumber(value: unknown): unknown {
  if (!(value instanceof JsonNumber)) return value;
  const digits = wholeNumberDigits(value);
  if (digits === null) return value.source;
  const n = Number(digits);
  return Number.isSafeInteger(n) ? n : digits;
}

type IntegerCheck = { readonly ok: true; readonly value: number } | { readonly ok: false; readonly message: string };

/**
 * Every value that is neither an integer number nor a string of digits. A string that is not digits
 * gets it too: zod stopped its string branch at the failed pattern, so that branch's own "expected an
 * integer" never reached the sender, and this message did.
 */
const NOT_AN_INTEGER: IntegerCheck = { ok: false, message: 'expected an integer (number or string of digits)' };

/** LocationID, ChangeSequence or ParentChangeSequence: an integer sent as a JSON number or as a string of digits. */
function integerLike(sent: unknown): IntegerCheck {
  const value = envelopeNumber(sent);
  if (typeof value === 'number') return integerNumber(value);
  if (typeof value === 'string') return integerDigits(value);
  return NOT_AN_INTEGER;
}

/**
 * A JS number. From a parsed body it is always a safe whole number (envelopeNumber turns every other
 * JsonNumber into text); the other messages are zod's defaults, kept for envelopes built in code.
 */
function integerNumber(n: number): IntegerCheck {
  if (!Number.isInteger(n)) return NOT_AN_INTEGER;
  if (n > Number.MAX_SAFE_INTEGER) return { ok: false, message: `Too big: expected int to be <=${Number.MAX_SAFE_INTEGER}` };
  if (n < -Number.MAX_SAFE_INTEGER) return { ok: false, message: `Too small: expected int to be >=${-Number.MAX_SAFE_INTEGER}` };
  if (n < 0) return { ok: false, message: 'Too small: expected number to be >=0' };
  return { ok: true, value: n };
}

/** A string of digits, surrounding white space ignored (String.prototype.trim's, as zod's trim). */
function integerDigits(text: string): IntegerCheck {
  const digits = text.trim();
  if (!digitsOnly.test(digits)) return NOT_AN_INTEGER;
  const n = Number(digits);
  return Number.isSafeInteger(n) ? { ok: true, value: n } : { ok: false, message: 'integer too large' };
}

/**
 * LocationID or ChangeSequence as a parsed member's value (parseExact's) reads, exactly as
 * validateEnvelope reads it (a JSON number or a string of digits); null when validateEnvelope would
 * refuse it. For naming the update a refused body was (src/domain/envelope-ids.ts).
 */
export function envelopeInteger(sent: unknown): number | null {
  const checked = integerLike(sent);
  return checked.ok ? checked.value : null;
}

/**
 * LocationName or CurrencyIsoCode as the envelope holds it: present when the body has the key (`in`,
 * as zod tested it), the text when it is text, else undefined.
 */
function optionalText(body: Record<string, unknown>, key: 'LocationName' | 'CurrencyIsoCode'): Pick<Envelope, 'LocationName' | 'CurrencyIsoCode'> {
  if (!(key in body)) return {};
  const value = body[key];
  return { [key]: typeof value === 'string' ? value : undefined };
}

/** The items in an array of the envelope's own, holes read as undefined (as zod built it), never the body's. */
function ownItems(items: readonly unknown[]): unknown[] {
  const copy = new Array<unknown>(items.length);
  for (let i = 0; i < items.length; i++) copy[i] = items[i];
  return copy;
}

export interface EnvelopeError {
  /**
   * The stable error id the receiver answers with: the body is not UTF-8, not JSON, or has no valid
   * envelope.
   */
  readonly id: 'invalid_encoding' | 'invalid_json' | 'invalid_envelope' | 'item_too_large' | 'too_many_items' | 'member_too_large' | 'too_deep' | 'too_many_values' | 'duplicate_member';
  /** Dotted path of the first offending field, e.g. `ChangeSequence` or `(body)`. */
  readonly field: string;
  readonly message: string;
}

export type EnvelopeResult = { ok: true; envelope: Envelope; body: Record<string, unknown> } | { ok: false; error: EnvelopeError };

/** Parses raw bytes as a webhook body. Pure: the caller decides what to store. */
export function parseEnvelope(raw: Buffer | string): EnvelopeResult {
  let body: unknown;
  try {
    body = parseExact(typeof raw === 'string' ? raw : raw.toString('utf8').replace(/^\uFEFF/, ''));
  } catch (err) {
    return { ok: false, error: { id: 'invalid_json', field: '(body)', message: `not valid JSON: ${(err as Error).message}` } };
  }
  return validateEnvelope(body);
}

/**
 * The first failing field in the order LocationID, ChangeSequence, ParentChangeSequence, ScheduledItems
 * (LocationName and CurrencyIsoCode never fail), and the sequence order only once every field passed.
 */
export function validateEnvelope(body: unknown): EnvelopeResult {
  if (!isRecord(body)) {
    return { ok: false, error: { id: 'invalid_json', field: '(body)', message: 'expected a JSON object' } };
  }
  const location = integerLike(body.LocationID);
  if (!location.ok) return refused(body, 'LocationID', location.message);
  const sequence = integerLike(body.ChangeSequence);
  if (!sequence.ok) return refused(body, 'ChangeSequence', sequence.message);
  const parent = integerLike(body.ParentChangeSequence);
  if (!parent.ok) return refused(body, 'ParentChangeSequence', parent.message);
  const items = body.ScheduledItems;
  if (!Array.isArray(items)) return refused(body, 'ScheduledItems', 'expected an array');
  if (!(sequence.value > parent.value)) return refused(body, 'ChangeSequence', 'must be greater than ParentChangeSequence');
  const envelope: Envelope = {
    LocationID: location.value,
    ChangeSequence: sequence.value,
    ParentChangeSequence: parent.value,
    ...optionalText(body, 'LocationName'),
    ...optionalText(body, 'CurrencyIsoCode'),
    ScheduledItems: ownItems(items),
  };
  return { ok: true, envelope, body };
}

/** A field absent, or sent as undefined, is reported as required whatever its check said. */
function refused(body: Record<string, unknown>, field: string, message: string): EnvelopeResult {
  return { ok: false, error: { id: 'invalid_envelope', field, message: body[field] === undefined ? 'is required' : message } };
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

/**
 * The most warnings one update keeps. Each is held until the update is applied and is then a row of
 * agent.db: an update whose every element is unusable makes one per element, which could be more than
 * the applier's thread has memory for. The rest are counted in one last warning.
 */
export const MAX_WARNINGS = 1000;

/** The warnings a cappedWarnings list did not list, by list. */
const omittedWarnings = new WeakMap<readonly UpdateWarning[], number>();

/** How many warnings an update had, those a cappedWarnings list did not list included. */
export function warningCount(warnings: readonly UpdateWarning[]): number {
  const omitted = omittedWarnings.get(warnings) ?? 0;
  return omitted === 0 ? warnings.length : warnings.length - 1 + omitted;
}

/**
 * An update's warnings, a plain array whose `push` keeps the first MAX_WARNINGS, then one last
 * warning that counts those not listed.
 */
export function cappedWarnings(): UpdateWarning[] {
  const list: UpdateWarning[] = [];
  const push = (...warnings: UpdateWarning[]): number => {
    for (const warning of warnings) {
      const omitted = omittedWarnings.get(list) ?? 0;
      if (omitted === 0 && list.length < MAX_WARNINGS) {
        Array.prototype.push.call(list, warning);
        continue;
      }
      const more: UpdateWarning = { path: '(update)', message: `${omitted + 1} more warning${omitted === 0 ? '' : 's'} in this update, not listed (only the first ${MAX_WARNINGS} are kept)` };
      omittedWarnings.set(list, omitted + 1);
      if (omitted === 0) Array.prototype.push.call(list, more);
      else list[list.length - 1] = more;
    }
    return list.length;
  };
  // Not enumerable: the list compares, copies and serialises as the plain array it is.
  Object.defineProperty(list, 'push', { value: push, enumerable: false });
  return list;
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

type FieldResult = { readonly ok: true; readonly text: string } | { readonly ok: false; readonly message: string };

/** Length in characters as a person counts them (code points), computed only past the limit. */
function tooLong(text: string, max: number): number | null {
  if (text.length <= max) return null;
  const characters = [...text].length;
  return characters > max ? characters : null;
}

/** A high surrogate not followed by a low one, or a low one not after a high one (String.prototype.isWellFormed, ES2024). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Whether text holds a lone UTF-16 surrogate: JSON can send one as an escape (`"P\ud800"`), UTF-8
 * cannot hold it, and SQLite stores it as U+FFFD. Two identifiers different here would then be one
 * in the till, and a name would not be stored as sent. The plan skips the item or element whose text
 * the till would get has one, with a warning, and ignores it elsewhere (unreadableText).
 */
export function hasLoneSurrogate(text: string): boolean {
  return LONE_SURROGATE.test(text);
}

/** What a refusal or a warning says of text with a lone surrogate (after the field's name, if any). */
const LONE_SURROGATE_MESSAGE = 'holds a lone UTF-16 surrogate (a \\uD800-\\uDFFF escape not in a pair), which cannot be stored as UTF-8';

/**
 * Text the till would not read whole: a lone surrogate (above), or a NUL character (JSON's \u0000),
 * which SQLite stores but tills reading text as C strings (ODBC, the sqlite3 shell) take as its end,
 * so `1001\u0000X` would show and match as another item's `1001`. Null when the text is fine, else
 * what a warning says of it after the field's name.
 */
export function unreadableText(text: string): string | null {
  if (hasLoneSurrogate(text)) return LONE_SURROGATE_MESSAGE;
  if (text.includes('\u0000')) return NUL_MESSAGE;
  return null;
}

export const NUL_MESSAGE = 'holds a NUL character (\\u0000), which tills read as the end of the text';

/** ItemID or PLU: a whole number as its exact digits, or a string trimmed and otherwise kept as sent. */
function identifierText(value: unknown, field: 'ItemID' | 'PLU'): FieldResult {
  if (value instanceof JsonNumber || typeof value === 'number') {
    const digits = wholeNumberDigits(value);
    if (digits === null) return { ok: false, message: `not an identifier (a whole number or text): ${shown(value)}` };
    return checkedLength(digits, field);
  }
  if (typeof value === 'string' && value.trim() !== '') return checkedLength(value.trim(), field);
  if (value === undefined || value === null || value === '' || typeof value === 'string') return { ok: false, message: 'missing or empty' };
  return { ok: false, message: `not an identifier (a whole number or text): ${shown(value)}` };
}

/** A required text key (TariffName, MealPeriodName, TaxCode), trimmed, within its limit. */
function keyText(value: unknown, field: keyof typeof TEXT_LIMITS): FieldResult {
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) return { ok: false, message: 'missing or empty' };
  if (typeof value !== 'string') return { ok: false, message: `expected text, got ${shown(value)}` };
  return checkedLength(value.trim(), field);
}

function checkedLength(text: string, field: keyof typeof TEXT_LIMITS): FieldResult {
  const unreadable = unreadableText(text);
  if (unreadable !== null) return { ok: false, message: `${field} ${unreadable}` };
  const max = TEXT_LIMITS[field];
  const length = tooLong(text, max);
  return length === null ? { ok: true, text } : { ok: false, message: `${field} is ${length} characters long; the limit is ${max}` };
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

/**
 * What planning one update has already worked out: the dates it has checked and the prices it has
 * read. A large publication repeats a few hundred dates and prices hundreds of thousands of times
 * (the L body: 420,000 dates, 45,000 prices); each is now checked once. Per plan and bounded, so a body
 * of all-different values costs a little memory and nothing else.
 */
class PlanMemo {
  private static readonly MAX_ENTRIES = 50_000;
  private readonly dates = new Set<string>();
  /** By currency, then by what was sent: a number's source text, or a string as sent (kept apart). */
  private readonly prices = new Map<string, { readonly numbers: Map<string, MoneyResult>; readonly strings: Map<string, MoneyResult> }>();
  private priceCount = 0;

  isDate(value: unknown): value is IsoDate {
    if (typeof value !== 'string') return false;
    if (this.dates.has(value)) return true;
    // The year 0000 is a calendar date to isIsoDate but lies before the domain's first day.
    if (!isIsoDate(value) || !inDateDomain(value)) return false;
    if (this.dates.size < PlanMemo.MAX_ENTRIES) this.dates.add(value);
    return true;
  }

  sellPrice(value: unknown, currency: string): MoneyResult {
    // The number's source text or the string as sent, with the currency: the whole input of parseSellPrice.
    const isNumber = value instanceof JsonNumber;
    if (!isNumber && typeof value !== 'string') return parseSellPrice(value, currency);
    let byCurrency = this.prices.get(currency);
    if (byCurrency === undefined) this.prices.set(currency, (byCurrency = { numbers: new Map(), strings: new Map() }));
    const memo = isNumber ? byCurrency.numbers : byCurrency.strings;
    const sent = isNumber ? value.source : value;
    let result = memo.get(sent);
    if (result === undefined) {
      result = parseSellPrice(value, currency);
      if (this.priceCount < PlanMemo.MAX_ENTRIES) {
        memo.set(sent, result);
        this.priceCount++;
      }
    }
    return result;
  }

}

/**
 * Where an element is, for a warning: `ScheduledItems[3].PriceUpdates[1]`. Built only when a warning
 * is written (a large publication has hundreds of thousands of elements and usually no warning).
 */
interface ElementAt {
  readonly item: number;
  readonly list: 'PriceUpdates' | 'ScheduleUpdates';
  readonly index: number;
}

function elementPath(at: ElementAt): string {
  return `ScheduledItems[${at.item}].${at.list}[${at.index}]`;
}

/** The element's dates when they are usable, else null (and a warning). */
function checkedDates(element: Record<string, unknown>, at: ElementAt, warnings: UpdateWarning[], memo: PlanMemo): boolean {
  const from = element.DateFrom;
  const to = element.DateTo;
  if (!memo.isDate(from)) {
    warnings.push({ path: `${elementPath(at)}.DateFrom`, message: `not a date (YYYY-MM-DD): ${shown(from)}; element skipped` });
    return false;
  }
  if (!memo.isDate(to)) {
    warnings.push({ path: `${elementPath(at)}.DateTo`, message: `not a date (YYYY-MM-DD): ${shown(to)}; element skipped` });
    return false;
  }
  if (from > to) {
    warnings.push({ path: elementPath(at), message: `reversed date range ${from}..${to}; element skipped` });
    return false;
  }
  return true;
}

/** The members the plan reads of an item, a price element and an availability element. */
const ITEM_MEMBERS = ['ItemID', 'PLU', 'ItemName', 'ItemType', 'PriceUpdates', 'ScheduleUpdates'] as const;
const PRICE_MEMBERS = ['DateFrom', 'DateTo', 'TariffName', 'PriceModel', 'TaxCode', 'TaxRate', 'SellPrice'] as const;
const AVAILABILITY_MEMBERS = ['DateFrom', 'DateTo', 'MealPeriodName', 'Status'] as const;

export const REPEATED_MESSAGE = 'sent more than once in this object, with different values: which one head office meant is not known';

/** The first of `members` that `object` had more than once with different values (parseExact), or null. */
function repeatedOf(object: Record<string, unknown>, members: readonly string[]): string | null {
  const repeated = repeatedMembers(object);
  if (repeated === undefined) return null;
  return members.find((m) => repeated.has(m)) ?? null;
}

function skippedForRepeats(element: Record<string, unknown>, members: readonly string[], at: ElementAt, warnings: UpdateWarning[]): boolean {
  const repeated = repeatedOf(element, members);
  if (repeated === null) return false;
  warnings.push({ path: `${elementPath(at)}.${repeated}`, message: `${REPEATED_MESSAGE}; element skipped` });
  return true;
}

function planPrice(element: unknown, at: ElementAt, currency: string | null, warnings: UpdateWarning[], memo: PlanMemo): PriceRange | null {
  if (!isRecord(element)) {
    warnings.push({ path: elementPath(at), message: 'expected an object; element skipped' });
    return null;
  }
  if (skippedForRepeats(element, PRICE_MEMBERS, at, warnings)) return null;
  if (!checkedDates(element, at, warnings, memo)) return null;
  const tariff = keyText(element.TariffName, 'TariffName');
  if (!tariff.ok) {
    warnings.push({ path: `${elementPath(at)}.TariffName`, message: `${tariff.message}; element skipped` });
    return null;
  }
  const tariffName = tariff.text;
  const tax = keyText(element.TaxCode, 'TaxCode');
  if (!tax.ok) {
    warnings.push({ path: `${elementPath(at)}.TaxCode`, message: `${tax.message}; element skipped` });
    return null;
  }
  const taxCode = tax.text;
  const rate = readTaxRate(element.TaxRate);
  if (!rate.ok) {
    warnings.push({ path: `${elementPath(at)}.TaxRate`, message: `${rate.reason}; element skipped` });
    return null;
  }
  const taxRate = rate.rate;
  if (currency === null) {
    warnings.push({ path: `${elementPath(at)}.SellPrice`, message: 'the update has no known CurrencyIsoCode, so the price cannot be read; element skipped' });
    return null;
  }
  const price = memo.sellPrice(element.SellPrice, currency);
  if (!price.ok) {
    warnings.push({ path: `${elementPath(at)}.SellPrice`, message: `${price.reason}; element skipped` });
    return null;
  }
  const money: Money = price.money;
  if (beyond32Bits(money.minor)) {
    warnings.push({ path: `${elementPath(at)}.SellPrice`, message: wideIntegerMessage('SellPrice', money.text, money.minor, 'sell_price_minor') });
  }
  // Stored as sent (trimmed): the contract promises the service's text, so it is never cut.
  const priceModel = typeof element.PriceModel === 'string' ? element.PriceModel.trim() : null;
  const unreadableModel = priceModel === null ? null : unreadableText(priceModel);
  if (unreadableModel !== null) {
    warnings.push({ path: `${elementPath(at)}.PriceModel`, message: `PriceModel ${unreadableModel}; element skipped` });
    return null;
  }
  return {
    tariffName,
    from: element.DateFrom as IsoDate,
    to: element.DateTo as IsoDate,
    value: { priceModel, taxCode, taxRate, sellPriceMinor: money.minor, sellPrice: money.text, currency },
  };
}

function planAvailability(element: unknown, at: ElementAt, warnings: UpdateWarning[], memo: PlanMemo): AvailabilityRange | null {
  if (!isRecord(element)) {
    warnings.push({ path: elementPath(at), message: 'expected an object; element skipped' });
    return null;
  }
  if (skippedForRepeats(element, AVAILABILITY_MEMBERS, at, warnings)) return null;
  if (!checkedDates(element, at, warnings, memo)) return null;
  const meal = keyText(element.MealPeriodName, 'MealPeriodName');
  if (!meal.ok) {
    warnings.push({ path: `${elementPath(at)}.MealPeriodName`, message: `${meal.message}; element skipped` });
    return null;
  }
  const mealPeriod = meal.text;
  const status = typeof element.Status === 'string' ? element.Status.trim().toUpperCase() : null;
  if (status !== 'AVAILABLE' && status !== 'UNAVAILABLE') {
    warnings.push({ path: `${elementPath(at)}.Status`, message: `unknown Status ${shown(element.Status)}; element skipped` });
    return null;
  }
  return { mealPeriod, from: element.DateFrom as IsoDate, to: element.DateTo as IsoDate, status };
}

/**
 * Turns a body with a valid envelope into what the store writes. Never throws on content: every
 * element it cannot use becomes a warning. `items` is planned lazily, one item at a time as the store
 * writes it, so a large publication's plan never exists in memory all at once; `warnings` is complete
 * after `items` has been iterated. Use `planUpdate` for the whole plan at once.
 */
export function streamUpdate(
  envelope: Omit<Envelope, 'ScheduledItems'> & { readonly ScheduledItems: Iterable<unknown> },
  body: Record<string, unknown>,
  /** The item at an index again (an ItemID sent twice has its earlier entry re-read, not kept). */
  reread: (index: number) => unknown,
): UpdatePlan {
  const warnings = cappedWarnings();
  const currencyText = typeof envelope.CurrencyIsoCode === 'string' ? envelope.CurrencyIsoCode.trim().toUpperCase() : '';
  let currency: string | null = null;
  if (minorDigits(currencyText) !== undefined) currency = currencyText;
  else warnings.push({ path: 'CurrencyIsoCode', message: `unknown or missing ISO 4217 code ${shown(body.CurrencyIsoCode)}; prices in this update are skipped` });
  let locationName = typeof envelope.LocationName === 'string' ? envelope.LocationName.trim() : null;
  const unreadableLocationName = locationName === null ? null : unreadableText(locationName);
  if (unreadableLocationName !== null) {
    warnings.push({ path: 'LocationName', message: `LocationName ${unreadableLocationName}; ignored` });
    locationName = null;
  }
  if (body.LocationName !== undefined && body.LocationName !== null && typeof body.LocationName !== 'string') {
    warnings.push({ path: 'LocationName', message: `expected text, got ${shown(body.LocationName)}; ignored` });
  }
  if (beyond32Bits(envelope.LocationID)) {
    warnings.push({ path: 'LocationID', message: wideIntegerMessage('LocationID', String(envelope.LocationID), envelope.LocationID, 'location_id') });
  }
  if (beyond32Bits(envelope.ChangeSequence)) {
    const columns = 'pos_sync_state.last_change_sequence or pos_changes.change_sequence';
    warnings.push({ path: 'ChangeSequence', message: wideIntegerMessage('ChangeSequence', String(envelope.ChangeSequence), envelope.ChangeSequence, columns) });
  }
  return {
    locationId: envelope.LocationID,
    locationName: locationName === '' ? null : locationName,
    currency,
    changeSequence: envelope.ChangeSequence,
    parentChangeSequence: envelope.ParentChangeSequence,
    items: planItems(envelope.ScheduledItems, currency, warnings, reread),
    warnings,
  };
}

/** The whole plan at once (tests, small tools). */
export function planUpdate(envelope: Envelope, body: Record<string, unknown>): UpdatePlan & { readonly items: readonly PlannedItem[] } {
  const plan = streamUpdate(envelope, body, (index) => envelope.ScheduledItems[index]);
  return { ...plan, items: [...plan.items] };
}

/** An element already planned for one key (item + tariff, or item + meal period) in this update. */
interface Placed<V> {
  readonly at: ElementAt;
  readonly from: IsoDate;
  readonly to: IsoDate;
  readonly value: V;
}

/**
 * The same key twice in one update with overlapping dates and different values: the store lays the
 * elements over each other in body order, so the later element wins on the overlap (as a later update
 * would). That rule is kept, and each such later element is reported so head office can fix its
 * export. Elements that repeat the same value on overlapping dates change nothing and are not reported.
 * Per key, every element is compared with the earlier ones, the same order of work as the store's own
 * overlay of those elements.
 */
function checkSameKey<V>(earlier: readonly Placed<V>[] | undefined, label: () => string, element: Placed<V>, equals: (a: V, b: V) => boolean, warnings: UpdateWarning[]): void {
  if (earlier === undefined) return;
  // Counted in a loop, not filtered into a new array: this runs for every element of a publication.
  let first: Placed<V> | undefined;
  let clashes = 0;
  for (const e of earlier) {
    if (e.from <= element.to && element.from <= e.to && !equals(e.value, element.value)) {
      first ??= e;
      clashes++;
    }
  }
  if (first) {
    const from = first.from > element.from ? first.from : element.from;
    const to = first.to < element.to ? first.to : element.to;
    const more = clashes > 1 ? ` (and ${clashes - 1} more earlier element${clashes > 2 ? 's' : ''})` : '';
    warnings.push({
      path: elementPath(element.at),
      message: `${label()}: ${element.from}..${element.to} overlaps ${elementPath(first.at)} (${first.from}..${first.to}) on ${from}..${to} with a different value in the same update${more}; the later element wins where they overlap`,
    });
  }
}

/** Appends `placed` to the list under `key`. */
function placeInto<V>(map: Map<string, Placed<V>[]>, key: string, placed: Placed<V>): void {
  const list = map.get(key);
  if (list) list.push(placed);
  else map.set(key, [placed]);
}

/**
 * The elements of an earlier entry with the same ItemID, planned again from the body (its warnings
 * were reported the first time), for the same-key check across entries.
 */
function placeEarlierEntry(
  raw: unknown,
  index: number,
  currency: string | null,
  prices: Map<string, Placed<PriceValue>[]>,
  availability: Map<string, Placed<AvailabilityStatus>[]>,
  memo: PlanMemo,
): void {
  if (!isRecord(raw)) return;
  const path = `ScheduledItems[${index}]`;
  const ignored: UpdateWarning[] = [];
  arrayField(raw, 'PriceUpdates', path, ignored).forEach((e, i) => {
    const at: ElementAt = { item: index, list: 'PriceUpdates', index: i };
    const planned = planPrice(e, at, currency, ignored, memo);
    if (planned) placeInto(prices, planned.tariffName, { at, from: planned.from, to: planned.to, value: planned.value });
  });
  arrayField(raw, 'ScheduleUpdates', path, ignored).forEach((e, i) => {
    const at: ElementAt = { item: index, list: 'ScheduleUpdates', index: i };
    const planned = planAvailability(e, at, ignored, memo);
    if (planned) placeInto(availability, planned.mealPeriod, { at, from: planned.from, to: planned.to, value: planned.status });
  });
}

function* planItems(
  scheduledItems: Iterable<unknown>,
  currency: string | null,
  warnings: UpdateWarning[],
  reread: (index: number) => unknown,
): Generator<PlannedItem> {
  // Any iterable: the applier passes items parsed one at a time from the stored bytes (src/domain/body.ts).
  // Across items only each ItemID's entry indexes are kept: an ItemID sent twice (rare) has its earlier
  // entries planned again from the body for the same-key check, so no element outlives its item.
  const entriesOf = new Map<string, number[]>();
  const memo = new PlanMemo();
  let index = -1;
  for (const raw of scheduledItems) {
    index++;
    const path = `ScheduledItems[${index}]`;
    if (!isRecord(raw)) {
      warnings.push({ path, message: 'expected an object; item skipped' });
      continue;
    }
    const repeatedItem = repeatedOf(raw, ITEM_MEMBERS);
    if (repeatedItem !== null) {
      warnings.push({ path: `${path}.${repeatedItem}`, message: `${REPEATED_MESSAGE}; item skipped` });
      continue;
    }
    const id = identifierText(raw.ItemID, 'ItemID');
    if (!id.ok) {
      warnings.push({ path: `${path}.ItemID`, message: `${id.message}; item skipped` });
      continue;
    }
    const itemId = id.text;
    const pluField = identifierText(raw.PLU, 'PLU');
    if (!pluField.ok) {
      warnings.push({ path: `${path}.PLU`, message: `${pluField.message}; item skipped` });
      continue;
    }
    const plu = pluField.text;
    const type = typeof raw.ItemType === 'string' ? raw.ItemType.trim().toUpperCase() : null;
    if (type !== 'RECIPE' && type !== 'MENU') {
      warnings.push({ path: `${path}.ItemType`, message: `unknown ItemType ${shown(raw.ItemType)}; item skipped` });
      continue;
    }
    // Stored as sent (trimmed), never cut: the till shows what head office named the item.
    const name = typeof raw.ItemName === 'string' ? raw.ItemName.trim() : '';
    const unreadableName = unreadableText(name);
    if (unreadableName !== null) {
      warnings.push({ path: `${path}.ItemName`, message: `ItemName ${unreadableName}; item skipped` });
      continue;
    }
    if (name === '') warnings.push({ path: `${path}.ItemName`, message: 'missing or empty; stored as empty' });
    const seenPrices = new Map<string, Placed<PriceValue>[]>();
    const seenAvailability = new Map<string, Placed<AvailabilityStatus>[]>();
    const earlierEntries = entriesOf.get(itemId);
    if (earlierEntries) {
      for (const j of earlierEntries) placeEarlierEntry(reread(j), j, currency, seenPrices, seenAvailability, memo);
      // The till holds one PLU, name and type per item: the later entry's. Said when they differ.
      warnings.push(...differingEntry(reread(earlierEntries[earlierEntries.length - 1]!), earlierEntries[earlierEntries.length - 1]!, { itemId, plu, name, type }, path));
    }
    const prices: PriceRange[] = [];
    const priceElements = arrayField(raw, 'PriceUpdates', path, warnings);
    for (let i = 0; i < priceElements.length; i++) {
      const at: ElementAt = { item: index, list: 'PriceUpdates', index: i };
      const planned = planPrice(priceElements[i], at, currency, warnings, memo);
      if (!planned) continue;
      const placed = { at, from: planned.from, to: planned.to, value: planned.value };
      checkSameKey(seenPrices.get(planned.tariffName), () => `item ${shown(itemId)}, tariff ${shown(planned.tariffName)}`, placed, samePriceValue, warnings);
      placeInto(seenPrices, planned.tariffName, placed);
      prices.push(planned);
    }
    const availability: AvailabilityRange[] = [];
    const scheduleElements = arrayField(raw, 'ScheduleUpdates', path, warnings);
    for (let i = 0; i < scheduleElements.length; i++) {
      const at: ElementAt = { item: index, list: 'ScheduleUpdates', index: i };
      const planned = planAvailability(scheduleElements[i], at, warnings, memo);
      if (!planned) continue;
      const placed = { at, from: planned.from, to: planned.to, value: planned.status };
      checkSameKey(seenAvailability.get(planned.mealPeriod), () => `item ${shown(itemId)}, meal period ${shown(planned.mealPeriod)}`, placed, (a, b) => a === b, warnings);
      placeInto(seenAvailability, planned.mealPeriod, placed);
      availability.push(planned);
    }
    if (earlierEntries) earlierEntries.push(index);
    else entriesOf.set(itemId, [index]);
    yield { itemId, plu, name, type, prices, availability };
  }
}

/**
 * Warnings for an ItemID sent again in one update with another PLU, name or type than its entry at
 * `earlierIndex`: the till keeps the later entry's, so a till looking the earlier PLU up finds nothing.
 */
function differingEntry(earlier: unknown, earlierIndex: number, later: { readonly itemId: string; readonly plu: string; readonly name: string; readonly type: string }, path: string): UpdateWarning[] {
  if (!isRecord(earlier)) return [];
  const earlierPlu = identifierText(earlier.PLU, 'PLU');
  const was: [string, string, string | null][] = [
    ['PLU', later.plu, earlierPlu.ok ? earlierPlu.text : null],
    ['ItemName', later.name, typeof earlier.ItemName === 'string' ? earlier.ItemName.trim() : ''],
    ['ItemType', later.type, typeof earlier.ItemType === 'string' ? earlier.ItemType.trim().toUpperCase() : null],
  ];
  return was
    .filter(([, now, before]) => before !== null && before !== now)
    .map(([field, now, before]) => ({
      path: `${path}.${field}`,
      message: `ItemID ${shown(later.itemId)} is also at ScheduledItems[${earlierIndex}] with ${field} ${shown(before)}: the till keeps this entry's, ${shown(now)}`,
    }));
}

export function samePriceValue(a: PriceValue, b: PriceValue): boolean {
  return (
    a === b ||
    (a.priceModel === b.priceModel &&
    a.taxCode === b.taxCode &&
    a.taxRate === b.taxRate &&
    a.sellPriceMinor === b.sellPriceMinor &&
    a.currency === b.currency)
  );
}

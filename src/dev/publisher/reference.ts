import { CURRENCY_DIGITS } from './generator';
import { dateOf, dayOf } from './days';

/**
 * The expected end state, kept as a plain day-by-day map: for every (location, item, tariff) and
 * every (location, item, meal period), what holds on each single date. It shares no code with the
 * agent's range overlay, so comparing the two is a real check: "a shorter-range update takes priority
 * over any earlier received longer-range data for the same dates" becomes "later writes replace the
 * days they name", and "UNAVAILABLE removes availability only for the dates in that update" becomes
 * "those days, and only those, hold UNAVAILABLE".
 *
 * It understands the bodies the generator produces (valid ones); it is not a validator.
 */

/** Day-level state: key -> value text. Keys and values are built the same way from the agent's views. */
export interface DayState {
  readonly prices: Map<string, string>;
  readonly availability: Map<string, string>;
  readonly lastChangeSequence: Map<number, number>;
}

interface ItemInfo {
  plu: string;
  name: string;
  type: string;
}

export function priceKey(location: number, itemId: string, tariff: string, day: string): string {
  return `${location}\t${itemId}\t${tariff}\t${day}`;
}

export function priceValue(item: ItemInfo, cell: string): string {
  return `${item.plu}|${item.name}|${item.type}|${cell}`;
}

function idText(value: unknown): string {
  return typeof value === 'number' ? String(value) : String(value).trim();
}

function minorOf(value: unknown, digits: number): number {
  const text = typeof value === 'number' ? value.toFixed(digits) : String(value).trim();
  const [whole, fraction = ''] = text.split('.');
  return Number(`${whole}${fraction.padEnd(digits, '0').slice(0, digits)}`);
}

function moneyText(minor: number, digits: number): string {
  if (digits === 0) return String(minor);
  const s = String(minor).padStart(digits + 1, '0');
  return `${s.slice(0, -digits)}.${s.slice(-digits)}`;
}

export class ReferenceModel {
  private readonly items = new Map<string, ItemInfo>();
  /** location \t item \t tariff -> day number -> price cell */
  private readonly prices = new Map<string, Map<number, string>>();
  private readonly availability = new Map<string, Map<number, string>>();
  readonly lastChangeSequence = new Map<number, number>();

  /** Applies one update body, as head office means it, in chain order. */
  apply(body: Record<string, unknown>): void {
    const location = Number(body.LocationID);
    const currency = String(body.CurrencyIsoCode);
    const digits = CURRENCY_DIGITS[currency];
    if (digits === undefined) throw new Error(`reference model: unknown currency ${currency}`);
    for (const raw of body.ScheduledItems as Record<string, unknown>[]) {
      const itemId = idText(raw.ItemID);
      const itemKey = `${location}\t${itemId}`;
      this.items.set(itemKey, { plu: idText(raw.PLU), name: String(raw.ItemName).trim(), type: String(raw.ItemType) });
      for (const p of (raw.PriceUpdates as Record<string, unknown>[] | undefined) ?? []) {
        const key = `${itemKey}\t${String(p.TariffName)}`;
        let days = this.prices.get(key);
        if (!days) this.prices.set(key, (days = new Map()));
        const minor = minorOf(p.SellPrice, digits);
        const cell = `${String(p.PriceModel)}|${String(p.TaxCode)}|${Number(p.TaxRate)}|${minor}|${moneyText(minor, digits)}|${currency}`;
        for (let d = dayOf(String(p.DateFrom)); d <= dayOf(String(p.DateTo)); d++) days.set(d, cell);
      }
      for (const s of (raw.ScheduleUpdates as Record<string, unknown>[] | undefined) ?? []) {
        const key = `${itemKey}\t${String(s.MealPeriodName)}`;
        let days = this.availability.get(key);
        if (!days) this.availability.set(key, (days = new Map()));
        for (let d = dayOf(String(s.DateFrom)); d <= dayOf(String(s.DateTo)); d++) days.set(d, String(s.Status));
      }
    }
    this.lastChangeSequence.set(location, Number(body.ChangeSequence));
  }

  state(): DayState {
    const prices = new Map<string, string>();
    for (const [key, days] of this.prices) {
      const [location, itemId, tariff] = key.split('\t') as [string, string, string];
      const item = this.items.get(`${location}\t${itemId}`) as ItemInfo;
      for (const [day, cell] of days) prices.set(priceKey(Number(location), itemId, tariff, dateOf(day)), priceValue(item, cell));
    }
    const availability = new Map<string, string>();
    for (const [key, days] of this.availability) {
      const [location, itemId, period] = key.split('\t') as [string, string, string];
      const item = this.items.get(`${location}\t${itemId}`) as ItemInfo;
      for (const [day, status] of days) availability.set(priceKey(Number(location), itemId, period, dateOf(day)), `${item.plu}|${item.name}|${status}`);
    }
    return { prices, availability, lastChangeSequence: new Map(this.lastChangeSequence) };
  }
}

/** The subset of a better-sqlite3 connection the snapshot needs (so this module imports no driver). */
export interface ViewReader {
  prepare(sql: string): { all(...params: unknown[]): unknown[] };
}

/**
 * Reads the POS views (the till's contract, not internal tables) and expands every range to days, in
 * the reference model's key/value format.
 */
export function stateFromViews(db: ViewReader): DayState {
  const prices = new Map<string, string>();
  const priceRows = db
    .prepare(
      `SELECT location_id, plu, item_id, item_name, item_type, tariff_name, price_model, tax_code, tax_rate,
              sell_price_minor, sell_price, currency, date_from, date_to FROM pos_prices`,
    )
    .all() as {
    location_id: number; plu: string; item_id: string; item_name: string; item_type: string; tariff_name: string;
    price_model: string | null; tax_code: string; tax_rate: number; sell_price_minor: number; sell_price: string;
    currency: string; date_from: string; date_to: string;
  }[];
  for (const r of priceRows) {
    const cell = `${r.price_model}|${r.tax_code}|${r.tax_rate}|${r.sell_price_minor}|${r.sell_price}|${r.currency}`;
    const value = priceValue({ plu: r.plu, name: r.item_name, type: r.item_type }, cell);
    for (let d = dayOf(r.date_from); d <= dayOf(r.date_to); d++) {
      const key = priceKey(r.location_id, r.item_id, r.tariff_name, dateOf(d));
      // Two rows covering one day would be a broken overlay: make it visible as a difference.
      prices.set(key, prices.has(key) ? `DUPLICATE ROWS: ${prices.get(key)} / ${value}` : value);
    }
  }
  const availability = new Map<string, string>();
  const availabilityRows = db
    .prepare('SELECT location_id, plu, item_id, item_name, meal_period, status, date_from, date_to FROM pos_availability')
    .all() as { location_id: number; plu: string; item_id: string; item_name: string; meal_period: string; status: string; date_from: string; date_to: string }[];
  for (const r of availabilityRows) {
    const value = `${r.plu}|${r.item_name}|${r.status}`;
    for (let d = dayOf(r.date_from); d <= dayOf(r.date_to); d++) {
      const key = priceKey(r.location_id, r.item_id, r.meal_period, dateOf(d));
      availability.set(key, availability.has(key) ? `DUPLICATE ROWS: ${availability.get(key)} / ${value}` : value);
    }
  }
  const lastChangeSequence = new Map<number, number>();
  for (const r of db.prepare('SELECT location_id, last_change_sequence FROM pos_sync_state').all() as { location_id: number; last_change_sequence: number | null }[]) {
    if (r.last_change_sequence !== null) lastChangeSequence.set(r.location_id, r.last_change_sequence);
  }
  return { prices, availability, lastChangeSequence };
}

/** Differences between an expected and an actual state (at most `limit` lines; empty when equal). */
export function compareStates(expected: DayState, actual: DayState, limit = 20): string[] {
  const out: string[] = [];
  const diffMaps = <K>(label: string, a: ReadonlyMap<K, string | number>, b: ReadonlyMap<K, string | number>): void => {
    for (const [key, want] of a) {
      if (out.length >= limit) return;
      const got = b.get(key);
      if (got !== want) out.push(`${label} ${String(key).replace(/\t/g, ' / ')}: expected ${want}, got ${got ?? '(nothing)'}`);
    }
    for (const [key, got] of b) {
      if (out.length >= limit) return;
      if (!a.has(key)) out.push(`${label} ${String(key).replace(/\t/g, ' / ')}: expected nothing, got ${got}`);
    }
  };
  diffMaps('sequence of location', expected.lastChangeSequence, actual.lastChangeSequence);
  diffMaps('price', expected.prices, actual.prices);
  diffMaps('availability', expected.availability, actual.availability);
  return out;
}

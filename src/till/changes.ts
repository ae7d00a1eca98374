import { changeWindow, changesBetween, type KeyedRange, type ValueChange } from '../domain/changes';
import { addDays, type IsoDate } from '../domain/dates';
import { samePriceValue, type AvailabilityStatus, type PriceValue } from '../domain/payload';
import type { Db } from '../store/database';
import type { PriceRow } from './writer';
import type { ChangeCause, UpcomingChange, UpcomingChanges } from '../store/read-models';

/**
 * What changes on the till next (`pos-sync-agent changes`, the window's Coming up tab), from the till
 * file's range tables, instead of asking the views day by day. Per location and table, one search of
 * the (location_id, date_to) index for the ranges that end on or after the day before the window (so
 * the history before it is never read), sorted here into the order the pure function needs: with an
 * ORDER BY, SQLite may prefer an index that gives the order to one that bounds the dates, and read the
 * whole location. The updates that caused the changes are looked up one by one, for the changes found.
 */

interface PriceRangeRow extends Omit<PriceRow, 'id'> {
  item_id: string;
  tariff_name: string;
  source_inbox_id: number;
}

interface AvailabilityRangeRow {
  item_id: string;
  meal_period: string;
  date_from: IsoDate;
  date_to: IsoDate;
  status: AvailabilityStatus;
  source_inbox_id: number;
}

export interface ChangesQuery {
  /** One location, or null for every location the till file has. */
  readonly locationId: number | null;
  /** The first day for a location (callers pass the location's today unless a date was given). */
  readonly fromFor: (locationId: number) => IsoDate;
  /** How many days, from the first (1 = that day only). */
  readonly days: number;
}

/** A location's ranges that overlap [from - 1, to], through (location_id, date_to) (test/integration/date-bounded-plans.test.ts). */
export const UPCOMING_PRICES_SQL = `SELECT item_id, tariff_name, date_from, date_to, price_model, tax_code, tax_rate, sell_price_minor, sell_price, currency, source_inbox_id
  FROM price_ranges WHERE location_id = ? AND date_to >= ? AND date_from <= ?`;
export const UPCOMING_AVAILABILITY_SQL = `SELECT item_id, meal_period, date_from, date_to, status, source_inbox_id
  FROM availability_ranges WHERE location_id = ? AND date_to >= ? AND date_from <= ?`;

export function upcomingChanges(till: Db, query: ChangesQuery): UpcomingChanges {
  const locations =
    query.locationId !== null
      ? [query.locationId]
      : till.prepare<[], { location_id: number }>('SELECT DISTINCT location_id FROM items ORDER BY location_id').all().map((r) => r.location_id);
  const prices = till.prepare<[number, string, string], PriceRangeRow>(UPCOMING_PRICES_SQL);
  const availability = till.prepare<[number, string, string], AvailabilityRangeRow>(UPCOMING_AVAILABILITY_SQL);
  const items = till.prepare<[number], { item_id: string; plu: string; item_name: string }>('SELECT item_id, plu, item_name FROM items WHERE location_id = ?');
  const cause = till.prepare<[number], { inbox_id: number; change_sequence: number; applied_at: string }>(
    'SELECT inbox_id, change_sequence, applied_at FROM applied_updates WHERE inbox_id = ?',
  );

  const windows: { locationId: number; from: string; to: string }[] = [];
  const changes: UpcomingChange[] = [];
  const days = Math.max(1, Math.trunc(query.days));
  // One read transaction: every table at the same state, even while the applier commits.
  till.transaction(() => {
    for (const locationId of locations) {
      const { from, to } = changeWindow(query.fromFor(locationId), days);
      windows.push({ locationId, from, to });
      const dayBefore = addDays(from, -1);
      const priceChanges = changesBetween(
        inKeyOrder(prices.all(locationId, dayBefore, to).map(
          (r): KeyedRange<PriceValue> => ({
            itemId: r.item_id,
            key: r.tariff_name,
            from: r.date_from,
            to: r.date_to,
            value: { priceModel: r.price_model, taxCode: r.tax_code, taxRate: r.tax_rate, sellPriceMinor: r.sell_price_minor, sellPrice: r.sell_price, currency: r.currency },
            source: r.source_inbox_id,
          }),
        )),
        from,
        to,
        samePriceValue,
      );
      const availabilityChanges = changesBetween(
        inKeyOrder(availability.all(locationId, dayBefore, to).map(
          (r): KeyedRange<AvailabilityStatus> => ({ itemId: r.item_id, key: r.meal_period, from: r.date_from, to: r.date_to, value: r.status, source: r.source_inbox_id }),
        )),
        from,
        to,
        (a, b) => a === b,
      );
      if (priceChanges.length === 0 && availabilityChanges.length === 0) continue;
      const itemInfo = new Map(items.all(locationId).map((i) => [i.item_id, i]));
      const causes = new Map<number, ChangeCause | null>();
      const causeOf = (source: number): ChangeCause | null => {
        if (!causes.has(source)) {
          const c = cause.get(source);
          causes.set(source, c ? { inboxId: c.inbox_id, changeSequence: c.change_sequence, appliedAt: c.applied_at } : null);
        }
        return causes.get(source)!;
      };
      // A change between two touching ranges: the later of the updates that wrote them caused it (the
      // one that starts a new value here, or the one whose value ends here), by the chain's order.
      const causeOfChange = (c: ValueChange<unknown>): ChangeCause | null => {
        const starting = causeOf(c.source);
        const ending = c.endingSource === null ? null : causeOf(c.endingSource);
        return ending !== null && (starting === null || ending.changeSequence > starting.changeSequence) ? ending : starting;
      };
      const common = (c: ValueChange<unknown>): Pick<UpcomingChange, 'date' | 'locationId' | 'itemId' | 'plu' | 'itemName'> => {
        const info = itemInfo.get(c.itemId);
        return { date: c.date, locationId, itemId: c.itemId, plu: info?.plu ?? '', itemName: info?.item_name ?? '' };
      };
      for (const c of priceChanges) {
        changes.push({
          ...common(c),
          kind: 'price',
          tariffName: c.key,
          mealPeriod: null,
          before: c.before?.sellPrice ?? null,
          after: c.after?.sellPrice ?? null,
          currency: (c.after ?? c.before)?.currency ?? null,
          taxBefore: c.before ? `${c.before.taxCode} ${c.before.taxRate}%` : null,
          taxAfter: c.after ? `${c.after.taxCode} ${c.after.taxRate}%` : null,
          cause: causeOfChange(c),
        });
      }
      for (const c of availabilityChanges) {
        changes.push({ ...common(c), kind: 'availability', tariffName: null, mealPeriod: c.key, before: c.before, after: c.after, currency: null, taxBefore: null, taxAfter: null, cause: causeOfChange(c) });
      }
    }
  })();
  changes.sort(compareChanges);
  return { windows, changes };
}

/** Grouped by (item, key), by first date within a group: what changesBetween needs (ranges of one key never overlap). */
function inKeyOrder<V>(ranges: KeyedRange<V>[]): KeyedRange<V>[] {
  return ranges.sort((a, b) => cmp(a.itemId, b.itemId) || cmp(a.key, b.key) || cmp(a.from, b.from));
}

/** By date, location, item name, PLU, item; prices before availability; then tariff or meal period. */
function compareChanges(a: UpcomingChange, b: UpcomingChange): number {
  return (
    cmp(a.date, b.date) ||
    a.locationId - b.locationId ||
    cmp(a.itemName, b.itemName) ||
    cmp(a.plu, b.plu) ||
    cmp(a.itemId, b.itemId) ||
    cmp(a.kind, b.kind) * -1 ||
    cmp(a.tariffName ?? a.mealPeriod ?? '', b.tariffName ?? b.mealPeriod ?? '')
  );
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The changes for `pos-sync-agent changes` and the window: each location's window starts on its own
 * today (the one the till's _today views use, via the core) unless a first date is given.
 */
export function upcomingChangesFor(
  core: { readonly tillDb: Db; today(locationId: number | null): IsoDate },
  options: { locationId: number | null; from: IsoDate | null; days: number },
): UpcomingChanges {
  return upcomingChanges(core.tillDb, { locationId: options.locationId, days: options.days, fromFor: (id) => options.from ?? core.today(id) });
}

/** Most days one query may cover: about a year, plenty for planning and bounded for the window's API. */
export const MAX_CHANGE_DAYS = 366;

import { addDays, FIRST_DATE, LAST_DATE, type IsoDate } from '../domain/dates';
import { samePriceValue, type AvailabilityStatus, type PriceValue, type UpdatePlan } from '../domain/payload';
import { diffRanges, overlayAll, type DatedValue } from '../domain/ranges';
import { crashPoint } from '../crash-points';
import type { Db } from '../store/database';
import { ensureLocationOffsets } from './location-time';

/**
 * How long pos_changes keeps a row (docs/pos-database.md, "Change feed"). A till that has not polled
 * for longer finds a gap (its last change_id below the oldest kept minus one) and reads everything.
 */
export const CHANGE_FEED_RETENTION_DAYS = 30;

/**
 * The ranges of one key that one of an update's windows may touch. SQLite reaches them through (location_id,
 * item_id, date_to, key) bounded by date_to (till migration 005), so an apply reads the key's ranges
 * from the window on, never the history before it (test/integration/date-bounded-plans.test.ts).
 */
export const SELECT_PRICES_SQL = `SELECT id, date_from, date_to, price_model, tax_code, tax_rate, sell_price_minor, sell_price, currency, source_inbox_id
  FROM price_ranges WHERE location_id = ? AND item_id = ? AND tariff_name = ? AND date_to >= ? AND date_from <= ?
  ORDER BY date_from`;
export const SELECT_AVAILABILITY_SQL = `SELECT id, date_from, date_to, status, source_inbox_id FROM availability_ranges
  WHERE location_id = ? AND item_id = ? AND meal_period = ? AND date_to >= ? AND date_from <= ? ORDER BY date_from`;

/** A price range row's value columns as the till file stores them (also read by till/changes.ts). */
export interface PriceRow {
  id: number;
  date_from: IsoDate;
  date_to: IsoDate;
  price_model: string | null;
  tax_code: string;
  tax_rate: number;
  sell_price_minor: number;
  sell_price: string;
  currency: string;
  source_inbox_id: number;
}

interface AvailabilityRow {
  id: number;
  date_from: IsoDate;
  date_to: IsoDate;
  status: AvailabilityStatus;
  source_inbox_id: number;
}

function groupBy<T>(values: readonly T[], key: (v: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const v of values) {
    const k = key(v);
    const list = groups.get(k);
    if (list) list.push(v);
    else groups.set(k, [v]);
  }
  return groups;
}

/**
 * The dates whose stored ranges an update's ranges may split, trim or merge with: each incoming range
 * one day wider on each side (so touching ranges with equal values can be merged), and windows that
 * overlap joined. Apart, not one window from the first date to the last: a republication of next month
 * and of the month a year ahead must not read the year in between.
 */
function windows(ranges: readonly { from: IsoDate; to: IsoDate }[]): [from: IsoDate, to: IsoDate][] {
  // Never past the ends of the date domain (10000-01-01 would sort before 9999-12-31 as text and hide
  // every open-ended range).
  const wide = ranges
    .map((r): [IsoDate, IsoDate] => [r.from === FIRST_DATE ? r.from : addDays(r.from, -1), r.to === LAST_DATE ? r.to : addDays(r.to, 1)])
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const out: [IsoDate, IsoDate][] = [];
  for (const w of wide) {
    const last = out[out.length - 1];
    if (last && w[0] <= last[1]) {
      if (w[1] > last[1]) last[1] = w[1];
    } else {
      out.push([w[0], w[1]]);
    }
  }
  return out;
}

/**
 * The stored ranges of one key that overlap any of the windows, once each (a long range may overlap
 * two), in date order.
 */
function rangesIn<R extends { id: number; date_from: IsoDate }>(read: (from: IsoDate, to: IsoDate) => R[], within: readonly [IsoDate, IsoDate][]): R[] {
  if (within.length === 1) return read(within[0]![0], within[0]![1]);
  const byId = new Map<number, R>();
  for (const [from, to] of within) for (const r of read(from, to)) byId.set(r.id, r);
  return [...byId.values()].sort((a, b) => (a.date_from < b.date_from ? -1 : a.date_from > b.date_from ? 1 : 0));
}

/**
 * Whether replacing the `remove` rows of `before` by `add` leaves the same dates with the same values:
 * an update that resends a range as it was (the overlay replaces it with an equal one).
 */
function sameRanges<V>(before: readonly DatedValue<V>[], remove: readonly number[], add: readonly DatedValue<V>[], equals: (a: V, b: V) => boolean): boolean {
  if (remove.length !== add.length) return false;
  const removed = new Set(remove);
  const gone = before.filter((r) => r.id !== undefined && removed.has(r.id)).sort((a, b) => (a.from < b.from ? -1 : a.from > b.from ? 1 : 0));
  const added = [...add].sort((a, b) => (a.from < b.from ? -1 : a.from > b.from ? 1 : 0));
  return gone.length === added.length && gone.every((r, i) => r.from === added[i]!.from && r.to === added[i]!.to && equals(r.value, added[i]!.value));
}

/**
 * Writes an update plan into the till file's menu tables. Must run inside the caller's transaction: the
 * applier commits the menu change, the location's sequence and the applied_updates record together.
 */
export class MenuWriter {
  private readonly upsertItem;
  private readonly selectPrices;
  private readonly deletePrice;
  private readonly insertPrice;
  private readonly selectAvailability;
  private readonly deleteAvailability;
  private readonly insertAvailability;
  private readonly anyRange;
  private readonly insertChange;
  private readonly pruneChanges;

  constructor(
    private readonly db: Db,
    /**
     * The location's timezone, for its UTC offsets (src/till/location-time.ts): written in the apply's
     * transaction when a location first appears, so its _today views are right from its first rows.
     */
    private readonly timezoneFor: ((locationId: number) => string) | null = null,
  ) {
    // Only a real change updates the row (and counts as one in .changes): pos_changes lists the items
    // an update changed, not every item it resent. updated_by is the update that last changed the item.
    this.upsertItem = db.prepare(
      `INSERT INTO items (location_id, item_id, plu, item_name, item_type, updated_by) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (location_id, item_id) DO UPDATE SET plu = excluded.plu, item_name = excluded.item_name,
         item_type = excluded.item_type, updated_by = excluded.updated_by
       WHERE plu IS NOT excluded.plu OR item_name IS NOT excluded.item_name OR item_type IS NOT excluded.item_type`,
    );
    this.insertChange = db.prepare(
      'INSERT INTO item_changes (location_id, item_id, plu, inbox_id, change_sequence, applied_at) VALUES (?, ?, ?, ?, ?, ?)',
    );
    // The newest row is never pruned, however old: a till tells it missed pruned rows by the oldest
    // row left being past its last + 1 (docs/pos-database.md, "Change feed"), which an empty feed
    // cannot say.
    this.pruneChanges = db.prepare('DELETE FROM item_changes WHERE applied_at < ? AND change_id < (SELECT max(change_id) FROM item_changes)');
    this.selectPrices = db.prepare<[number, string, string, string, string], PriceRow>(SELECT_PRICES_SQL);
    this.deletePrice = db.prepare('DELETE FROM price_ranges WHERE id = ?');
    this.insertPrice = db.prepare(
      `INSERT INTO price_ranges (location_id, item_id, tariff_name, date_from, date_to, price_model, tax_code, tax_rate,
                                 sell_price_minor, sell_price, currency, source_inbox_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.selectAvailability = db.prepare<[number, string, string, string, string], AvailabilityRow>(SELECT_AVAILABILITY_SQL);
    this.deleteAvailability = db.prepare('DELETE FROM availability_ranges WHERE id = ?');
    this.anyRange = db.prepare<[number, number], { one: number }>(
      `SELECT 1 AS one WHERE EXISTS (SELECT 1 FROM price_ranges WHERE location_id = ?)
          OR EXISTS (SELECT 1 FROM availability_ranges WHERE location_id = ?)`,
    );
    this.insertAvailability = db.prepare(
      `INSERT INTO availability_ranges (location_id, item_id, meal_period, date_from, date_to, status, source_inbox_id)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
  }

  /**
   * Returns how many range rows were written (for the apply report) and how many items changed (one
   * pos_changes row each). `appliedAt` is the applied_at the applier records for this update.
   */
  write(plan: UpdatePlan, inboxId: number, appliedAt: string = new Date().toISOString()): { rowsWritten: number; itemsChanged: number } {
    const location = plan.locationId;
    let rowsWritten = 0;
    let itemsChanged = 0;
    if (this.timezoneFor) ensureLocationOffsets(this.db, location, this.timezoneFor(location), Date.parse(appliedAt));
    // A location's first publication finds no ranges to overlay: skip the look-ups (one per key of
    // every item) for every item this update has not written yet. An ItemID sent twice reads
    // back what its earlier entry wrote.
    const fresh = this.anyRange.get(location, location) === undefined;
    const itemsWritten = new Set<string>();
    for (const item of plan.items) {
      let changed = this.upsertItem.run(location, item.itemId, item.plu, item.name, item.type, inboxId).changes > 0;
      const mustRead = !fresh || itemsWritten.has(item.itemId);
      if (fresh) itemsWritten.add(item.itemId);

      for (const [tariff, incoming] of groupBy(item.prices, (p) => p.tariffName)) {
        const before: DatedValue<PriceValue>[] = (mustRead ? rangesIn((from, to) => this.selectPrices.all(location, item.itemId, tariff, from, to), windows(incoming)) : [])
          .map((r) => ({
            id: r.id,
            from: r.date_from,
            to: r.date_to,
            source: r.source_inbox_id,
            value: {
              priceModel: r.price_model,
              taxCode: r.tax_code,
              taxRate: r.tax_rate,
              sellPriceMinor: r.sell_price_minor,
              sellPrice: r.sell_price,
              currency: r.currency,
            },
          }));
        // A planned price range is a dated value as it is (its tariffName is not read).
        const after = overlayAll(before, incoming, samePriceValue);
        const { remove, add } = diffRanges(before, after);
        // Resent as it was: keep the rows (and their source update) and record no change.
        if (sameRanges(before, remove, add, samePriceValue)) continue;
        for (const id of remove) this.deletePrice.run(id);
        for (const r of add) {
          const v = r.value;
          // A piece left of a stored range keeps the update that set its value; what this update sent is its own.
          this.insertPrice.run(location, item.itemId, tariff, r.from, r.to, v.priceModel, v.taxCode, v.taxRate, v.sellPriceMinor, v.sellPrice, v.currency, r.source ?? inboxId);
          crashPoint('apply-row');
        }
        rowsWritten += add.length;
        changed = true;
      }

      for (const [mealPeriod, incoming] of groupBy(item.availability, (a) => a.mealPeriod)) {
        const before: DatedValue<AvailabilityStatus>[] = (mustRead ? rangesIn((from, to) => this.selectAvailability.all(location, item.itemId, mealPeriod, from, to), windows(incoming)) : [])
          .map((r) => ({ id: r.id, from: r.date_from, to: r.date_to, value: r.status, source: r.source_inbox_id }));
        const after = overlayAll(before, incoming.map((a) => ({ from: a.from, to: a.to, value: a.status })), (a, b) => a === b);
        const { remove, add } = diffRanges(before, after);
        if (sameRanges(before, remove, add, (a, b) => a === b)) continue;
        for (const id of remove) this.deleteAvailability.run(id);
        for (const r of add) {
          this.insertAvailability.run(location, item.itemId, mealPeriod, r.from, r.to, r.value, r.source ?? inboxId);
          crashPoint('apply-row');
        }
        rowsWritten += add.length;
        changed = true;
      }
      if (changed) {
        this.insertChange.run(location, item.itemId, item.plu, inboxId, plan.changeSequence, appliedAt);
        itemsChanged += 1;
      }
    }
    // After this update's own rows: the newest row left is this update's when it changed anything.
    this.pruneChanges.run(new Date(Date.parse(appliedAt) - CHANGE_FEED_RETENTION_DAYS * 86_400_000).toISOString());
    // The plan's warnings are the agent's, not the till's: the applier records them in agent.db.
    return { rowsWritten, itemsChanged };
  }
}

import { addDays, fromDayNumber, LAST_DATE, toDayNumber, type IsoDate } from './dates';

/**
 * What changes next: the dates on which one key's value (an item's price in one tariff, or its status
 * in one meal period) differs from the day before. Pure; src/till/changes.ts feeds it the till
 * file's ranges.
 */

/** One stored range of one key, as the till file holds it (ranges of one key never overlap). */
export interface KeyedRange<V> {
  readonly itemId: string;
  /** The tariff or meal period. */
  readonly key: string;
  readonly from: IsoDate;
  readonly to: IsoDate;
  readonly value: V;
  /** The update that wrote the range (its inbox id). */
  readonly source: number;
}

export interface ValueChange<V> {
  /** The first day of the new value. */
  readonly date: IsoDate;
  readonly itemId: string;
  readonly key: string;
  /** Null: there was no value the day before (nothing charged, no meal-period status). */
  readonly before: V | null;
  /** Null: there is none from this date. */
  readonly after: V | null;
  /** The update that wrote the range starting here, or, when the value ends, the range ending the day before. */
  readonly source: number;
  /**
   * The update that wrote the range ending the day before, when one touches this date: the change
   * may be that range's end (a temporary closure ends and the earlier status returns), which the
   * later of the two updates caused (src/till/changes.ts picks it).
   */
  readonly endingSource: number | null;
}

/**
 * The dates a window of `days` days starting on `from` (a date of the domain) covers, cut at the end
 * of the date domain: nothing lies beyond 9999-12-31, so a window that runs past it keeps the dates
 * it has before. (The end written past 9999-12-31, `10000-01-03`, sorts before every date as text and
 * emptied the window.)
 */
export function changeWindow(from: IsoDate, days: number): { readonly from: IsoDate; readonly to: IsoDate } {
  const last = toDayNumber(from) + Math.max(1, Math.trunc(days)) - 1;
  return { from, to: last >= toDayNumber(LAST_DATE) ? LAST_DATE : fromDayNumber(last) };
}

/**
 * Every change on a date in [from, to], in input order (then by date). `ranges` must hold every range
 * that overlaps [from - 1, to], grouped by (itemId, key) and sorted by `from` within a group: the
 * store's index order. A date inside an unchanged range is not a change; neither is a boundary
 * between two touching ranges with equal values.
 */
export function changesBetween<V>(ranges: readonly KeyedRange<V>[], from: IsoDate, to: IsoDate, equals: (a: V, b: V) => boolean): ValueChange<V>[] {
  const changes: ValueChange<V>[] = [];
  for (let i = 0; i < ranges.length; i++) {
    const r = ranges[i]!;
    const prev = i > 0 && sameKey(ranges[i - 1]!, r) ? ranges[i - 1]! : null;
    const next = i + 1 < ranges.length && sameKey(ranges[i + 1]!, r) ? ranges[i + 1]! : null;
    // The value starts: compare with the day before (the previous range if it touches, else nothing).
    if (r.from >= from && r.from <= to) {
      const before = prev !== null && prev.to !== LAST_DATE && addDays(prev.to, 1) === r.from ? prev.value : null;
      if (before === null || !equals(before, r.value)) {
        changes.push({ date: r.from, itemId: r.itemId, key: r.key, before, after: r.value, source: r.source, endingSource: before === null ? null : prev!.source });
      }
    }
    // The value ends with nothing after it (a following range that touches reports itself above).
    if (r.to !== LAST_DATE) {
      const end = addDays(r.to, 1);
      if (end >= from && end <= to && (next === null || next.from !== end)) {
        changes.push({ date: end, itemId: r.itemId, key: r.key, before: r.value, after: null, source: r.source, endingSource: null });
      }
    }
  }
  return changes;
}

function sameKey(a: KeyedRange<unknown>, b: KeyedRange<unknown>): boolean {
  return a.itemId === b.itemId && a.key === b.key;
}

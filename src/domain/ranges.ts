import { addDays, LAST_DATE, toDayNumber, type IsoDate } from './dates';

/**
 * A value that holds over an inclusive date range. A key's ranges never overlap.
 * `id` is the storage row id of a range that already exists; ranges this module creates have none,
 * which is how the store tells rows to keep from rows to write.
 */
export interface DatedValue<V> {
  readonly id?: number;
  readonly from: IsoDate;
  readonly to: IsoDate;
  readonly value: V;
}

export type Equals<V> = (a: V, b: V) => boolean;

/**
 * Lays `incoming` over `existing` (the ranges of one key): data received later wins for exactly the
 * dates it covers. An older range that overlaps is trimmed, or split in two when the new range falls
 * inside it; it is never dropped beyond the covered dates. Touching ranges with equal values are merged
 * so the table does not fragment over years of one-day edits. The result is sorted by `from`.
 */
export function overlay<V>(existing: readonly DatedValue<V>[], incoming: DatedValue<V>, equals: Equals<V>): DatedValue<V>[] {
  if (incoming.from > incoming.to) throw new RangeError(`reversed range ${incoming.from}..${incoming.to}`);
  const pieces: DatedValue<V>[] = [];
  for (const range of existing) {
    if (range.to < incoming.from || range.from > incoming.to) {
      pieces.push(range);
      continue;
    }
    if (range.from < incoming.from) pieces.push({ from: range.from, to: addDays(incoming.from, -1), value: range.value });
    if (range.to > incoming.to) pieces.push({ from: addDays(incoming.to, 1), to: range.to, value: range.value });
  }
  pieces.push({ from: incoming.from, to: incoming.to, value: incoming.value });
  pieces.sort((a, b) => (a.from < b.from ? -1 : a.from > b.from ? 1 : 0));
  return mergeTouching(pieces, equals);
}

/** Applies several incoming ranges in order (later elements of one update win over earlier ones). */
export function overlayAll<V>(existing: readonly DatedValue<V>[], incoming: readonly DatedValue<V>[], equals: Equals<V>): DatedValue<V>[] {
  // The common case of a first publication: nothing there yet, and the elements sent in date order
  // without overlaps. Laying them one by one would then only ever append and merge with the last, so
  // one merge pass gives the same ranges (the property test in test/unit/domain/ranges.test.ts checks
  // it against the general path) without re-sorting the key's ranges once per element.
  // Ranges that carry a row id are copied without it (diffRanges writes what has none); others are
  // taken as they are.
  if (existing.length === 0 && sortedApart(incoming)) return mergeTouching(incoming.map((r) => (r.id === undefined ? r : { from: r.from, to: r.to, value: r.value })), equals);
  let current: DatedValue<V>[] = [...existing];
  for (const range of incoming) current = overlay(current, range, equals);
  return current;
}

/** In date order, none reversed, none overlapping the one before. */
function sortedApart<V>(ranges: readonly DatedValue<V>[]): boolean {
  for (let i = 0; i < ranges.length; i++) {
    const r = ranges[i]!;
    if (r.from > r.to) return false;
    if (i > 0 && ranges[i - 1]!.to >= r.from) return false;
  }
  return true;
}

function mergeTouching<V>(sorted: DatedValue<V>[], equals: Equals<V>): DatedValue<V>[] {
  const out: DatedValue<V>[] = [];
  for (const range of sorted) {
    const last = out[out.length - 1];
    // Day numbers, not addDays: this runs for every element of a publication and builds no string.
    if (last && last.to !== LAST_DATE && toDayNumber(range.from) === toDayNumber(last.to) + 1 && equals(last.value, range.value)) {
      out[out.length - 1] = { from: last.from, to: range.to, value: last.value };
    } else {
      out.push(range);
    }
  }
  return out;
}

/** What the store must do to turn `before` into `after`: rows to delete (by id) and rows to insert. */
export function diffRanges<V>(before: readonly DatedValue<V>[], after: readonly DatedValue<V>[]): { remove: number[]; add: DatedValue<V>[] } {
  const kept = new Set<number>();
  const add: DatedValue<V>[] = [];
  for (const range of after) {
    if (range.id === undefined) add.push(range);
    else kept.add(range.id);
  }
  const remove = before.filter((r) => r.id !== undefined && !kept.has(r.id)).map((r) => r.id as number);
  return { remove, add };
}

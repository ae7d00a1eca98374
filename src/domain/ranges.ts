import { addDays, LAST_DATE, toDayNumber, type IsoDate } from './dates';

/**
 * A value that holds over an inclusive date range. A key's ranges never overlap.
 * `id` is the storage row id of a range that already exists; ranges this module creates have none,
 * which is how the store tells rows to keep from rows to write. `source` is the update that set the
 * value, when known: the pieces left of a range that a later one trims keep it, so what is written
 * for them still names the update that caused their value (the till writer's source_inbox_id).
 */
export interface DatedValue<V> {
  readonly id?: number;
  readonly from: IsoDate;
  readonly to: IsoDate;
  readonly value: V;
  readonly source?: number;
}

/** A piece of `range` over other dates: its value and source, without its row id. */
function pieceOf<V>(range: DatedValue<V>, from: IsoDate, to: IsoDate): DatedValue<V> {
  return range.source === undefined ? { from, to, value: range.value } : { from, to, value: range.value, source: range.source };
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
    if (range.from < incoming.from) pieces.push(pieceOf(range, range.from, addDays(incoming.from, -1)));
    if (range.to > incoming.to) pieces.push(pieceOf(range, addDays(incoming.to, 1), range.to));
  }
  pieces.push(pieceOf(incoming, incoming.from, incoming.to));
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
  if (existing.length === 0 && sortedApart(incoming)) return mergeTouching(incoming.map((r) => (r.id === undefined ? r : pieceOf(r, r.from, r.to))), equals);
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
      // One range names one update. Merged with what the update being applied sent (no source), it
      // names that update, which changed these dates: a promotion it extends ends by its doing.
      // Two stored pieces keep the earlier one's.
      const merged = pieceOf(last, last.from, range.to);
      out[out.length - 1] = range.source === undefined && merged.source !== undefined ? { from: merged.from, to: merged.to, value: merged.value } : merged;
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

import fc from 'fast-check';
import { FIRST_DATE, LAST_DATE, fromDayNumber, toDayNumber, type IsoDate } from '../../src/domain/dates';

/**
 * Dates over the whole domain (0001-01-01 .. 9999-12-31) with the edges weighted: the two ends of the
 * domain, year ends and starts, 29 February (and the days around it), and a busy stretch near today
 * where ranges overlap often. `edgeHits` lets a test prove the generator reaches them.
 */
export const FIRST_DAY = toDayNumber(FIRST_DATE);
export const LAST_DAY = toDayNumber(LAST_DATE);
const day = (d: string): number => toDayNumber(d as IsoDate);

const LEAP_YEARS = [4, 400, 1600, 1904, 2000, 2024, 2028, 2400, 4000, 9996];
const YEARS = [1, 1899, 1969, 1970, 1999, 2026, 2027, 2099, 9998, 9999];
export const SPECIAL_DAYS: readonly number[] = [
  FIRST_DAY,
  FIRST_DAY + 1,
  LAST_DAY - 1,
  LAST_DAY,
  ...LEAP_YEARS.flatMap((y) => {
    const yyyy = String(y).padStart(4, '0');
    return [day(`${yyyy}-02-28`), day(`${yyyy}-02-29`), day(`${yyyy}-03-01`)];
  }),
  ...YEARS.flatMap((y) => {
    const yyyy = String(y).padStart(4, '0');
    return [day(`${yyyy}-01-01`), day(`${yyyy}-12-31`)];
  }),
  day('2100-02-28'),
  day('2100-03-01'),
];

const BUSY = day('2026-12-01');

export const dayArb: fc.Arbitrary<number> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...SPECIAL_DAYS) },
  { weight: 2, arbitrary: fc.integer({ min: FIRST_DAY, max: LAST_DAY }) },
  { weight: 4, arbitrary: fc.integer({ min: BUSY - 20, max: BUSY + 60 }) },
);

/** A range [from, to] of day numbers, often open-ended (to 9999-12-31) or starting at 0001-01-01. */
export const dayRangeArb: fc.Arbitrary<{ from: number; to: number }> = fc.oneof(
  { weight: 4, arbitrary: fc.tuple(dayArb, dayArb).map(([a, b]) => (a <= b ? { from: a, to: b } : { from: b, to: a })) },
  { weight: 2, arbitrary: dayArb.map((from) => ({ from, to: LAST_DAY })) },
  { weight: 1, arbitrary: dayArb.map((to) => ({ from: FIRST_DAY, to })) },
  { weight: 1, arbitrary: fc.constant({ from: FIRST_DAY, to: LAST_DAY }) },
  { weight: 2, arbitrary: fc.tuple(fc.integer({ min: BUSY - 20, max: BUSY + 60 }), fc.integer({ min: 0, max: 30 })).map(([from, len]) => ({ from, to: Math.min(LAST_DAY, from + len) })) },
);

export const isoOf = (d: number): IsoDate => fromDayNumber(d);

/** How often a sample of ranges touches each kind of edge (for the "generator reaches them" checks). */
export function edgeHits(ranges: readonly { from: number; to: number }[]): Record<string, number> {
  const hits = { firstDay: 0, lastDay: 0, feb29: 0, yearEnd: 0, wholeDomain: 0 };
  for (const r of ranges) {
    if (r.from === FIRST_DAY) hits.firstDay++;
    if (r.to === LAST_DAY) hits.lastDay++;
    if (r.from === FIRST_DAY && r.to === LAST_DAY) hits.wholeDomain++;
    for (const d of [r.from, r.to]) {
      const iso = isoOf(d);
      if (iso.endsWith('-02-29')) hits.feb29++;
      if (iso.endsWith('-12-31')) hits.yearEnd++;
    }
  }
  return hits;
}

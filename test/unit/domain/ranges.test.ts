import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { addDays, fromDayNumber, toDayNumber, type IsoDate } from '../../../src/domain/dates';
import { diffRanges, overlay, overlayAll, type DatedValue } from '../../../src/domain/ranges';
import { dayArb, FIRST_DAY, LAST_DAY, SPECIAL_DAYS } from '../../helpers/date-arbitraries';

const BASE = toDayNumber('2026-12-01' as IsoDate);
const eq = (a: number, b: number): boolean => a === b;

/** The reference model: a plain map from day to value, written day by day. */
function modelApply(model: Map<number, number>, r: { from: number; to: number; value: number }): void {
  for (let d = r.from; d <= r.to; d++) model.set(d, r.value);
}

function expand(ranges: readonly DatedValue<number>[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const r of ranges) for (let d = toDayNumber(r.from); d <= toDayNumber(r.to); d++) {
    assert.ok(!out.has(d), `day ${fromDayNumber(d)} covered twice`);
    out.set(d, r.value);
  }
  return out;
}

const rangeArb = fc
  .tuple(fc.integer({ min: 0, max: 60 }), fc.integer({ min: 0, max: 30 }), fc.integer({ min: 1, max: 4 }))
  .map(([start, length, value]) => ({ from: BASE + start, to: BASE + start + length, value }));

describe('date-range overlay', () => {
  it('splits an older long range around a one-day edit', () => {
    const long: DatedValue<number> = { id: 1, from: '2026-12-01' as IsoDate, to: '2027-02-28' as IsoDate, value: 1150 };
    const result = overlay([long], { from: '2026-12-25' as IsoDate, to: '2026-12-25' as IsoDate, value: 1500 }, eq);
    assert.deepEqual(
      result.map((r) => [r.from, r.to, r.value, r.id]),
      [
        ['2026-12-01', '2026-12-24', 1150, undefined],
        ['2026-12-25', '2026-12-25', 1500, undefined],
        ['2026-12-26', '2027-02-28', 1150, undefined],
      ],
    );
    assert.deepEqual(diffRanges([long], result).remove, [1]);
  });

  it('keeps untouched rows (same id) so the store rewrites only what changed', () => {
    const a: DatedValue<number> = { id: 1, from: '2026-12-01' as IsoDate, to: '2026-12-10' as IsoDate, value: 1 };
    const b: DatedValue<number> = { id: 2, from: '2026-12-20' as IsoDate, to: '2026-12-31' as IsoDate, value: 2 };
    const result = overlay([a, b], { from: '2026-12-25' as IsoDate, to: '2027-01-05' as IsoDate, value: 3 }, eq);
    const { remove, add } = diffRanges([a, b], result);
    assert.deepEqual(remove, [2]);
    assert.deepEqual(add.map((r) => [r.from, r.to, r.value]), [
      ['2026-12-20', '2026-12-24', 2],
      ['2026-12-25', '2027-01-05', 3],
    ]);
    assert.ok(result.includes(a));
  });

  it('merges touching ranges with equal values, and re-joins a split when the edit is undone', () => {
    let ranges = overlay([], { from: '2026-12-01' as IsoDate, to: '2026-12-31' as IsoDate, value: 1 }, eq);
    ranges = overlay(ranges, { from: '2026-12-10' as IsoDate, to: '2026-12-10' as IsoDate, value: 2 }, eq);
    assert.equal(ranges.length, 3);
    ranges = overlay(ranges, { from: '2026-12-10' as IsoDate, to: '2026-12-10' as IsoDate, value: 1 }, eq);
    assert.deepEqual(ranges.map((r) => [r.from, r.to, r.value]), [['2026-12-01', '2026-12-31', 1]]);
  });

  it('refuses a reversed range', () => {
    assert.throws(() => overlay([], { from: '2026-12-02' as IsoDate, to: '2026-12-01' as IsoDate, value: 1 }, eq), /reversed/);
  });

  it('matches the day-by-day model for any sequence of overlapping ranges (property)', () => {
    fc.assert(
      fc.property(fc.array(rangeArb, { minLength: 1, maxLength: 25 }), (incoming) => {
        const model = new Map<number, number>();
        for (const r of incoming) modelApply(model, r);
        const ranges = overlayAll<number>(
          [],
          incoming.map((r) => ({ from: fromDayNumber(r.from), to: fromDayNumber(r.to), value: r.value })),
          eq,
        );
        assert.deepEqual(expand(ranges), model);
        // Sorted, non-overlapping, and no two touching ranges carry the same value.
        for (let i = 1; i < ranges.length; i++) {
          const prev = ranges[i - 1]!;
          const cur = ranges[i]!;
          assert.ok(prev.to < cur.from);
          assert.ok(!(addDays(prev.to, 1) === cur.from && prev.value === cur.value));
        }
      }),
      { numRuns: 500 },
    );
  });

  /**
   * A first publication's elements, in date order without overlaps, over the whole date domain: some
   * touching the next (and often with the same value, so they merge), some with a gap, the last often
   * open-ended (9999-12-31).
   */
  const sortedApartArb = fc
    .tuple(fc.uniqueArray(dayArb, { minLength: 1, maxLength: 24 }), fc.array(fc.boolean(), { minLength: 24, maxLength: 24 }), fc.array(fc.integer({ min: 1, max: 2 }), { minLength: 24, maxLength: 24 }), fc.boolean())
    .map(([days, touching, values, openEnded]) => {
      const sorted = [...days].sort((a, b) => a - b);
      return sorted.map((from, i) => {
        const next = sorted[i + 1];
        const to = next === undefined ? (openEnded ? LAST_DAY : from) : touching[i] ? next - 1 : from + Math.floor((next - from - 1) / 2);
        return { from, to, value: values[i]! };
      });
    });

  it('lays sorted, non-overlapping elements onto nothing exactly as one by one (fast path, property over the whole date domain)', () => {
    const seen = { merged: 0, openEnded: 0, firstDay: 0, special: 0, runs: 0 };
    fc.assert(
      fc.property(sortedApartArb, (elements) => {
        const incoming = elements.map((r) => ({ from: fromDayNumber(r.from), to: fromDayNumber(r.to), value: r.value }));
        const oneByOne = incoming.reduce<DatedValue<number>[]>((current, r) => overlay(current, r, eq), []);
        const fast = overlayAll<number>([], incoming, eq);
        assert.deepEqual(fast, oneByOne);
        seen.runs++;
        if (fast.length < incoming.length) seen.merged++;
        if (elements.some((r) => r.to === LAST_DAY)) seen.openEnded++;
        if (elements.some((r) => r.from === FIRST_DAY)) seen.firstDay++;
        if (elements.some((r) => SPECIAL_DAYS.includes(r.from) || SPECIAL_DAYS.includes(r.to))) seen.special++;
      }),
      { numRuns: 1000 },
    );
    // The generator reaches what matters: merges, the end and the start of the domain, the special days.
    assert.ok(seen.merged > seen.runs / 10, `merges in ${seen.merged} of ${seen.runs} runs`);
    assert.ok(seen.openEnded > seen.runs / 10, `open-ended in ${seen.openEnded} of ${seen.runs} runs`);
    assert.ok(seen.firstDay > seen.runs / 50, `0001-01-01 in ${seen.firstDay} of ${seen.runs} runs`);
    assert.ok(seen.special > seen.runs / 4, `special days in ${seen.special} of ${seen.runs} runs`);
  });

  it('still refuses a reversed range and still lays overlapping elements in order when nothing is there', () => {
    assert.throws(() => overlayAll([], [{ from: '2026-12-02' as IsoDate, to: '2026-12-01' as IsoDate, value: 1 }], eq), /reversed/);
    const later = overlayAll<number>([], [
      { from: '2026-12-01' as IsoDate, to: '2026-12-10' as IsoDate, value: 1 },
      { from: '2026-12-05' as IsoDate, to: '2026-12-06' as IsoDate, value: 2 },
    ], eq);
    assert.deepEqual(later.map((r) => [r.from, r.to, r.value]), [
      ['2026-12-01', '2026-12-04', 1],
      ['2026-12-05', '2026-12-06', 2],
      ['2026-12-07', '2026-12-10', 1],
    ]);
  });
});

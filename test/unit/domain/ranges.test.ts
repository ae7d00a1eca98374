import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { addDays, fromDayNumber, toDayNumber, type IsoDate } from '../../../src/domain/dates';
import { diffRanges, overlay, overlayAll, type DatedValue } from '../../../src/domain/ranges';

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
});

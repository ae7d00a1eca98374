import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { changesBetween, type KeyedRange } from '../../../src/domain/changes';
import { addDays, type IsoDate } from '../../../src/domain/dates';

const d = (s: string): IsoDate => s as IsoDate;
const r = (from: string, to: string, value: string, key = 'Eat in', itemId = 'burger', source = 1): KeyedRange<string> => ({ itemId, key, from: d(from), to: d(to), value, source });
const eq = (a: string, b: string): boolean => a === b;
const brief = (changes: ReturnType<typeof changesBetween<string>>): [string, string | null, string | null][] => changes.map((c) => [c.date, c.before, c.after]);

describe('what changes next (pure)', () => {
  it('reports the first day of each new value, with the value before, and nothing inside an unchanged range', () => {
    const ranges = [r('2026-01-01', '2026-11-29', '11.50'), r('2026-11-30', '9999-12-31', '12.00', 'Eat in', 'burger', 7)];
    const changes = changesBetween(ranges, d('2026-11-23'), d('2026-12-06'), eq);
    assert.deepEqual(brief(changes), [['2026-11-30', '11.50', '12.00']]);
    assert.equal(changes[0]!.source, 7, 'the update that wrote the new value');
    assert.deepEqual(changesBetween(ranges, d('2026-12-01'), d('2026-12-31'), eq), []);
  });

  it('reports a value that ends with nothing after it, and one that starts after nothing', () => {
    // Breakfast stops at the weekend (Sat 28th, Sun 29th) and comes back on Monday.
    const ranges = [r('2026-01-01', '2026-11-27', 'AVAILABLE', 'Breakfast'), r('2026-11-30', '9999-12-31', 'AVAILABLE', 'Breakfast')];
    assert.deepEqual(brief(changesBetween(ranges, d('2026-11-23'), d('2026-12-06'), eq)), [
      ['2026-11-28', 'AVAILABLE', null],
      ['2026-11-30', null, 'AVAILABLE'],
    ]);
  });

  it('counts the window\'s first day as a change when the day before differs, and its last day', () => {
    const ranges = [r('2026-11-01', '2026-11-22', '1.00'), r('2026-11-23', '2026-11-29', '2.00')];
    assert.deepEqual(brief(changesBetween(ranges, d('2026-11-23'), d('2026-11-30'), eq)), [
      ['2026-11-23', '1.00', '2.00'],
      ['2026-11-30', '2.00', null],
    ]);
    assert.deepEqual(brief(changesBetween(ranges, d('2026-11-24'), d('2026-11-29'), eq)), []);
  });

  it('keeps keys apart: another tariff or item never counts as the day before', () => {
    const ranges = [r('2026-11-01', '2026-11-22', '1.00', 'Eat in'), r('2026-11-23', '9999-12-31', '1.00', 'Take away'), r('2026-11-23', '9999-12-31', '1.00', 'Take away', 'chips')];
    assert.deepEqual(
      changesBetween(ranges, d('2026-11-23'), d('2026-11-23'), eq).map((c) => [c.itemId, c.key, c.before, c.after]),
      [['burger', 'Eat in', '1.00', null], ['burger', 'Take away', null, '1.00'], ['chips', 'Take away', null, '1.00']],
    );
  });

  it('agrees with comparing each day with the day before (property)', () => {
    const day0 = d('2026-11-20');
    const arbitraryRanges = fc
      .array(fc.record({ gap: fc.integer({ min: 0, max: 3 }), length: fc.integer({ min: 1, max: 6 }), value: fc.constantFrom('1.00', '2.00') }), { maxLength: 6 })
      .map((parts) => {
        const out: KeyedRange<string>[] = [];
        let next = -4;
        for (const p of parts) {
          const from = next + p.gap;
          out.push(r(addDays(day0, from), addDays(day0, from + p.length - 1), p.value));
          next = from + p.length;
        }
        return out;
      });
    fc.assert(
      fc.property(arbitraryRanges, fc.integer({ min: 0, max: 10 }), fc.integer({ min: 1, max: 15 }), (ranges, start, days) => {
        const from = addDays(day0, start);
        const to = addDays(from, days - 1);
        const valueOn = (date: IsoDate): string | null => ranges.find((x) => x.from <= date && date <= x.to)?.value ?? null;
        const expected: [string, string | null, string | null][] = [];
        for (let date = from; date <= to; date = addDays(date, 1)) {
          const before = valueOn(addDays(date, -1));
          const after = valueOn(date);
          if (before !== after) expected.push([date, before, after]);
        }
        const visible = ranges.filter((x) => x.to >= addDays(from, -1) && x.from <= to);
        assert.deepEqual(brief(changesBetween(visible, from, to, eq)).sort(), expected.sort());
      }),
    );
  });
});

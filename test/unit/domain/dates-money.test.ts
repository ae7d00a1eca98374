import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { addDays, fromDayNumber, isIsoDate, toDayNumber, todayIn, type IsoDate } from '../../../src/domain/dates';
import { formatMinor, minorDigits, parseSellPrice } from '../../../src/domain/money';

describe('dates', () => {
  it('accepts real calendar dates only', () => {
    for (const good of ['2026-12-01', '2024-02-29', '2000-02-29', '1999-12-31']) assert.ok(isIsoDate(good), good);
    for (const bad of ['2026-02-29', '1900-02-29', '2026-13-01', '2026-00-10', '2026-04-31', '2026-1-01', '20261201', '', 'x', '2026-12-01T00:00:00']) {
      assert.ok(!isIsoDate(bad), bad);
    }
    assert.ok(!isIsoDate(20261201));
  });

  it('day numbers round-trip and step across month, year and leap boundaries', () => {
    assert.equal(addDays('2026-12-31' as IsoDate, 1), '2027-01-01');
    assert.equal(addDays('2024-02-28' as IsoDate, 1), '2024-02-29');
    assert.equal(addDays('2024-03-01' as IsoDate, -1), '2024-02-29');
    assert.equal(addDays('2026-03-29' as IsoDate, 1), '2026-03-30'); // DST change in Europe: no effect on dates
    fc.assert(
      fc.property(fc.integer({ min: -20000, max: 60000 }), fc.integer({ min: -400, max: 400 }), (day, delta) => {
        const date = fromDayNumber(day);
        assert.ok(isIsoDate(date));
        assert.equal(toDayNumber(date), day);
        assert.equal(toDayNumber(addDays(date, delta)), day + delta);
        // The integer arithmetic agrees with the platform's calendar.
        assert.equal(date, new Date(day * 86_400_000).toISOString().slice(0, 10));
      }),
      { numRuns: 2000 },
    );
    for (let year = 1900; year <= 2100; year++) {
      for (const [month, last] of [[1, 31], [2, new Date(Date.UTC(year, 2, 0)).getUTCDate()], [4, 30], [12, 31]] as const) {
        const text = `${year}-${String(month).padStart(2, '0')}-${last}`;
        assert.ok(isIsoDate(text), text);
        assert.ok(!isIsoDate(`${year}-${String(month).padStart(2, '0')}-${last + 1}`), `${text}+1`);
        assert.equal(toDayNumber(text as IsoDate), Math.round(Date.UTC(year, month - 1, last) / 86_400_000), text);
      }
    }
  });

  it("computes today in the location's timezone, not the machine's", () => {
    const instant = new Date('2026-12-31T23:30:00Z');
    assert.equal(todayIn('Europe/London', instant), '2026-12-31');
    assert.equal(todayIn('Europe/Berlin', instant), '2027-01-01');
    assert.equal(todayIn('America/New_York', instant), '2026-12-31');
  });
});

describe('money', () => {
  it('knows ISO 4217 minor digits', () => {
    assert.equal(minorDigits('GBP'), 2);
    assert.equal(minorDigits('eur'), 2);
    assert.equal(minorDigits('JPY'), 0);
    assert.equal(minorDigits('KWD'), 3);
    assert.equal(minorDigits('CLF'), 4);
    assert.equal(minorDigits('XXY'), undefined);
  });

  it('reads sell prices exactly, as numbers or decimal strings', () => {
    const ok = (value: unknown, currency: string): [number, string] => {
      const r = parseSellPrice(value, currency);
      assert.ok(r.ok, JSON.stringify(r));
      return [r.money.minor, r.money.text];
    };
    assert.deepEqual(ok(11.5, 'GBP'), [1150, '11.50']);
    assert.deepEqual(ok(10.95, 'GBP'), [1095, '10.95']);
    assert.deepEqual(ok(0.1, 'GBP'), [10, '0.10']);
    assert.deepEqual(ok(1005, 'GBP'), [100500, '1005.00']);
    assert.deepEqual(ok(0.07, 'GBP'), [7, '0.07']);
    assert.deepEqual(ok('11.50', 'GBP'), [1150, '11.50']);
    assert.deepEqual(ok(24, 'GBP'), [2400, '24.00']);
    assert.deepEqual(ok(0, 'GBP'), [0, '0.00']);
    assert.deepEqual(ok(1500, 'JPY'), [1500, '1500']);
    assert.deepEqual(ok(1.234, 'KWD'), [1234, '1.234']);
    assert.deepEqual(ok('2.500', 'GBP'), [250, '2.50']);
  });

  it('refuses what it cannot store exactly', () => {
    const reason = (value: unknown, currency = 'GBP'): string => {
      const r = parseSellPrice(value, currency);
      assert.ok(!r.ok, `${String(value)} should be refused`);
      return r.reason;
    };
    assert.match(reason(11.505), /more decimals than GBP allows/);
    assert.match(reason(10.5, 'JPY'), /more decimals than JPY allows/);
    assert.match(reason(-1), /negative/);
    assert.match(reason(Number.NaN), /finite/);
    assert.match(reason(1e21), /1000000000000000000000 is too large/); // an exponent is read exactly, never through a float
    assert.match(reason('12,50'), /is not a decimal amount/);
    assert.match(reason(null), /not a number/);
    assert.match(reason(true), /not a number/);
    assert.match(reason('99999999999999999999'), /too large/);
    assert.match(reason(1, 'ZZZ'), /unknown currency/);
  });

  it('agrees with integer arithmetic for every two-decimal amount (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000 }), (pence) => {
        const asNumber = pence / 100; // what JSON.parse gives for a body written with two decimals
        const r = parseSellPrice(asNumber, 'GBP');
        assert.ok(r.ok);
        assert.equal(r.money.minor, pence);
        assert.equal(r.money.text, formatMinor(pence, 2));
        assert.equal(Number(r.money.text), asNumber);
      }),
    );
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { offsetAt, offsetIntervals, sqliteUtc } from '../../../src/domain/utc-offsets';

const at = (iso: string): number => Date.parse(iso);

function show(intervals: ReturnType<typeof offsetIntervals>): [string, string, number][] {
  return intervals.map((i) => [sqliteUtc(i.fromMs), sqliteUtc(i.toMs), i.offsetMinutes]);
}

describe('a timezone\'s UTC offsets as intervals (IANA database via Intl)', () => {
  it('finds London\'s DST changes to the minute (last Sunday of March and October, 01:00 UTC)', () => {
    assert.deepEqual(show(offsetIntervals('Europe/London', at('2030-01-01T00:00:00Z'), at('2031-01-01T00:00:00Z'))), [
      ['2030-01-01 00:00:00', '2030-03-31 01:00:00', 0],
      ['2030-03-31 01:00:00', '2030-10-27 01:00:00', 60],
      ['2030-10-27 01:00:00', '2031-01-01 00:00:00', 0],
    ]);
  });

  it('finds New York\'s (02:00 local: 07:00 and 06:00 UTC) and Lord Howe\'s half-hour change', () => {
    assert.deepEqual(show(offsetIntervals('America/New_York', at('2030-01-01T00:00:00Z'), at('2031-01-01T00:00:00Z'))), [
      ['2030-01-01 00:00:00', '2030-03-10 07:00:00', -300],
      ['2030-03-10 07:00:00', '2030-11-03 06:00:00', -240],
      ['2030-11-03 06:00:00', '2031-01-01 00:00:00', -300],
    ]);
    // Lord Howe Island moves by 30 minutes: +11:00 in summer, +10:30 in winter (first Sunday of April, 02:00 local).
    const lordHowe = offsetIntervals('Australia/Lord_Howe', at('2030-01-01T00:00:00Z'), at('2030-06-01T00:00:00Z'));
    assert.deepEqual(show(lordHowe), [
      ['2030-01-01 00:00:00', '2030-04-06 15:00:00', 660],
      ['2030-04-06 15:00:00', '2030-06-01 00:00:00', 630],
    ]);
  });

  it('gives one interval for a zone without DST, and finds a change inside the last step', () => {
    assert.deepEqual(show(offsetIntervals('Asia/Kolkata', at('2030-01-01T00:00:00Z'), at('2035-01-01T00:00:00Z'))), [
      ['2030-01-01 00:00:00', '2035-01-01 00:00:00', 330],
    ]);
    // Ends two hours after London's March change: the change is found although the scan's last step is short.
    assert.deepEqual(show(offsetIntervals('Europe/London', at('2030-03-30T12:00:00Z'), at('2030-03-31T03:00:00Z'))), [
      ['2030-03-30 12:00:00', '2030-03-31 01:00:00', 0],
      ['2030-03-31 01:00:00', '2030-03-31 03:00:00', 60],
    ]);
  });

  it('agrees with Intl at every hour of five years, for zones either side of UTC', () => {
    for (const zone of ['Europe/London', 'America/Sao_Paulo', 'Pacific/Auckland', 'Pacific/Chatham']) {
      const from = at('2027-01-01T00:00:00Z');
      const intervals = offsetIntervals(zone, from, at('2032-01-01T00:00:00Z'));
      let k = 0;
      for (let t = from; t < at('2032-01-01T00:00:00Z'); t += 3_600_000) {
        while (intervals[k]!.toMs <= t) k += 1;
        assert.ok(intervals[k]!.fromMs <= t, `${zone}: intervals are contiguous`);
        if (intervals[k]!.offsetMinutes !== offsetAt(zone, t)) assert.fail(`${zone} at ${new Date(t).toISOString()}: ${intervals[k]!.offsetMinutes} vs ${offsetAt(zone, t)}`);
      }
      // Consecutive intervals differ (no split without a change) and touch.
      for (let i = 1; i < intervals.length; i++) {
        assert.equal(intervals[i]!.fromMs, intervals[i - 1]!.toMs);
        assert.notEqual(intervals[i]!.offsetMinutes, intervals[i - 1]!.offsetMinutes);
      }
    }
  });
});

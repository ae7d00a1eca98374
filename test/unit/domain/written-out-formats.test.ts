import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { machineTimezone } from '../../../src/clock';
import { clockTime } from '../../../src/domain/local-time';
import { groupDigits } from '../../../src/domain/wording';
import { localTime } from '../../../src/ops/panels';

/**
 * Counts and times the agent writes out by hand instead of through ICU (docs/performance.md), against
 * what ICU writes for the same options, over the whole domain with its edges weighted.
 */
describe('formats written out without ICU', () => {
  it('groups a count\'s digits as en-GB does, from the smallest to the largest safe integer (property)', () => {
    const edges = [0, 1, -1, 999, 1000, -1000, 999_999, 1_000_000, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER];
    const seen = new Set<number>();
    fc.assert(
      fc.property(fc.oneof(fc.constantFrom(...edges), fc.integer(), fc.maxSafeInteger(), fc.integer({ min: -99_999, max: 99_999 })), (n) => {
        if (edges.includes(n)) seen.add(n);
        assert.equal(groupDigits(n), n.toLocaleString('en-GB'));
      }),
      { numRuns: 3000 },
    );
    assert.equal(seen.size, edges.length, 'the generator reaches every edge');
  });

  it('writes a stored time as en-GB does on this machine\'s clock, across the years, 29 February and the DST changes (property)', () => {
    const zones = ['Europe/London', 'UTC', 'America/St_Johns', 'Pacific/Chatham', 'Asia/Kolkata'];
    const edges = ['2028-02-29T23:59:59.999Z', '2026-03-29T00:59:59Z', '2026-03-29T01:00:00Z', '2026-10-25T00:59:59Z', '2026-10-25T01:00:00Z', '1970-01-01T00:00:00Z', '2099-12-31T23:59:59Z'];
    const previous = process.env.TZ;
    try {
      for (const zone of zones) {
        process.env.TZ = zone;
        const reached = new Set<string>();
        fc.assert(
          fc.property(fc.oneof(fc.constantFrom(...edges), fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2099-12-31T23:59:59Z'), noInvalidDate: true }).map((d) => d.toISOString())), (iso) => {
            if (edges.includes(iso)) reached.add(iso);
            const d = new Date(iso);
            assert.equal(localTime(iso), d.toLocaleString('en-GB', { day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' }), `${zone} ${iso}`);
            assert.equal(clockTime(iso), d.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit' }), `${zone} ${iso}`);
          }),
          { numRuns: 500 },
        );
        assert.equal(reached.size, edges.length, `${zone}: the generator reaches every edge`);
      }
    } finally {
      if (previous === undefined) delete process.env.TZ;
      else process.env.TZ = previous;
    }
    assert.equal(localTime('not a time'), 'not a time');
    assert.equal(clockTime('not a time'), 'not a time');
  });

  it('reads the machine\'s timezone from TZ, as an IANA name of the table, and UTC under its other names', () => {
    const previous = process.env.TZ;
    try {
      for (const [tz, expected] of [['Europe/Paris', 'Europe/Paris'], [':America/New_York', 'America/New_York'], ['Etc/UTC', 'UTC'], ['UTC', 'UTC'], ['Universal', 'UTC']] as const) {
        process.env.TZ = tz;
        assert.equal(machineTimezone(), expected, tz);
      }
      // A TZ the table does not name: Intl's reading of it, as before the table.
      process.env.TZ = 'Europe/Kyiv';
      assert.equal(machineTimezone(), Intl.DateTimeFormat().resolvedOptions().timeZone);
    } finally {
      if (previous === undefined) delete process.env.TZ;
      else process.env.TZ = previous;
    }
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { todayIn } from '../../../src/domain/dates';
import { TABLE_FROM_MS, TABLE_TO_MS, decodeRule, decodeZones, tableZoneNames } from '../../../src/domain/tz/encoding';
import { intlOffsetAt, intlOffsetIntervals } from '../../../src/domain/tz/intl-offsets';
import { TZ_TABLE } from '../../../src/domain/tz/table';
import { offsetAt, offsetIntervals, tableZones } from '../../../src/domain/utc-offsets';

/**
 * The agent's timezone table (src/domain/tz/table.ts, `npm run tzdata`) against the IANA database in
 * this Node's ICU, read through Intl as the agent read it before it had the table.
 */

const MINUTE = 60_000;
const DAY = 86_400_000;
const zones = [...tableZones()];
const rules = new Map([...decodeZones(TZ_TABLE)].map(([zone, index]) => [zone, decodeRule(TZ_TABLE.rules[index]!)]));

describe('the agent\'s timezone table', () => {
  it('was read from the tz release this Node carries, and holds every zone Intl lists and UTC', () => {
    assert.equal(TZ_TABLE.tz, process.versions.tz, `the table is from tz ${TZ_TABLE.tz}, this Node carries ${process.versions.tz}: run npm run tzdata`);
    assert.deepEqual(zones, tableZoneNames());
    assert.ok(zones.includes('UTC') && zones.includes('Europe/London') && zones.length > 400);
  });

  it('gives exactly the intervals Intl gives, for every zone, over the year behind and six years ahead', () => {
    const now = Date.now();
    const from = now - 366 * DAY;
    const to = now + 6 * 366 * DAY;
    for (const zone of zones) {
      assert.deepEqual(offsetIntervals(zone, from, to), intlOffsetIntervals(zone, from, to), zone);
    }
  });

  it('changes offset exactly where Intl does, and nowhere else, for every zone from 2000 to 2100', () => {
    let changes = 0;
    for (const [zone, rule] of rules) {
      assert.equal(rule.starts[0], TABLE_FROM_MS);
      assert.equal(intlOffsetAt(zone, TABLE_FROM_MS), rule.offsets[0], `${zone} at the table's start`);
      for (let i = 1; i < rule.starts.length; i++) {
        const at = rule.starts[i]!;
        assert.ok(at > rule.starts[i - 1]! && at < TABLE_TO_MS && at % MINUTE === 0, `${zone}: change ${i} in order, inside, on a minute`);
        assert.notEqual(rule.offsets[i], rule.offsets[i - 1], `${zone}: change ${i} changes the offset`);
        if (intlOffsetAt(zone, at - MINUTE) !== rule.offsets[i - 1] || intlOffsetAt(zone, at) !== rule.offsets[i]) {
          assert.fail(`${zone} at ${new Date(at).toISOString()}: table ${rule.offsets[i - 1]} -> ${rule.offsets[i]}, Intl ${intlOffsetAt(zone, at - MINUTE)} -> ${intlOffsetAt(zone, at)}`);
        }
        changes += 1;
      }
      // Nothing left out between two changes: Intl agrees at each interval's middle and the table's last minute.
      for (let i = 0; i < rule.starts.length; i++) {
        const end = rule.starts[i + 1] ?? TABLE_TO_MS;
        const middle = rule.starts[i]! + Math.floor((end - rule.starts[i]!) / 2 / MINUTE) * MINUTE;
        assert.equal(intlOffsetAt(zone, middle), rule.offsets[i], `${zone} at ${new Date(middle).toISOString()}`);
      }
      assert.equal(intlOffsetAt(zone, TABLE_TO_MS - MINUTE), rule.offsets[rule.offsets.length - 1], `${zone} at the table's last minute`);
    }
    assert.ok(changes > 10_000, `${changes} changes`);
  });

  it('agrees with Intl at any instant of any zone, the table\'s ends, 29 February and each side of a change weighted (property)', () => {
    const reached = { first: 0, last: 0, leapDay: 0, beforeChange: 0, atChange: 0, before: 0, after: 0 };
    const leapDays = Array.from({ length: 25 }, (_, k) => Date.UTC(2000 + 4 * k, 1, 29)).filter((t) => new Date(t).getUTCMonth() === 1);
    const instant = (zone: string): fc.Arbitrary<number> => {
      const rule = rules.get(zone)!;
      const changes = rule.starts.slice(1);
      return fc.oneof(
        fc.constant(TABLE_FROM_MS),
        fc.constant(TABLE_TO_MS - 1),
        fc.constantFrom(...leapDays).chain((d) => fc.integer({ min: d - DAY, max: d + 2 * DAY - 1 })),
        ...(changes.length > 0 ? [fc.constantFrom(...changes).chain((c) => fc.constantFrom(c - 1, c - 1000, c, c + 1))] : []),
        fc.integer({ min: TABLE_FROM_MS, max: TABLE_TO_MS - 1 }),
        fc.constantFrom(TABLE_FROM_MS - 1, TABLE_TO_MS, Date.UTC(1970, 0, 1), Date.UTC(2150, 5, 1)),
      );
    };
    fc.assert(
      fc.property(fc.constantFrom(...zones).chain((zone) => fc.tuple(fc.constant(zone), instant(zone))), ([zone, ms]) => {
        const rule = rules.get(zone)!;
        if (ms === TABLE_FROM_MS) reached.first += 1;
        if (ms === TABLE_TO_MS - 1) reached.last += 1;
        if (new Date(ms).getUTCMonth() === 1 && new Date(ms).getUTCDate() === 29) reached.leapDay += 1;
        if (rule.starts.includes(ms + 1)) reached.beforeChange += 1;
        if (rule.starts.indexOf(ms) > 0) reached.atChange += 1;
        if (ms < TABLE_FROM_MS) reached.before += 1;
        if (ms >= TABLE_TO_MS) reached.after += 1;
        assert.equal(offsetAt(zone, ms), intlOffsetAt(zone, ms), `${zone} at ${new Date(ms).toISOString()}`);
        const intlDay = new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(ms);
        assert.equal(todayIn(zone, new Date(ms)), intlDay, `${zone}: today at ${new Date(ms).toISOString()}`);
      }),
      { numRuns: 4000 },
    );
    for (const [edge, n] of Object.entries(reached)) assert.ok(n > 0, `the generator never reached ${edge}`);
  });

  it('asks Intl for instants outside the table and for names it does not hold', () => {
    const across = offsetIntervals('Europe/London', TABLE_TO_MS - 400 * DAY, TABLE_TO_MS + 400 * DAY);
    assert.deepEqual(across, intlOffsetIntervals('Europe/London', TABLE_TO_MS - 400 * DAY, TABLE_TO_MS + 400 * DAY));
    assert.equal(across.length, 5, 'the summers of 2099 and 2100 either side of the table\'s end');
    const early = Date.UTC(1996, 6, 1);
    assert.equal(offsetAt('Europe/London', early), 60);
    // IANA's current name of a zone Node's ICU still lists under its old one: not in the table, so Intl.
    assert.ok(!tableZones().has('Europe/Kyiv') && tableZones().has('Europe/Kiev'));
    assert.equal(offsetAt('Europe/Kyiv', Date.UTC(2030, 6, 1)), 180);
    assert.deepEqual(offsetIntervals('Europe/Kyiv', Date.UTC(2030, 0, 1), Date.UTC(2031, 0, 1)), offsetIntervals('Europe/Kiev', Date.UTC(2030, 0, 1), Date.UTC(2031, 0, 1)));
    assert.throws(() => offsetAt('Mars/Olympus_Mons', Date.UTC(2030, 0, 1)), RangeError);
  });
});

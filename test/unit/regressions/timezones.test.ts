import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '../../../src/config/load';
import { ConfigError } from '../../../src/errors';
import { timeZoneProblem } from '../../../src/domain/timezones';
import { clockState, siteTimezones } from '../../../src/ops/clock-service';

/**
 * Issue 9, defect 5: `BST` was accepted as a timezone and read as Asia/Dhaka; the clock advice came
 * from defaultTimezone even when no location of the site used it.
 */
function configProblem(config: Record<string, unknown>): string {
  try {
    parseConfig({ dataDir: '/tmp/pos-sync-timezones', ...config });
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.problems.map((p) => `${p.field}: ${p.message}`).join('\n');
  }
  return 'accepted';
}

describe('timezone names', () => {
  it('accepts canonical IANA names only, and suggests one for common abbreviations', () => {
    const suggested: [string, string][] = [
      ['BST', 'Europe/London'],
      ['GMT', 'Europe/London'],
      ['GMT+1', 'Europe/London'],
      ['CET', 'Europe/Paris'],
      ['CEST', 'Europe/Paris'],
      ['EST', 'America/New_York'],
      ['EDT', 'America/New_York'],
      ['PST', 'America/Los_Angeles'],
      ['NZST', 'Pacific/Auckland'],
      ['US/Eastern', 'America/New_York'],
      ['europe/london', 'Europe/London'],
      ['Etc/UCT', 'UTC'],
    ];
    for (const [name, zone] of suggested) {
      assert.equal(configProblem({ defaultTimezone: name }), `defaultTimezone: ${JSON.stringify(name)} is not a canonical IANA timezone name; use ${zone}${zone === 'Europe/Paris' ? ' (or the city of the location, e.g. Europe/Berlin)' : ''}`);
    }
    assert.match(configProblem({ locations: { '7': { timezone: 'BST' } } }), /^locations\.7\.timezone: "BST" is not a canonical IANA timezone name; use Europe\/London$/);
    assert.match(configProblem({ defaultTimezone: 'Mars/Olympus' }), /not a canonical IANA timezone name, e\.g\. Europe\/London/);
    for (const name of ['Europe/London', 'UTC', 'Pacific/Auckland', 'America/Argentina/Buenos_Aires', 'Asia/Kolkata', 'Europe/Kyiv', 'Asia/Calcutta']) {
      assert.equal(timeZoneProblem(name), null, name);
      assert.equal(configProblem({ defaultTimezone: name }), 'accepted');
    }
    for (const name of Intl.supportedValuesOf('timeZone')) assert.equal(timeZoneProblem(name), null, name);
  });

  it("accepts Etc/UTC, IANA's canonical name of UTC (0.1 accepted it), and holds it as UTC", () => {
    assert.equal(timeZoneProblem('Etc/UTC'), null);
    const config = parseConfig({ dataDir: '/tmp/pos-sync-timezones', defaultTimezone: 'Etc/UTC', locations: { '7': { timezone: 'Etc/UTC' } } });
    assert.equal(config.defaultTimezone, 'UTC');
    assert.equal(config.locations['7']?.timezone, 'UTC');
  });
});

describe('clock advice follows the locations this site has', () => {
  const now = new Date('2026-07-01T00:00:00Z');
  const auckland = parseConfig({ dataDir: '/tmp/pos-sync-timezones', locations: { '7': { timezone: 'Pacific/Auckland' } } });

  it('an Auckland site (default left at Europe/London) on an Auckland PC gets no advice', () => {
    assert.equal(auckland.defaultTimezone, 'Europe/London');
    assert.deepEqual(siteTimezones(auckland, [7]), ['Pacific/Auckland']);
    const state = clockState(auckland, 'Pacific/Auckland', [], now, siteTimezones(auckland, [7]));
    assert.deepEqual(state.timezoneMismatches, []);
    assert.deepEqual(state.warnings, []);
  });

  it('the same site on a London PC is told to move to Auckland, not London', () => {
    const state = clockState(auckland, 'Europe/London', [], now, siteTimezones(auckland, [7]));
    assert.deepEqual(state.timezoneMismatches.map((m) => m.locationTimezone), ['Pacific/Auckland']);
    assert.match(state.warnings.join('\n'), /set this PC to Pacific\/Auckland$/);
  });

  it('a location updates arrived for without a configured timezone follows defaultTimezone', () => {
    assert.deepEqual(siteTimezones(auckland, [7, 8]), ['Europe/London', 'Pacific/Auckland']);
    // Locations in two timezones: the PC cannot follow both and need not (the views follow each), so
    // no advice to move it to one of them, which would break the other.
    for (const pc of ['Pacific/Auckland', 'Europe/London', 'UTC']) assert.deepEqual(clockState(auckland, pc, [], now, siteTimezones(auckland, [7, 8])).warnings, [], pc);
    const sydney = parseConfig({ dataDir: '/tmp/pos-sync-timezones', defaultTimezone: 'Australia/Sydney' });
    assert.deepEqual(clockState(sydney, 'Australia/Sydney', [], now, siteTimezones(sydney, [1, 2])).timezoneMismatches, []);
    assert.deepEqual(clockState(sydney, 'Europe/London', [], now, siteTimezones(sydney, [1, 2])).timezoneMismatches.map((m) => m.locationTimezone), ['Australia/Sydney']);
  });

  it('a location without a configured timezone follows its Country (cached /Locations list) before defaultTimezone, as lookups do', () => {
    const countryOf = (id: number): string | null => (id === 9 ? 'Pacific/Auckland' : null);
    assert.deepEqual(siteTimezones(auckland, [7, 9], countryOf), ['Pacific/Auckland']);
    assert.deepEqual(clockState(auckland, 'Pacific/Auckland', [], now, siteTimezones(auckland, [7, 9], countryOf)).warnings, []);
  });

  it('a site with no location yet has no dates to follow, so no advice', () => {
    const fresh = parseConfig({ dataDir: '/tmp/pos-sync-timezones' });
    assert.deepEqual(siteTimezones(fresh, []), []);
    assert.deepEqual(clockState(fresh, 'Pacific/Auckland', [], now, siteTimezones(fresh, [])).warnings, []);
  });
});

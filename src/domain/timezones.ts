/**
 * Which timezone names the configuration accepts. Intl accepts far more than IANA zone names, and
 * reads some of them as somewhere unexpected: `BST` (British Summer Time to a UK installer) is
 * Asia/Dhaka to Intl, `CET` is Europe/Brussels, `IST` is Asia/Calcutta. A site so configured would
 * compute its till's dates in the wrong place without a word, so only canonical IANA names are
 * accepted, and the refusal suggests one for the usual abbreviations.
 *
 * Canonical: the zones Intl lists (`Intl.supportedValuesOf('timeZone')`) plus `UTC`, which are the
 * zones of the agent's own table (utc-offsets.ts), so a canonical name is checked without Intl.
 * Node's ICU still lists a few zones under the names they had before IANA renamed them (Asia/Calcutta for
 * Asia/Kolkata, Europe/Kiev for Europe/Kyiv); the current IANA name of such a zone is accepted too:
 * a name in IANA's Area/Location form that Intl resolves to a listed zone of that form.
 */

import { tableZones } from './utc-offsets';

/** Common abbreviations and offsets people type for a timezone, with the zone they most likely mean. */
const SUGGESTIONS: ReadonlyMap<string, string> = new Map([
  ...['BST', 'GMT', 'GMT+0', 'GMT+1', 'GMT+01:00', 'UTC+1', 'UK', 'GB', 'WET', 'WEST'].map((a) => [a, 'Europe/London'] as const),
  ...['IST'].map((a) => [a, 'Asia/Kolkata (India) or Europe/Dublin (Ireland)'] as const),
  ...['CET', 'CEST', 'MET', 'MEST', 'MEZ', 'GMT+2', 'UTC+2'].map((a) => [a, 'Europe/Paris (or the city of the location, e.g. Europe/Berlin)'] as const),
  ...['EET', 'EEST'].map((a) => [a, 'Europe/Athens'] as const),
  ...['MSK'].map((a) => [a, 'Europe/Moscow'] as const),
  ...['EST', 'EDT', 'ET', 'EST5EDT', 'US/EASTERN'].map((a) => [a, 'America/New_York'] as const),
  ...['CST', 'CDT', 'CT', 'CST6CDT', 'US/CENTRAL'].map((a) => [a, 'America/Chicago'] as const),
  ...['MST', 'MDT', 'MT', 'MST7MDT', 'US/MOUNTAIN'].map((a) => [a, 'America/Denver'] as const),
  ...['PST', 'PDT', 'PT', 'PST8PDT', 'US/PACIFIC'].map((a) => [a, 'America/Los_Angeles'] as const),
  ...['AKST', 'AKDT'].map((a) => [a, 'America/Anchorage'] as const),
  ...['HST'].map((a) => [a, 'Pacific/Honolulu'] as const),
  ...['AEST', 'AEDT'].map((a) => [a, 'Australia/Sydney'] as const),
  ...['ACST', 'ACDT'].map((a) => [a, 'Australia/Adelaide'] as const),
  ...['AWST'].map((a) => [a, 'Australia/Perth'] as const),
  ...['NZST', 'NZDT'].map((a) => [a, 'Pacific/Auckland'] as const),
  ...['JST'].map((a) => [a, 'Asia/Tokyo'] as const),
  ...['KST'].map((a) => [a, 'Asia/Seoul'] as const),
  ...['HKT'].map((a) => [a, 'Asia/Hong_Kong'] as const),
  ...['SGT'].map((a) => [a, 'Asia/Singapore'] as const),
  ...['SAST'].map((a) => [a, 'Africa/Johannesburg'] as const),
  ...['Z', 'ZULU', 'UCT', 'ETC/UCT', 'UNIVERSAL', 'GMT0', 'UTC0', 'UTC+0'].map((a) => [a, 'UTC'] as const),
]);

/** IANA's geographic areas: every canonical zone other than UTC and the Etc/ offsets lives under one. */
const AREA_FORM = /^(Africa|America|Antarctica|Arctic|Asia|Atlantic|Australia|Europe|Indian|Pacific)(\/[A-Z][A-Za-z0-9_+-]*)+$/;

/** What Intl reads a name as, or null when it does not know it at all. */
function resolved(name: string): string | null {
  try {
    return new Intl.DateTimeFormat('en', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

/**
 * IANA's canonical name of UTC is `Etc/UTC` (`UTC` is its link, and the name the agent's table and
 * Intl use): both are accepted, and the configuration holds it as the table's name (canonicalZone).
 */
const ETC_UTC = 'Etc/UTC';

/** The name the agent's table uses for a zone the configuration accepts: `Etc/UTC` is read as `UTC`. */
export function canonicalZone(name: string): string {
  return name === ETC_UTC ? 'UTC' : name;
}

/** Null when `name` is a canonical IANA zone name; otherwise why not, with a suggestion where we have one. */
export function timeZoneProblem(name: string): string | null {
  const zones = tableZones();
  if (zones.has(name) || name === ETC_UTC) return null;
  const reads = resolved(name);
  if (reads !== null && AREA_FORM.test(name) && AREA_FORM.test(reads) && zones.has(reads)) return null;
  const suggestion = SUGGESTIONS.get(name.trim().toUpperCase()) ?? (reads !== null && (zones.has(reads) || reads === 'UTC') && (AREA_FORM.test(reads) || reads === 'UTC') ? reads : null);
  const shown = JSON.stringify(name.length > 60 ? `${name.slice(0, 60)}...` : name);
  return suggestion !== null
    ? `${shown} is not a canonical IANA timezone name; use ${suggestion}`
    : `${shown} is not a canonical IANA timezone name, e.g. Europe/London, America/New_York, Pacific/Auckland (see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones)`;
}

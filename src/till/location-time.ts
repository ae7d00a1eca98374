import type { Config } from '../config/schema';
import { isIsoDate, type IsoDate } from '../domain/dates';
import { offsetIntervals, sqliteUtc } from '../domain/utc-offsets';
import { preparedStatement, type Db } from '../store/database';

/**
 * "Today" per location, one definition for the till and the agent: the till file's _today views and
 * locationToday() below (behind `lookup` and the status window) both take the location's date from
 * location_days, which the applier derives from location_utc_offsets whenever it writes them
 * (docs/pos-database.md, "Today at each location").
 */

/** How far ahead offsets are written, and how little may remain before they are written again. */
export const OFFSETS_YEARS_AHEAD = 5;
export const OFFSETS_REWRITE_BELOW_YEARS = 4;
/** Written from a week back, so a clock set slightly back still finds an interval that has started. */
const OFFSETS_START_BACK_MS = 7 * 86_400_000;
const YEAR_MS = 365.25 * 86_400_000;

/**
 * How the _today views (till migration 004) find a location's day row at an instant: `loc` and `now`
 * are SQL expressions (the views use i.location_id and 'now'). Bounded to day rows that started in the
 * last two days (none is longer than 25 hours), so SQLite reads at most two. A test checks that the
 * views' text contains this.
 */
export function localDayMatchSql(loc: string, now: string): string {
  return `d.location_id = ${loc} AND d.utc_from <= datetime(${now}) AND d.utc_from > datetime(${now}, '-2 days') AND d.utc_to > datetime(${now})`;
}

/**
 * location_days from location_utc_offsets, in SQL: each period of constant offset cut at the
 * location's local midnights. `@location` names the location whose offsets were just written. Till
 * migration 004 runs the same statement without the WHERE for every location (a test keeps the two
 * the same).
 */
export const LOCAL_DAYS_FROM_OFFSETS_SQL = `WITH RECURSIVE day (location_id, period_from, period_to, offset_minutes, local_date) AS (
  SELECT location_id, from_utc, to_utc, offset_minutes, date(from_utc, offset_minutes || ' minutes')
  FROM location_utc_offsets WHERE location_id = @location
  UNION ALL
  SELECT location_id, period_from, period_to, offset_minutes, date(local_date, '+1 day')
  FROM day
  WHERE datetime(local_date, '+1 day', (-offset_minutes) || ' minutes') < period_to
)
INSERT INTO location_days (location_id, utc_from, utc_to, local_date)
SELECT location_id,
       max(period_from, datetime(local_date, (-offset_minutes) || ' minutes')),
       min(period_to, datetime(local_date, '+1 day', (-offset_minutes) || ' minutes')),
       local_date
FROM day`;

/**
 * The location's date at `at` as the _today views compute it, or null when the till file has no day
 * row for that instant (the views then fall back to the reading PC's local date; callers here fall
 * back to the location's configured timezone, which is what the applier writes the offsets from).
 */
export function locationToday(till: Db, locationId: number, at: Date = new Date()): IsoDate | null {
  const row = preparedStatement<[{ location: number; now: string }], { today: string | null }>(till, `SELECT (SELECT d.local_date FROM location_days d WHERE ${localDayMatchSql('@location', '@now')}) AS today`).get({
    location: Math.trunc(locationId),
    now: sqliteUtc(at.getTime()),
  });
  const today = row?.today ?? null;
  return today !== null && isIsoDate(today) ? today : null;
}

/** The timezone the applier writes a location's offsets from: configured, else the default. */
export function configuredTimezone(config: Pick<Config, 'locations' | 'defaultTimezone'>, locationId: number): string {
  return config.locations[String(locationId)]?.timezone ?? config.defaultTimezone;
}

/**
 * Writes the location's offsets (and so its days) again when they are missing, were written for
 * another timezone, or reach less than OFFSETS_REWRITE_BELOW_YEARS ahead, or its days do not end where
 * its offsets do. Returns whether it wrote. Runs in the caller's
 * transaction if there is one (the applier's apply), else in its own.
 */
export function ensureLocationOffsets(till: Db, locationId: number, timeZone: string, nowMs: number = Date.now()): boolean {
  // The last day row by its key (one search per apply; days are contiguous, so its end is theirs).
  const current = preparedStatement<[{ location: number }], { timezone: string | null; until: string | null; zones: number; days_until: string | null }>(
    till,
    `SELECT min(timezone) AS timezone, max(to_utc) AS until, count(DISTINCT timezone) AS zones,
            (SELECT utc_to FROM location_days WHERE location_id = @location ORDER BY utc_from DESC LIMIT 1) AS days_until
     FROM location_utc_offsets WHERE location_id = @location`,
  ).get({ location: locationId });
  const fresh =
    current !== undefined && current.zones === 1 && current.timezone === timeZone && current.until !== null &&
    current.until >= sqliteUtc(nowMs + OFFSETS_REWRITE_BELOW_YEARS * YEAR_MS) && current.days_until === current.until;
  if (fresh) return false;
  writeLocationOffsets(till, locationId, timeZone, nowMs - OFFSETS_START_BACK_MS, nowMs + OFFSETS_YEARS_AHEAD * YEAR_MS);
  return true;
}

/**
 * Replaces the location's offsets with those of `timeZone` over [fromMs, toMs), and its days with those
 * derived from them, in one transaction: a till never sees the one without the other.
 */
export function writeLocationOffsets(till: Db, locationId: number, timeZone: string, fromMs: number, toMs: number): void {
  const intervals = offsetIntervals(timeZone, fromMs, toMs);
  const remove = preparedStatement(till, 'DELETE FROM location_utc_offsets WHERE location_id = ?');
  const removeDays = preparedStatement(till, 'DELETE FROM location_days WHERE location_id = ?');
  const insert = preparedStatement(till, 'INSERT INTO location_utc_offsets (location_id, from_utc, to_utc, offset_minutes, timezone) VALUES (?, ?, ?, ?, ?)');
  const deriveDays = preparedStatement(till, LOCAL_DAYS_FROM_OFFSETS_SQL);
  till.transaction(() => {
    remove.run(locationId);
    removeDays.run(locationId);
    for (const i of intervals) insert.run(locationId, sqliteUtc(i.fromMs), sqliteUtc(i.toMs), i.offsetMinutes, timeZone);
    deriveDays.run({ location: locationId });
  })();
}

/** At the applier's start: every location the till file has, with its timezone now. Returns how many were written. */
export function ensureAllLocationOffsets(till: Db, timezoneFor: (locationId: number) => string, nowMs: number = Date.now()): number {
  const locations = till.prepare<[], { location_id: number }>('SELECT location_id FROM locations ORDER BY location_id').all();
  let written = 0;
  for (const { location_id } of locations) if (ensureLocationOffsets(till, location_id, timezoneFor(location_id), nowMs)) written += 1;
  return written;
}

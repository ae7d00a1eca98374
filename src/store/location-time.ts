import type { Config } from '../config/schema';
import { isIsoDate, type IsoDate } from '../domain/dates';
import { offsetIntervals, sqliteUtc } from '../domain/utc-offsets';
import type { Db } from './database';

/**
 * "Today" per location, one definition for the till and the agent: the till file's _today views and
 * locationToday() below (behind `lookup` and the status window) both take the location's date from
 * location_utc_offsets, which the applier keeps (docs/pos-database.md, "Today at each location").
 */

/** How far ahead offsets are written, and how little may remain before they are written again. */
export const OFFSETS_YEARS_AHEAD = 5;
export const OFFSETS_REWRITE_BELOW_YEARS = 4;
/** Written from a week back, so a clock set slightly back still finds an interval that has started. */
const OFFSETS_START_BACK_MS = 7 * 86_400_000;
const YEAR_MS = 365.25 * 86_400_000;

/**
 * The location's date at an instant, as SQL: `loc` and `now` are SQL expressions (the views use
 * p.location_id and 'now'). The view text in migration till/002 is this with those arguments; a test
 * keeps the two the same.
 */
export function offsetTodaySql(loc: string, now: string): string {
  return (
    `(SELECT date(${now}, o.offset_minutes || ' minutes') FROM location_utc_offsets o ` +
    `WHERE o.location_id = ${loc} AND o.from_utc <= datetime(${now}) ORDER BY o.from_utc DESC LIMIT 1)`
  );
}

/**
 * The location's date at `at` as the _today views compute it, or null when the till file has no
 * offsets for it (the views then fall back to the reading PC's local date; callers here fall back to
 * the location's configured timezone, which is what the applier writes the offsets from).
 */
export function locationToday(till: Db, locationId: number, at: Date = new Date()): IsoDate | null {
  const row = till.prepare<[{ now: string }], { today: string | null }>(`SELECT ${offsetTodaySql(String(Math.trunc(locationId)), '@now')} AS today`).get({ now: sqliteUtc(at.getTime()) });
  const today = row?.today ?? null;
  return today !== null && isIsoDate(today) ? today : null;
}

/** The timezone the applier writes a location's offsets from: configured, else the default. */
export function configuredTimezone(config: Pick<Config, 'locations' | 'defaultTimezone'>, locationId: number): string {
  return config.locations[String(locationId)]?.timezone ?? config.defaultTimezone;
}

/**
 * Writes the location's offsets again when they are missing, were written for another timezone, or
 * reach less than OFFSETS_REWRITE_BELOW_YEARS ahead. Returns whether it wrote. Runs in the caller's
 * transaction if there is one (the applier's apply), else in its own.
 */
export function ensureLocationOffsets(till: Db, locationId: number, timeZone: string, nowMs: number = Date.now()): boolean {
  const current = till
    .prepare<[number], { timezone: string | null; until: string | null; zones: number }>(
      'SELECT min(timezone) AS timezone, max(to_utc) AS until, count(DISTINCT timezone) AS zones FROM location_utc_offsets WHERE location_id = ?',
    )
    .get(locationId);
  const fresh =
    current !== undefined && current.zones === 1 && current.timezone === timeZone && current.until !== null &&
    current.until >= sqliteUtc(nowMs + OFFSETS_REWRITE_BELOW_YEARS * YEAR_MS);
  if (fresh) return false;
  writeLocationOffsets(till, locationId, timeZone, nowMs - OFFSETS_START_BACK_MS, nowMs + OFFSETS_YEARS_AHEAD * YEAR_MS);
  return true;
}

/** Replaces the location's offsets with those of `timeZone` over [fromMs, toMs). */
export function writeLocationOffsets(till: Db, locationId: number, timeZone: string, fromMs: number, toMs: number): void {
  const intervals = offsetIntervals(timeZone, fromMs, toMs);
  const remove = till.prepare('DELETE FROM location_utc_offsets WHERE location_id = ?');
  const insert = till.prepare('INSERT INTO location_utc_offsets (location_id, from_utc, to_utc, offset_minutes, timezone) VALUES (?, ?, ?, ?, ?)');
  till.transaction(() => {
    remove.run(locationId);
    for (const i of intervals) insert.run(locationId, sqliteUtc(i.fromMs), sqliteUtc(i.toMs), i.offsetMinutes, timeZone);
  })();
}

/** At the applier's start: every location the till file has, with its timezone now. Returns how many were written. */
export function ensureAllLocationOffsets(till: Db, timezoneFor: (locationId: number) => string, nowMs: number = Date.now()): number {
  const locations = till.prepare<[], { location_id: number }>('SELECT location_id FROM locations ORDER BY location_id').all();
  let written = 0;
  for (const { location_id } of locations) if (ensureLocationOffsets(till, location_id, timezoneFor(location_id), nowMs)) written += 1;
  return written;
}

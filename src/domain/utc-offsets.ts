/**
 * A timezone's UTC offsets as intervals of constant offset. The till file keeps them per location
 * (location_utc_offsets) so its _today views know the location's date from the UTC clock alone,
 * whatever the reading PC's timezone; the agent's "today" at a location comes from the same offsets.
 *
 * Read from the agent's own table of the IANA database (tz/table.ts, `npm run tzdata`), which holds
 * every zone from 2000 to 2100: asking Intl would page ICU's locale data and code into the process for
 * as long as it runs. A name or an instant outside the table is asked of Intl (tz/intl-offsets.ts),
 * which gives the same answer where both have one (test/unit/domain/tz-table.test.ts).
 */

import { TABLE_FROM_MS, TABLE_TO_MS, decodeRule, decodeZones, type ZoneRule } from './tz/encoding';
import type { OffsetInterval } from './tz/interval';
import { intlOffsetAt, intlOffsetIntervals } from './tz/intl-offsets';
import { TZ_TABLE } from './tz/table';

export type { OffsetInterval } from './tz/interval';

const MINUTE = 60_000;

/** The IANA tz release the agent's table was read from, e.g. 2026c. */
export const TZ_TABLE_RELEASE = TZ_TABLE.tz;

let zoneIndex: Map<string, number> | null = null;
const rules = new Map<number, ZoneRule>();

/** Each zone name of the table with its rule's index, decoded on first use. */
function zones(): Map<string, number> {
  zoneIndex ??= decodeZones(TZ_TABLE);
  return zoneIndex;
}

/** The zone's rule from the table, or null when the table does not hold that name. */
function tableRule(timeZone: string): ZoneRule | null {
  const index = zones().get(timeZone);
  if (index === undefined) return null;
  let rule = rules.get(index);
  if (!rule) {
    rule = decodeRule(TZ_TABLE.rules[index]!);
    rules.set(index, rule);
  }
  return rule;
}

let zoneNames: ReadonlySet<string> | null = null;

/** The names the table holds: every zone Intl lists, and UTC. */
export function tableZones(): ReadonlySet<string> {
  zoneNames ??= new Set(zones().keys());
  return zoneNames;
}

/** The index of the interval holding `ms`: the last start at or before it. */
function intervalAt(rule: ZoneRule, ms: number): number {
  let lo = 0;
  let hi = rule.starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (rule.starts[mid]! <= ms) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The zone's offset (minutes east of UTC) at an instant. Throws a RangeError for a name no one knows. */
export function offsetAt(timeZone: string, ms: number): number {
  const rule = ms >= TABLE_FROM_MS && ms < TABLE_TO_MS ? tableRule(timeZone) : null;
  if (rule === null) return intlOffsetAt(timeZone, ms);
  return rule.offsets[intervalAt(rule, ms)]!;
}

/**
 * The intervals of constant offset covering [fromMs, toMs). Interval bounds are whole minutes; the
 * first starts at fromMs rounded down to a minute, the last ends at toMs rounded up; consecutive
 * intervals differ in offset.
 */
export function offsetIntervals(timeZone: string, fromMs: number, toMs: number): OffsetInterval[] {
  const start = Math.floor(fromMs / MINUTE) * MINUTE;
  const end = Math.ceil(toMs / MINUTE) * MINUTE;
  if (end <= start) return [];
  const rule = start >= TABLE_FROM_MS && end <= TABLE_TO_MS ? tableRule(timeZone) : null;
  if (rule === null) return intlOffsetIntervals(timeZone, fromMs, toMs);
  const intervals: OffsetInterval[] = [];
  let i = intervalAt(rule, start);
  let from = start;
  while (i + 1 < rule.starts.length && rule.starts[i + 1]! < end) {
    intervals.push({ fromMs: from, toMs: rule.starts[i + 1]!, offsetMinutes: rule.offsets[i]! });
    from = rule.starts[i + 1]!;
    i += 1;
  }
  intervals.push({ fromMs: from, toMs: end, offsetMinutes: rule.offsets[i]! });
  return intervals;
}

/** An instant as SQLite's datetime() writes it in UTC: 'YYYY-MM-DD HH:MM:SS'. */
export function sqliteUtc(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

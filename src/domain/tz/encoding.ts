import type { OffsetInterval } from './interval';

/**
 * The agent's timezone table (table.ts, written by `npm run tzdata`) and how it is encoded. It covers
 * every zone Intl lists, plus UTC, from TABLE_FROM_MS to TABLE_TO_MS: the instants the agent asks
 * about (now, the week before, the years of offsets ahead it writes for the till) fall in it for as
 * long as this version can be in use; utc-offsets.ts asks Intl for anything outside.
 */
export const TABLE_FROM_MS = Date.UTC(2000, 0, 1);
export const TABLE_TO_MS = Date.UTC(2100, 0, 1);
const MINUTE = 60_000;

export interface TzTable {
  /** The IANA tz release it was read from (process.versions.tz of the Node that wrote it). */
  readonly tz: string;
  /** `Name=rule` pairs, space-separated, the rule's index in base 36. */
  readonly zones: string;
  readonly rules: readonly string[];
}

/** One zone's offsets: starts[i] (ms, starts[0] = TABLE_FROM_MS) begins offsets[i] (minutes east of UTC). */
export interface ZoneRule {
  readonly starts: readonly number[];
  readonly offsets: readonly number[];
}

/** The zones the table holds: those Intl lists, and UTC, sorted. */
export function tableZoneNames(): string[] {
  return [...new Set([...Intl.supportedValuesOf('timeZone'), 'UTC'])].sort();
}

/** Intervals covering [TABLE_FROM_MS, TABLE_TO_MS) to a rule: `offset` then `,minutesSincePrevious:offset` per change. */
export function encodeRule(intervals: readonly OffsetInterval[]): string {
  if (intervals.length === 0 || intervals[0]!.fromMs !== TABLE_FROM_MS || intervals[intervals.length - 1]!.toMs !== TABLE_TO_MS) {
    throw new Error('a rule needs intervals covering the whole table');
  }
  let text = intervals[0]!.offsetMinutes.toString(36);
  for (let i = 1; i < intervals.length; i++) {
    text += `,${((intervals[i]!.fromMs - intervals[i - 1]!.fromMs) / MINUTE).toString(36)}:${intervals[i]!.offsetMinutes.toString(36)}`;
  }
  return text;
}

export function decodeRule(text: string): ZoneRule {
  const [first, ...changes] = text.split(',');
  const starts = [TABLE_FROM_MS];
  const offsets = [parseInt(first!, 36)];
  for (const change of changes) {
    const [minutes, offset] = change.split(':');
    starts.push(starts[starts.length - 1]! + parseInt(minutes!, 36) * MINUTE);
    offsets.push(parseInt(offset!, 36));
  }
  return { starts, offsets };
}

/** The table's zone names with each one's rule index. */
export function decodeZones(table: TzTable): Map<string, number> {
  const zones = new Map<string, number>();
  for (const pair of table.zones.split(' ')) {
    const at = pair.lastIndexOf('=');
    zones.set(pair.slice(0, at), parseInt(pair.slice(at + 1), 36));
  }
  return zones;
}

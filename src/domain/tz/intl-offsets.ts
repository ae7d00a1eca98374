/**
 * A timezone's UTC offsets read from the IANA database that Node's ICU carries, through Intl. This is
 * how `npm run tzdata` makes the agent's own table (table.ts), and what zones.ts falls back to for an
 * instant or a name outside that table. Building a formatter pages in ICU's locale data and code,
 * which then stay in the process's memory: the running agent reads its table instead.
 */

import type { OffsetInterval } from './interval';

const MINUTE = 60_000;
const DAY = 86_400_000;

/** One formatter per zone, built once: building one reads ICU's data for the zone and locale, using it only formats. */
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** The zone's offset (minutes east of UTC) at an instant. */
export function intlOffsetAt(timeZone: string, ms: number): number {
  const parts = formatterFor(timeZone).formatToParts(new Date(ms));
  const get = (type: string): number => Number(parts.find((p) => p.type === type)?.value ?? 0);
  const asUtc = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return Math.round((asUtc - Math.floor(ms / 1000) * 1000) / MINUTE);
}

/**
 * The intervals of constant offset covering [fromMs, toMs). Scans in steps of `stepMs` (a day: no
 * zone in the IANA database changes its offset twice within a day) and finds each change to the
 * minute by binary search. Interval bounds are whole minutes; the first starts at fromMs rounded
 * down to a minute, the last ends at toMs rounded up.
 */
export function intlOffsetIntervals(timeZone: string, fromMs: number, toMs: number, stepMs = DAY): OffsetInterval[] {
  const start = Math.floor(fromMs / MINUTE) * MINUTE;
  const end = Math.ceil(toMs / MINUTE) * MINUTE;
  if (end <= start) return [];
  const intervals: OffsetInterval[] = [];
  let intervalStart = start;
  let current = intlOffsetAt(timeZone, start);
  let probe = start;
  while (probe < end) {
    const next = Math.min(probe + stepMs, end);
    const there = intlOffsetAt(timeZone, next);
    if (there !== current) {
      // The change lies in (probe, next]: find its first minute.
      let lo = probe;
      let hi = next;
      while (hi - lo > MINUTE) {
        const mid = lo + Math.floor((hi - lo) / 2 / MINUTE) * MINUTE;
        if (intlOffsetAt(timeZone, mid) === current) lo = mid;
        else hi = mid;
      }
      intervals.push({ fromMs: intervalStart, toMs: hi, offsetMinutes: current });
      intervalStart = hi;
      current = intlOffsetAt(timeZone, hi);
      // Continue from the change itself, so a second change before `next` is not skipped.
      probe = hi;
      continue;
    }
    probe = next;
  }
  intervals.push({ fromMs: intervalStart, toMs: end, offsetMinutes: current });
  return intervals;
}

/**
 * Clock and timezone checks. The till's "today" comes from the machine's clock and timezone (the POS
 * views use SQLite's date('now', 'localtime')), while the dates in updates are local to the location:
 * a wrong clock or a machine set to another timezone shifts which prices the till charges. Pure
 * functions here; ClockWatch collects what the HTTP clients observe.
 */

import { timeWithZone } from './domain/local-time';
import { offsetAt } from './domain/utc-offsets';

export interface SkewObservation {
  readonly source: string;
  /** Server time minus ours, in ms (positive: our clock is behind). */
  readonly skewMs: number;
  /** How precise the estimate is: half the round trip plus the header's 1 s resolution. */
  readonly uncertaintyMs: number;
  readonly at: string;
}

/**
 * Our clock's offset from a server's, from its `Date` header (RFC 7231, whole seconds) and the local
 * times the request was sent and the response arrived. Null when the header is missing or unparsable.
 */
export function skewFromDateHeader(dateHeader: string | null | undefined, sentAtMs: number, receivedAtMs: number): { skewMs: number; uncertaintyMs: number } | null {
  if (!dateHeader) return null;
  const server = Date.parse(dateHeader);
  if (Number.isNaN(server)) return null;
  const midpoint = (sentAtMs + receivedAtMs) / 2;
  // The header truncates to the second: the server's true time is in [server, server + 1000).
  const skewMs = server + 500 - midpoint;
  return { skewMs, uncertaintyMs: Math.max(0, receivedAtMs - sentAtMs) / 2 + 500 };
}

/** Whether a skew is beyond what we tolerate, given how precisely we know it. */
export function isClockWrong(observation: { skewMs: number; uncertaintyMs: number }, maxSkewMs: number): boolean {
  return Math.abs(observation.skewMs) - observation.uncertaintyMs > maxSkewMs;
}

/** The UTC offset (minutes east of UTC) of a timezone at an instant (the till's offsets use the same). */
export function utcOffsetMinutes(timeZone: string, at: Date): number {
  return offsetAt(timeZone, at.getTime());
}

export interface TimezoneMismatch {
  readonly locationTimezone: string;
  readonly machineTimezone: string;
  /** An instant (within the year ahead) at which their local times differ. */
  readonly differsAt: string;
  readonly locationOffsetMinutes: number;
  readonly machineOffsetMinutes: number;
}

/**
 * Whether the machine's timezone keeps the same local time as the location's over the coming year
 * (checked now and then every 24 hours, so a different DST rule is caught too). Another name with
 * the same offsets all year (Europe/Dublin for Europe/London) is not a mismatch.
 */
export function timezoneMismatch(machineTimezone: string, locationTimezone: string, now: Date): TimezoneMismatch | null {
  const instants = [now];
  for (let day = 1; day <= 366; day++) instants.push(new Date(now.getTime() + day * 86_400_000));
  for (const at of instants) {
    const machine = utcOffsetMinutes(machineTimezone, at);
    const location = utcOffsetMinutes(locationTimezone, at);
    if (machine !== location) {
      return { locationTimezone, machineTimezone, differsAt: at.toISOString(), locationOffsetMinutes: location, machineOffsetMinutes: machine };
    }
  }
  return null;
}

export function machineTimezone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}

export function describeSkew(o: SkewObservation): string {
  const seconds = Math.round(Math.abs(o.skewMs) / 1000);
  return `the system clock is ${seconds} s ${o.skewMs > 0 ? 'behind' : 'ahead of'} ${o.source} (checked ${timeWithZone(o.at)}); ` +
    "fix the machine's time (Windows: Settings > Time > Sync now): the till's \"today\" and the logs depend on it";
}

export function describeMismatch(m: TimezoneMismatch): string {
  const fmt = (min: number): string => `UTC${min >= 0 ? '+' : '-'}${String(Math.floor(Math.abs(min) / 60)).padStart(2, '0')}:${String(Math.abs(min) % 60).padStart(2, '0')}`;
  return `the machine's timezone ${m.machineTimezone} (${fmt(m.machineOffsetMinutes)}) differs from the location's ${m.locationTimezone} ` +
    `(${fmt(m.locationOffsetMinutes)} at ${timeWithZone(m.differsAt)}): the POS views' "today" follows the location, but a till or report that takes the date from this PC's clock would use the wrong day, so set the machine to ${m.locationTimezone}`;
}

/**
 * The latest clock observation per source (the tunnel's health check, the employee-interface client).
 * One instance per process (`clockWatch`) so any HTTP client can report without plumbing:
 * `clockWatch.observe('employee interface', res.headers.get('date'), sentAt, Date.now())`.
 */
export class ClockWatch {
  private readonly latest = new Map<string, SkewObservation>();
  private readonly listeners = new Set<(o: SkewObservation) => void>();

  observe(source: string, dateHeader: string | null | undefined, sentAtMs: number, receivedAtMs: number = Date.now()): SkewObservation | null {
    const skew = skewFromDateHeader(dateHeader, sentAtMs, receivedAtMs);
    if (!skew) return null;
    const observation: SkewObservation = { source, ...skew, at: new Date(receivedAtMs).toISOString() };
    this.latest.set(source, observation);
    for (const listener of this.listeners) listener(observation);
    return observation;
  }

  observations(): SkewObservation[] {
    return [...this.latest.values()];
  }

  onObservation(listener: (o: SkewObservation) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  clear(): void {
    this.latest.clear();
  }
}

export const clockWatch = new ClockWatch();

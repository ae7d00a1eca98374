/**
 * Clock and timezone checks (src/domain/today.ts says what "today" is). The till's _today views take
 * each location's date from this PC's clock in UTC and the location's timezone, so a wrong clock
 * shifts which prices the till charges; the PC's timezone does not, and is only worth a note when it
 * shows another local time than the site's one timezone right now (a till or report that takes its
 * date from the PC's own clock would then be a day out around midnight). Pure functions here;
 * ClockWatch collects what the HTTP clients observe.
 */

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { timeWithZone } from './domain/local-time';
import { WINDOWS_ZONES } from './domain/tz/windows-zones';
import { offsetAt, tableZones } from './domain/utc-offsets';

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
 * Whether the machine's timezone shows another local time than the location's now. Only now: a UTC
 * machine in November shows London's time, and the views follow the location whatever the machine's
 * timezone, so a difference due in the summer is nothing to act on today (it is noted when it comes).
 */
export function timezoneMismatch(machineTimezone: string, locationTimezone: string, now: Date): TimezoneMismatch | null {
  const machine = utcOffsetMinutes(machineTimezone, now);
  const location = utcOffsetMinutes(locationTimezone, now);
  if (machine === location) return null;
  return { locationTimezone, machineTimezone, differsAt: now.toISOString(), locationOffsetMinutes: location, machineOffsetMinutes: machine };
}

/** Names the zoneinfo database gives UTC, which Intl and the agent's table call UTC. */
const UTC_NAMES = new Set(['UTC', 'Etc/UTC', 'Etc/UCT', 'Etc/Universal', 'Etc/Zulu', 'UCT', 'Universal', 'Zulu', 'Etc/GMT', 'Etc/GMT0', 'GMT', 'GMT0']);

/** A zone name as the agent's table knows it, or null. */
function known(name: string | undefined): string | null {
  if (!name) return null;
  if (UTC_NAMES.has(name)) return 'UTC';
  return tableZones().has(name) ? name : null;
}

/** The zone name in a path into a zoneinfo folder (`/usr/share/zoneinfo/Europe/London`), or undefined. */
function zoneinfoName(target: string): string | undefined {
  const at = target.lastIndexOf('zoneinfo/');
  return at < 0 ? undefined : target.slice(at + 'zoneinfo/'.length);
}

/** Where /etc/localtime points, one link and every link followed, or none when it is not a link. */
function localtimeTargets(): string[] {
  try {
    return [fs.readlinkSync('/etc/localtime'), fs.realpathSync('/etc/localtime')];
  } catch {
    return [];
  }
}

/** The registry key that holds Windows' timezone settings. */
const WINDOWS_TIMEZONE_KEY = 'HKLM\\SYSTEM\\CurrentControlSet\\Control\\TimeZoneInformation';

/**
 * Windows' name of its timezone in what `reg query KEY` printed, or null: also null when "Adjust for
 * daylight saving time automatically" is off (DynamicDaylightTimeDisabled 1), where the PC keeps
 * standard time all year and no IANA zone of that name describes it (Intl's reading then).
 */
export function timeZoneKeyName(regOutput: string): string | null {
  const m = /^\s*TimeZoneKeyName\s+REG_SZ\s+(.+?)\s*$/m.exec(regOutput);
  const dst = /^\s*DynamicDaylightTimeDisabled\s+REG_DWORD\s+0x([0-9a-f]+)\s*$/im.exec(regOutput);
  const noDst = dst !== null && Number.parseInt(dst[1]!, 16) !== 0;
  return m && !noDst ? m[1]! : null;
}

let windowsZones: Map<string, string> | null = null;

/**
 * The IANA zone CLDR gives a Windows timezone name for the world (territory 001), as the agent's
 * table knows it, or null. ICU on Windows maps the same name with the same data, and may prefer the
 * PC's region's own zone where CLDR has one (America/Toronto for Eastern Standard Time in Canada),
 * whose offsets today are those of the Windows zone, as the world's zone's are. Null also for the few
 * names CLDR maps to a fixed offset (Etc/GMT+12 and the like), which the table lacks as Intl does not
 * list them: Intl then reads the timezone.
 */
export function windowsZone(keyName: string | null): string | null {
  if (keyName === null) return null;
  windowsZones ??= new Map(WINDOWS_ZONES);
  return known(windowsZones.get(keyName));
}

/** How long one reading of the Windows registry stands: the clock check may ask often, reg.exe is a process. */
const WINDOWS_ZONE_READ_MS = 60_000;
let windowsRead: { at: number; zone: string | null } | null = null;

/** How long reg.exe may take before the registry reading counts as failed. */
const REG_QUERY_TIMEOUT_MS = 5_000;

/**
 * This PC's timezone from the Windows registry (through reg.exe, in System32), or null. Synchronous,
 * on the thread that asks (the clock check, `status`), bounded by REG_QUERY_TIMEOUT_MS.
 */
function registryZone(now: number): string | null {
  // Read again after WINDOWS_ZONE_READ_MS, or after the clock was set back.
  if (windowsRead && Math.abs(now - windowsRead.at) < WINDOWS_ZONE_READ_MS) return windowsRead.zone;
  let zone: string | null = null;
  try {
    const systemRoot = process.env.SystemRoot;
    const reg = path.win32.join(systemRoot && path.win32.isAbsolute(systemRoot) ? systemRoot : 'C:\\Windows', 'System32', 'reg.exe');
    const out = execFileSync(reg, ['query', WINDOWS_TIMEZONE_KEY], { encoding: 'utf8', windowsHide: true, timeout: REG_QUERY_TIMEOUT_MS, stdio: ['ignore', 'pipe', 'ignore'] });
    zone = windowsZone(timeZoneKeyName(out));
  } catch {
    zone = null;
  }
  windowsRead = { at: now, zone };
  return zone;
}

/**
 * This PC's timezone as an IANA name: the TZ variable, else where /etc/localtime points (Linux, macOS)
 * or the registry's timezone name (Windows, through CLDR's mapping), when it names a zone of the
 * agent's table; else Intl's reading, which pages in ICU's date formatting for as long as the process
 * runs.
 */
export function machineTimezone(): string {
  const tz = process.env.TZ?.replace(/^:/, '');
  if (tz) return known(tz) ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  const named = process.platform === 'win32' ? registryZone(Date.now()) : (localtimeTargets().map((t) => known(zoneinfoName(t))).find((n) => n !== null) ?? null);
  return named ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
}

export function describeSkew(o: SkewObservation): string {
  const seconds = Math.round(Math.abs(o.skewMs) / 1000);
  return `the system clock is ${seconds} s ${o.skewMs > 0 ? 'behind' : 'ahead of'} ${o.source} (checked ${timeWithZone(o.at)}); ` +
    "fix the machine's time (Windows: Settings > Time > Sync now): the till's \"today\" and the logs depend on it";
}

export function describeMismatch(m: TimezoneMismatch): string {
  const fmt = (min: number): string => `UTC${min >= 0 ? '+' : '-'}${String(Math.floor(Math.abs(min) / 60)).padStart(2, '0')}:${String(Math.abs(min) % 60).padStart(2, '0')}`;
  return `this PC's timezone ${m.machineTimezone} (${fmt(m.machineOffsetMinutes)}) shows another local time than the location's ${m.locationTimezone} ` +
    `(${fmt(m.locationOffsetMinutes)}) now: the till's _today views still follow the location; only a till or report that takes its date from this PC's own clock would be a day out around midnight, so if yours does, set this PC to ${m.locationTimezone}`;
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

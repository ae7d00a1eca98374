import fs from 'node:fs';
import type { AdminAlertProvider, AdminMetricsProvider, AdminPanelProvider, OperationsAlert, OpsMetricName, PanelView } from '../admin/extensions';
import type { Agent, AgentService } from '../agent';
import { AppError } from '../errors';
import type { Config } from '../config/schema';
import type { Logger } from '../log';
import { cachedLocationTimezone } from '../employees/locations';
import { openReadOnly, storeFilePath, type Db } from '../store/database';
import {
  clockWatch,
  describeMismatch,
  describeSkew,
  isClockWrong,
  machineTimezone,
  timezoneMismatch,
  type ClockWatch,
  type SkewObservation,
  type TimezoneMismatch,
} from '../clock';
import { clockAlerts, clockPanel } from './panels';
import type { ClockState } from './states';

/**
 * The timezones the till's dates must follow: those of the locations this site has (every location
 * in the configuration, and every location updates have arrived for), each resolved as everywhere
 * else (AgentCore.timezoneFor): its configured `timezone`, else the one its Country in the cached
 * /Locations list implies, else `defaultTimezone`. Never `defaultTimezone` on its own: an Auckland
 * site whose locations are all in Auckland, on a PC set to Auckland, must not be told to move to the
 * default's Europe/London. A site with no location yet has no dates to follow, hence no advice.
 */
export function siteTimezones(config: Readonly<Config>, knownLocationIds: Iterable<number>, countryTimezone: (locationId: number) => string | null = () => null): string[] {
  const ids = new Set<number>(Object.keys(config.locations).map(Number));
  for (const id of knownLocationIds) ids.add(id);
  const zones = new Set<string>();
  for (const id of ids) zones.add(config.locations[String(id)]?.timezone ?? countryTimezone(id) ?? config.defaultTimezone);
  return [...zones].sort();
}

/** Runs `read` on a read-only connection to one of the agent's files; null when it is absent or unreadable. */
function readStoreFile<T>(dataDir: string, kind: 'agent' | 'staff', read: (db: Db) => T): T | null {
  const file = storeFilePath(dataDir, kind);
  if (!fs.existsSync(file)) return null;
  let db: Db | null = null;
  try {
    db = openReadOnly(file);
    return read(db);
  } catch {
    // Not migrated yet, or unreadable: the clock advice is a side note, so it follows what can be
    // read (the configured locations); the commands that need the file report the problem.
    return null;
  } finally {
    db?.close();
  }
}

function knownLocations(db: Db): number[] {
  return (db.prepare('SELECT location_id FROM known_locations').all() as { location_id: number }[]).map((r) => r.location_id);
}

/**
 * siteTimezones read from the data folder (agent.db for the locations, staff.db for their Country),
 * read-only, so `status` and `ops status` can ask from another process while the agent runs.
 */
export function siteTimezonesOnDisk(config: Readonly<Config>): string[] {
  const ids = readStoreFile(config.dataDir, 'agent', knownLocations) ?? [];
  return readStoreFile(config.dataDir, 'staff', (staff) => siteTimezones(config, ids, (id) => cachedLocationTimezone(staff, id))) ?? siteTimezones(config, ids);
}

/** Pure: the clock state from the machine's timezone, the site's timezones (siteTimezones) and what the HTTP clients observed. */
export function clockState(config: Readonly<Config>, machine: string, observations: readonly SkewObservation[], now: Date, zones: readonly string[]): ClockState {
  // With locations in several timezones the PC cannot follow them all, and need not: the views follow
  // each location. Only a site with one timezone is told when the PC shows another local time now.
  const timezoneMismatches = (zones.length === 1 ? zones : [])
    .map((zone) => timezoneMismatch(machine, zone, now))
    .filter((m): m is TimezoneMismatch => m !== null);
  const wrongClock = observations.filter((o) => isClockWrong(o, config.clock.maxSkewSeconds * 1000));
  return {
    machineTimezone: machine,
    timezoneMismatches,
    observations,
    wrongClock,
    warnings: [...wrongClock.map(describeSkew), ...timezoneMismatches.map(describeMismatch)],
  };
}

/** Warns about a wrong system clock or timezone (AgentService 'clock'). */
export class ClockService implements AgentService, AdminPanelProvider, AdminAlertProvider, AdminMetricsProvider {
  readonly name = 'clock';
  private timer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  private warned = new Set<string>();
  /**
   * The last check's result, which status reads show: the check runs at start, on each server
   * comparison and every clock.checkIntervalMinutes, never per read.
   */
  private last: ClockState | null = null;
  /** The running agent's store, for the locations this site has (set by start). */
  private agent: Agent | null = null;

  constructor(
    private readonly config: Readonly<Config>,
    private readonly log: Logger,
    private readonly watch: ClockWatch = clockWatch,
    private readonly machine: () => string = machineTimezone,
  ) {}

  async start(agent: Agent): Promise<void> {
    this.agent = agent;
    this.check();
    this.unsubscribe = this.watch.onObservation(() => this.check());
    this.timer = setInterval(() => this.check(), this.config.clock.checkIntervalMinutes * 60_000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.unsubscribe?.();
    this.timer = null;
    this.unsubscribe = null;
    this.agent = null;
  }

  /** The site's timezones, from the running agent's own connections (configured locations only before start). */
  private zones(): string[] {
    const core = this.agent?.core.isOpen ? this.agent.core : null;
    if (!core) return siteTimezones(this.config, []);
    return siteTimezones(this.config, knownLocations(core.agentDb), (id) => cachedLocationTimezone(core.staffDb, id));
  }

  state(): ClockState {
    return clockState(this.config, this.machine(), this.watch.observations(), new Date(), this.zones());
  }

  /** As of the last check (every checkIntervalMinutes and on each new clock observation). */
  current(): ClockState {
    return this.last ?? this.check();
  }

  adminPanel(): PanelView {
    return clockPanel(this.current(), this.zones());
  }

  runAdminAction(id: string, _actor: string): { message: string } {
    throw new AppError('not_found', 404, `the clock check has no action ${id}`);
  }

  adminAlerts(): OperationsAlert[] {
    return clockAlerts(this.current());
  }

  /** The largest offset among the last observations (as of the last check); absent before any. */
  metricValues(): Partial<Record<OpsMetricName, number | null>> {
    const observations = this.current().observations;
    if (observations.length === 0) return {};
    const worst = observations.reduce((a, b) => (Math.abs(b.skewMs) > Math.abs(a.skewMs) ? b : a));
    return { pos_sync_clock_skew_seconds: worst.skewMs / 1000 };
  }

  /** Logs each distinct problem once (per source / timezone pair) until it clears. */
  check(): ClockState {
    const state = this.state();
    const keys = new Set([...state.wrongClock.map((o) => `skew:${o.source}`), ...state.timezoneMismatches.map((m) => `tz:${m.locationTimezone}`)]);
    for (const o of state.wrongClock) if (!this.warned.has(`skew:${o.source}`)) this.log.warn(describeSkew(o));
    for (const m of state.timezoneMismatches) if (!this.warned.has(`tz:${m.locationTimezone}`)) this.log.warn(describeMismatch(m));
    this.warned = keys;
    this.last = state;
    return state;
  }
}

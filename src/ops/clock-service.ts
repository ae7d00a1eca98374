import fs from 'node:fs';
import type { AdminAlertProvider, AdminPanelProvider, OperationsAlert, PanelView } from '../admin/extensions';
import type { Agent, AgentService } from '../agent';
import { AppError } from '../errors';
import type { Config } from '../config/schema';
import type { Logger } from '../log';
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
} from './clock';
import { clockAlerts, clockPanel } from './panels';

export interface ClockState {
  readonly machineTimezone: string;
  readonly timezoneMismatches: readonly TimezoneMismatch[];
  readonly observations: readonly SkewObservation[];
  /** Observations showing the system clock off by more than clock.maxSkewSeconds. */
  readonly wrongClock: readonly SkewObservation[];
  /** What the window and `status` show, one sentence each. */
  readonly warnings: readonly string[];
}

/**
 * The timezones the till's dates must follow: those of the locations this site has (every location
 * in the configuration, and every location updates have arrived for), each by its configured
 * `timezone`, else `defaultTimezone`. Never `defaultTimezone` on its own: an Auckland site whose
 * locations all say Pacific/Auckland, on a PC set to Auckland, must not be told to move to the
 * default's Europe/London. A site with no location yet has no dates to follow, hence no advice.
 */
export function siteTimezones(config: Readonly<Config>, knownLocationIds: Iterable<number>): string[] {
  const ids = new Set<string>(Object.keys(config.locations));
  for (const id of knownLocationIds) ids.add(String(id));
  const zones = new Set<string>();
  for (const id of ids) zones.add(config.locations[id]?.timezone ?? config.defaultTimezone);
  return [...zones].sort();
}

/**
 * The locations updates have arrived for, read from agent.db (read-only, so any process can ask while
 * the agent runs). None when the file or its table does not exist yet, or cannot be read.
 */
export function knownLocationIds(dataDir: string): number[] {
  const file = storeFilePath(dataDir, 'agent');
  if (!fs.existsSync(file)) return [];
  let db: Db | null = null;
  try {
    db = openReadOnly(file);
    return (db.prepare('SELECT location_id FROM known_locations').all() as { location_id: number }[]).map((r) => r.location_id);
  } catch {
    // A data folder not migrated yet, or an agent.db that cannot be read: the clock advice is a side
    // note, so it follows the configured locations only; the commands that need agent.db report it.
    return [];
  } finally {
    db?.close();
  }
}

/** Pure: the clock state from the machine's timezone, the site's locations and what the HTTP clients observed. */
export function clockState(config: Readonly<Config>, machine: string, observations: readonly SkewObservation[], now: Date, knownLocations: Iterable<number>): ClockState {
  const timezoneMismatches = siteTimezones(config, knownLocations)
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
export class ClockService implements AgentService, AdminPanelProvider, AdminAlertProvider {
  readonly name = 'clock';
  private timer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  private warned = new Set<string>();
  /** The last check's result: the timezone scan costs tens of ms, too much for every status read. */
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

  /** The locations updates have arrived for, from the agent's own connection (none before start). */
  private knownLocations(): number[] {
    const db = this.agent?.core.isOpen ? this.agent.core.agentDb : null;
    if (!db) return [];
    return (db.prepare('SELECT location_id FROM known_locations').all() as { location_id: number }[]).map((r) => r.location_id);
  }

  state(): ClockState {
    return clockState(this.config, this.machine(), this.watch.observations(), new Date(), this.knownLocations());
  }

  /** As of the last check (every checkIntervalMinutes and on each new clock observation). */
  current(): ClockState {
    return this.last ?? this.check();
  }

  adminPanel(): PanelView {
    return clockPanel(this.current(), siteTimezones(this.config, this.knownLocations()));
  }

  runAdminAction(id: string, _actor: string): { message: string } {
    throw new AppError('not_found', 404, `the clock check has no action ${id}`);
  }

  adminAlerts(): OperationsAlert[] {
    return clockAlerts(this.current());
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

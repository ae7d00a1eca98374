import type { AdminAlertProvider, AdminPanelProvider, OperationsAlert, PanelView } from '../admin/extensions';
import type { Agent, AgentService } from '../agent';
import { AppError } from '../errors';
import type { Config } from '../config/schema';
import type { Logger } from '../log';
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

/** The timezones the till's dates must follow: the default and every configured location's. */
export function expectedTimezones(config: Readonly<Config>): string[] {
  const zones = new Set([config.defaultTimezone]);
  for (const location of Object.values(config.locations)) if (location.timezone) zones.add(location.timezone);
  return [...zones];
}

/** Pure: the clock state from the machine's timezone and what the HTTP clients observed. */
export function clockState(config: Readonly<Config>, machine: string, observations: readonly SkewObservation[], now: Date): ClockState {
  const timezoneMismatches = expectedTimezones(config)
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

  constructor(
    private readonly config: Readonly<Config>,
    private readonly log: Logger,
    private readonly watch: ClockWatch = clockWatch,
    private readonly machine: () => string = machineTimezone,
  ) {}

  async start(_agent: Agent): Promise<void> {
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
  }

  state(): ClockState {
    return clockState(this.config, this.machine(), this.watch.observations(), new Date());
  }

  /** As of the last check (every checkIntervalMinutes and on each new clock observation). */
  current(): ClockState {
    return this.last ?? this.check();
  }

  adminPanel(): PanelView {
    return clockPanel(this.current(), expectedTimezones(this.config));
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

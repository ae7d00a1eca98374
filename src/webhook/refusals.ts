
/**
 * Refused webhook calls (wrong or missing token, wrong Origin, a browser's request, oversize) are
 * counted per reason and minute instead of logged one line each: 100,000 refusals would otherwise
 * rotate the start-up and applied lines out of the log. Once a minute, if anything was refused, one
 * line summarises it; the status window shows the counts. No sender address is kept or logged.
 */

/** Only what is needed of the logger (this file's types are shared with the status window's code). */
interface RefusalLog {
  warn(message: string): void;
}

export interface RefusalSnapshot {
  /** When counting started (the agent's start). */
  readonly since: string;
  /** Per reason, since the start. */
  readonly total: Readonly<Record<string, number>>;
  /** Per reason, over the last 60 minutes (the minute under way included). */
  readonly lastHour: Readonly<Record<string, number>>;
  /** The last minute in which anything was refused (ISO start of that minute), or null. */
  readonly lastRefusedMinute: string | null;
}

const MINUTE_MS = 60_000;
const KEEP_MINUTES = 60;

function add(into: Map<string, number>, reason: string, n = 1): void {
  into.set(reason, (into.get(reason) ?? 0) + n);
}

function describeCounts(counts: ReadonlyMap<string, number>): string {
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([reason, n]) => `${reason} ${n}`)
    .join(', ');
}

export class RefusalCounter {
  private readonly since: string;
  private readonly total = new Map<string, number>();
  /** Closed minutes, oldest first: the minute's start (ms) and its counts. */
  private readonly minutes: { start: number; counts: Map<string, number> }[] = [];
  private currentStart: number;
  private current = new Map<string, number>();

  constructor(
    private readonly log: RefusalLog,
    private readonly now: () => number = Date.now,
  ) {
    this.since = new Date(this.now()).toISOString();
    this.currentStart = Math.floor(this.now() / MINUTE_MS) * MINUTE_MS;
  }

  count(reason: string): void {
    this.roll();
    add(this.current, reason);
    add(this.total, reason);
  }

  /** Closes the minute under way if it is over (logging its summary); the agent calls it every minute. */
  roll(): void {
    const minute = Math.floor(this.now() / MINUTE_MS) * MINUTE_MS;
    if (minute === this.currentStart) return;
    this.close();
    this.currentStart = minute;
  }

  /** Logs and keeps the minute under way (at stop, so its counts are not lost from the log). */
  close(): void {
    if (this.current.size === 0) return;
    const n = [...this.current.values()].reduce((a, b) => a + b, 0);
    const from = new Date(this.currentStart).toISOString().slice(11, 16);
    this.log.warn(`webhook: refused ${n} call${n === 1 ? '' : 's'} in the minute from ${from} UTC: ${describeCounts(this.current)}`);
    this.minutes.push({ start: this.currentStart, counts: this.current });
    this.current = new Map();
    const oldest = Math.floor(this.now() / MINUTE_MS) * MINUTE_MS - (KEEP_MINUTES - 1) * MINUTE_MS;
    while (this.minutes.length > 0 && this.minutes[0]!.start < oldest) this.minutes.shift();
  }

  snapshot(): RefusalSnapshot {
    this.roll();
    const oldest = Math.floor(this.now() / MINUTE_MS) * MINUTE_MS - (KEEP_MINUTES - 1) * MINUTE_MS;
    const lastHour = new Map<string, number>();
    let lastRefused: number | null = null;
    for (const m of this.minutes) {
      if (m.start < oldest) continue;
      for (const [reason, n] of m.counts) add(lastHour, reason, n);
      lastRefused = m.start;
    }
    for (const [reason, n] of this.current) add(lastHour, reason, n);
    if (this.current.size > 0) lastRefused = this.currentStart;
    return {
      since: this.since,
      total: Object.fromEntries(this.total),
      lastHour: Object.fromEntries(lastHour),
      lastRefusedMinute: lastRefused === null ? null : new Date(lastRefused).toISOString(),
    };
  }
}

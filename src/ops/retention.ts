import type { Agent, AgentService } from '../agent';
import type { Config } from '../config/schema';
import { addDays, todayIn, type IsoDate } from '../domain/dates';
import { describeError } from '../errors';
import type { Logger } from '../log';
import type { Db } from '../store/database';

/**
 * Retention: what the agent forgets, and when. Each kind of row is pruned in small transactions
 * (`batchSize` rows) with a turn of the event loop between them, so the webhook and the applier (same
 * connection) never wait long behind a prune, and the till (its own WAL reader) is never blocked.
 */

export interface RetentionCutoffs {
  /** Raw bodies of applied/stale/superseded updates applied (or received) before this instant are dropped. */
  readonly rawPayloadBefore: string;
  /** Quarantine rows and conflicting bodies received before this instant are dropped. */
  readonly quarantineBefore: string;
  readonly deliveriesBefore: string;
  /** Per location: ranges whose DateTo is before this date (in the location's timezone) are deleted. */
  readonly rangesEndedBefore: ReadonlyMap<number, IsoDate>;
}

export function retentionCutoffs(
  retention: Config['retention'],
  locations: readonly { locationId: number; timezone: string }[],
  now: Date,
): RetentionCutoffs {
  const daysAgo = (days: number): string => new Date(now.getTime() - days * 86_400_000).toISOString();
  return {
    rawPayloadBefore: daysAgo(retention.rawPayloadDays),
    quarantineBefore: daysAgo(retention.quarantineDays),
    deliveriesBefore: daysAgo(retention.deliveryDays),
    rangesEndedBefore: new Map(locations.map((l) => [l.locationId, addDays(todayIn(l.timezone, now), -retention.rangeDays)])),
  };
}

export interface PruneCounts {
  rawBodies: number;
  conflictBodies: number;
  quarantine: number;
  deliveries: number;
  priceRanges: number;
  availabilityRanges: number;
}

export interface PruneReport {
  readonly counts: PruneCounts;
  readonly batches: number;
  /** The longest single transaction, in ms: what a writer could have waited behind. */
  readonly longestBatchMs: number;
  readonly totalMs: number;
}

const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** One kind of prunable row: a statement that handles at most `limit` rows and reports how many. */
interface PruneStep {
  readonly key: keyof PruneCounts;
  readonly run: (limit: number) => number;
}

function steps(db: Db, cutoffs: RetentionCutoffs): PruneStep[] {
  const rawBodies = db.prepare(
    `UPDATE inbox SET body = NULL WHERE id IN (
       SELECT id FROM inbox WHERE body IS NOT NULL AND state IN ('applied', 'stale', 'superseded')
         AND coalesce(applied_at, received_at) < ? LIMIT ?)`,
  );
  const conflictBodies = db.prepare(
    `UPDATE inbox SET body = NULL WHERE id IN (
       SELECT id FROM inbox WHERE body IS NOT NULL AND state = 'conflict' AND coalesce(applied_at, received_at) < ? LIMIT ?)`,
  );
  const quarantine = db.prepare('DELETE FROM quarantine WHERE id IN (SELECT id FROM quarantine WHERE received_at < ? LIMIT ?)');
  const deliveries = db.prepare('DELETE FROM deliveries WHERE id IN (SELECT id FROM deliveries WHERE received_at < ? LIMIT ?)');
  const prices = db.prepare('DELETE FROM price_ranges WHERE id IN (SELECT id FROM price_ranges WHERE date_to < ? AND location_id = ? LIMIT ?)');
  const availability = db.prepare(
    'DELETE FROM availability_ranges WHERE id IN (SELECT id FROM availability_ranges WHERE date_to < ? AND location_id = ? LIMIT ?)',
  );
  const list: PruneStep[] = [
    { key: 'rawBodies', run: (n) => rawBodies.run(cutoffs.rawPayloadBefore, n).changes },
    { key: 'conflictBodies', run: (n) => conflictBodies.run(cutoffs.quarantineBefore, n).changes },
    { key: 'quarantine', run: (n) => quarantine.run(cutoffs.quarantineBefore, n).changes },
    { key: 'deliveries', run: (n) => deliveries.run(cutoffs.deliveriesBefore, n).changes },
  ];
  for (const [locationId, before] of cutoffs.rangesEndedBefore) {
    list.push({ key: 'priceRanges', run: (n) => prices.run(before, locationId, n).changes });
    list.push({ key: 'availabilityRanges', run: (n) => availability.run(before, locationId, n).changes });
  }
  return list;
}

/**
 * Prunes everything past its cutoff, `batchSize` rows per IMMEDIATE transaction, yielding to the event
 * loop between batches. `shouldStop` lets the service end a run early when the agent stops.
 */
export async function pruneDatabase(
  db: Db,
  cutoffs: RetentionCutoffs,
  batchSize: number,
  shouldStop: () => boolean = () => false,
): Promise<PruneReport> {
  const started = performance.now();
  const counts: PruneCounts = { rawBodies: 0, conflictBodies: 0, quarantine: 0, deliveries: 0, priceRanges: 0, availabilityRanges: 0 };
  let batches = 0;
  let longestBatchMs = 0;
  for (const step of steps(db, cutoffs)) {
    while (!shouldStop() && db.open) {
      const t0 = performance.now();
      const changed = db.transaction(() => step.run(batchSize)).immediate();
      const ms = performance.now() - t0;
      longestBatchMs = Math.max(longestBatchMs, ms);
      batches += 1;
      counts[step.key] += changed;
      await yieldToEventLoop();
      if (changed < batchSize) break;
    }
  }
  return { counts, batches, longestBatchMs, totalMs: performance.now() - started };
}

/** The locations the database knows, with the timezone their dates are in. */
export function locationTimezones(db: Db, config: Readonly<Config>): { locationId: number; timezone: string }[] {
  return (db.prepare('SELECT location_id FROM locations').all() as { location_id: number }[]).map((l) => ({
    locationId: l.location_id,
    timezone: config.locations[String(l.location_id)]?.timezone ?? config.defaultTimezone,
  }));
}

export interface RetentionState {
  readonly enabled: boolean;
  readonly lastRunAt: string | null;
  readonly lastReport: PruneReport | null;
  readonly lastError: string | null;
  readonly running: boolean;
}

/** Runs the prune on a schedule while the agent runs (AgentService 'retention'). */
export class RetentionService implements AgentService {
  readonly name = 'retention';
  private agent: Agent | null = null;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<PruneReport | null> | null = null;
  private stopping = false;
  private lastRunAt: string | null = null;
  private lastReport: PruneReport | null = null;
  private lastError: string | null = null;

  constructor(
    private readonly config: Readonly<Config>,
    private readonly log: Logger,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  async start(agent: Agent): Promise<void> {
    this.agent = agent;
    this.stopping = false;
    this.timer = setInterval(() => void this.pruneNow(), this.config.retention.pruneIntervalMinutes * 60_000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
    this.agent = null;
  }

  state(): RetentionState {
    return { enabled: this.config.retention.enabled, lastRunAt: this.lastRunAt, lastReport: this.lastReport, lastError: this.lastError, running: this.running !== null };
  }

  async pruneNow(): Promise<PruneReport | null> {
    if (this.running) return this.running;
    const db = this.agent?.core.db;
    if (!db?.open || this.stopping) return null;
    const config = this.config;
    this.running = (async () => {
      try {
        const cutoffs = retentionCutoffs(config.retention, locationTimezones(db, config), this.clock());
        const report = await pruneDatabase(db, cutoffs, config.retention.batchSize, () => this.stopping);
        this.lastReport = report;
        this.lastError = null;
        const total = Object.values(report.counts).reduce((a, b) => a + b, 0);
        if (total > 0) {
          this.log.info(
            `retention: pruned ${JSON.stringify(report.counts)} in ${report.batches} batches (longest ${report.longestBatchMs.toFixed(1)} ms)`,
          );
        }
        return report;
      } catch (err) {
        this.lastError = describeError(err);
        this.log.error(`retention: ${this.lastError}`);
        return null;
      } finally {
        this.lastRunAt = this.clock().toISOString();
        this.running = null;
      }
    })();
    return this.running;
  }
}

import path from 'node:path';
import { readUiSettingsFile, RETENTION_DAY_KEYS, uiSettingsFile, type RetentionDayKey, type RetentionOverrides } from '../admin/settings';
import type { AdminPanelProvider, PanelView } from '../admin/extensions';
import type { Agent, AgentService } from '../agent';
import type { Config } from '../config/schema';
import { addDays, todayIn, type IsoDate } from '../domain/dates';
import { AppError, describeError } from '../errors';
import type { Logger } from '../log';
import { removeBodyFile } from '../store/body-files';
import type { Db } from '../store/database';
import type { RangePruneBatch, RangePruneRequest } from '../sync/range-prune';
import { localTime, pruneCountsText, retentionPanel } from './panels';
import type { EffectiveRetention, PruneCounts, PruneReport, RetentionState } from './states';

/**
 * Retention: what the agent forgets, and when (every kind of row it keeps has a rule: docs/operations.md,
 * "Retention"). Each kind of row is pruned in small transactions (`batchSize` rows). agent.db's rows
 * (bodies, quarantine, deliveries, finished updates, warnings, audit) are pruned here, with a turn of
 * the event loop between batches, so the receiver never waits long behind a prune. The till's ended
 * ranges are menu rows, whose one writer is the applier thread: each of their batches is one request
 * to it (RangePruner), so applies interleave with them; the till (its own WAL reader) is never blocked.
 */

export interface RetentionCutoffs {
  /** Raw bodies of applied/stale/superseded updates applied (or received) before this instant are dropped. */
  readonly rawPayloadBefore: string;
  /** Quarantine rows and conflicting bodies received before this instant are dropped. */
  readonly quarantineBefore: string;
  readonly deliveriesBefore: string;
  /** Per location: ranges whose DateTo is before this date (in the location's timezone) are deleted. */
  readonly rangesEndedBefore: ReadonlyMap<number, IsoDate>;
  /** Finished updates applied (or received) before this instant: their inbox rows and the till's applied_updates records. */
  readonly updatesBefore: string;
  /** Warnings acknowledged before this instant. */
  readonly warningsBefore: string;
  readonly auditBefore: string;
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
    updatesBefore: daysAgo(retention.updateDays),
    warningsBefore: daysAgo(retention.warningDays),
    auditBefore: daysAgo(retention.auditDays),
  };
}

const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** One batch of the till's ended ranges, run by the one writer of the menu (ApplierHost.pruneRanges). */
export type RangePruner = (request: RangePruneRequest) => Promise<RangePruneBatch>;

/** One kind of prunable row: one batch of at most `limit` rows, reporting how many and how long. */
interface PruneStep {
  readonly key: keyof PruneCounts;
  readonly run: (limit: number) => Promise<RangePruneBatch>;
}

/** What retention prunes: agent.db here, and the till's ended ranges through the applier thread. */
export interface PruneTarget {
  readonly agent: Db;
  readonly ranges: RangePruner;
}

function steps(target: PruneTarget, cutoffs: RetentionCutoffs, onHeld: (files: number) => void): PruneStep[] {
  const db = target.agent;
  // Bodies live in inbox_bodies; inbox.body_kept says which are still there (its partial index finds them).
  const rawBodyIds = db.prepare<[string, number], { id: number }>(
    `SELECT id FROM inbox WHERE body_kept = 1 AND state IN ('applied', 'stale', 'superseded')
       AND coalesce(applied_at, received_at) < ? LIMIT ?`,
  );
  const conflictBodyIds = db.prepare<[string, number], { id: number }>(
    `SELECT id FROM inbox WHERE body_kept = 1 AND state = 'conflict' AND coalesce(applied_at, received_at) < ? LIMIT ?`,
  );
  const dropBody = db.prepare('DELETE FROM inbox_bodies WHERE inbox_id = ?');
  const dropLayout = db.prepare('DELETE FROM inbox_body_layout WHERE inbox_id = ?');
  const markDropped = db.prepare('UPDATE inbox SET body_kept = 0 WHERE id = ?');
  // A large body is a file of its own (src/store/body-files.ts): its row goes in the batch's
  // transaction, the file once that has committed (a crash between leaves a file no row names, which
  // the next start removes).
  const bodyFile = db.prepare<[number], { file: string }>('SELECT file FROM inbox_body_files WHERE inbox_id = ?');
  const dropBodyFile = db.prepare('DELETE FROM inbox_body_files WHERE inbox_id = ?');
  const dataDir = path.dirname(db.name);
  let filesToRemove: string[] = [];
  /** A row's stored body, in agent.db or in a file of its own (removed once the batch commits). */
  const dropStoredBody = (id: number): void => {
    const file = bodyFile.get(id);
    if (file) {
      dropBodyFile.run(id);
      filesToRemove.push(file.file);
    }
    dropBody.run(id);
    dropLayout.run(id);
  };
  const prune = (ids: { id: number }[]): number => {
    for (const { id } of ids) {
      dropStoredBody(id);
      markDropped.run(id);
    }
    return ids.length;
  };
  const removeFiles = (): void => {
    const files = filesToRemove;
    filesToRemove = [];
    const held = files.filter((file) => !removeBodyFile(dataDir, file));
    if (held.length > 0) onHeld(held.length);
  };
  const rawBodies = { run: (before: string, n: number) => ({ changes: prune(rawBodyIds.all(before, n)) }), committed: removeFiles };
  const conflictBodies = { run: (before: string, n: number) => ({ changes: prune(conflictBodyIds.all(before, n)) }), committed: removeFiles };
  // A finished update's row, once its delivery rows (pruned before it) and open warnings are gone. Never
  // a waiting or conflicting row, nor a row under the same ChangeSequence as a conflict (the operator
  // chooses among those bodies), nor the location's latest applied update (the chain's state: found from
  // the newest row down, not by reading the location's every row). Through inbox_finished (state,
  // applied or received): each batch reads the rows it deletes and the few kept.
  const updateIds = db.prepare<[string, number], { id: number }>(
    `SELECT i.id FROM inbox i
     WHERE i.state IN ('applied', 'stale', 'superseded') AND coalesce(i.applied_at, i.received_at) < ?
       AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.inbox_id = i.id)
       AND NOT EXISTS (SELECT 1 FROM update_warnings w WHERE w.inbox_id = i.id AND w.acknowledged_at IS NULL)
       AND NOT EXISTS (SELECT 1 FROM inbox c WHERE c.location_id = i.location_id AND c.change_sequence = i.change_sequence AND c.state = 'conflict')
       AND NOT (i.state = 'applied' AND i.change_sequence = (SELECT a.change_sequence FROM inbox a WHERE a.location_id = i.location_id AND a.state = 'applied'
                                                            ORDER BY a.change_sequence DESC LIMIT 1))
     LIMIT ?`,
  );
  const dropWarnings = db.prepare('DELETE FROM update_warnings WHERE inbox_id = ?');
  const dropUpdate = db.prepare('DELETE FROM inbox WHERE id = ?');
  const updates = {
    run: (before: string, n: number) => {
      const ids = updateIds.all(before, n);
      for (const { id } of ids) {
        dropStoredBody(id);
        dropWarnings.run(id);
        dropUpdate.run(id);
      }
      return { changes: ids.length };
    },
    committed: removeFiles,
  };
  const warnings = db.prepare(
    'DELETE FROM update_warnings WHERE id IN (SELECT id FROM update_warnings WHERE acknowledged_at IS NOT NULL AND acknowledged_at < ? LIMIT ?)',
  );
  const audit = db.prepare('DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE at < ? LIMIT ?)');
  const quarantine = db.prepare('DELETE FROM quarantine WHERE id IN (SELECT id FROM quarantine WHERE received_at < ? LIMIT ?)');
  const deliveries = db.prepare('DELETE FROM deliveries WHERE id IN (SELECT id FROM deliveries WHERE received_at < ? LIMIT ?)');
  /** An agent.db batch: one IMMEDIATE transaction on this thread, then a turn of the event loop. */
  const local = (statement: { run(cutoff: string, limit: number): { changes: number }; committed?: () => void }, cutoff: string) => async (limit: number): Promise<RangePruneBatch> => {
    if (!db.open) return { changed: 0, ms: 0 };
    const t0 = performance.now();
    let changed: number;
    try {
      changed = db.transaction(() => statement.run(cutoff, limit).changes).immediate();
    } catch (err) {
      filesToRemove = [];
      throw err;
    }
    statement.committed?.();
    const ms = performance.now() - t0;
    await yieldToEventLoop();
    return { changed, ms };
  };
  const list: PruneStep[] = [
    { key: 'rawBodies', run: local(rawBodies, cutoffs.rawPayloadBefore) },
    { key: 'conflictBodies', run: local(conflictBodies, cutoffs.quarantineBefore) },
    { key: 'quarantine', run: local(quarantine, cutoffs.quarantineBefore) },
    { key: 'deliveries', run: local(deliveries, cutoffs.deliveriesBefore) },
    // After the deliveries: an update's row goes once no delivery row names it.
    { key: 'updates', run: local(updates, cutoffs.updatesBefore) },
    { key: 'warnings', run: local(warnings, cutoffs.warningsBefore) },
    { key: 'audit', run: local(audit, cutoffs.auditBefore) },
  ];
  for (const [locationId, endedBefore] of cutoffs.rangesEndedBefore) {
    list.push({ key: 'priceRanges', run: (batchSize) => target.ranges({ locationId, kind: 'price', endedBefore, batchSize }) });
    list.push({ key: 'availabilityRanges', run: (batchSize) => target.ranges({ locationId, kind: 'availability', endedBefore, batchSize }) });
    list.push({ key: 'appliedRecords', run: (batchSize) => target.ranges({ locationId, kind: 'applied-updates', endedBefore: cutoffs.updatesBefore, batchSize }) });
  }
  return list;
}

/**
 * Prunes everything past its cutoff, `batchSize` rows per IMMEDIATE transaction. `shouldStop` lets the
 * service end a run early when the agent stops.
 */
export async function pruneDatabase(
  target: PruneTarget,
  cutoffs: RetentionCutoffs,
  batchSize: number,
  shouldStop: () => boolean = () => false,
): Promise<PruneReport> {
  const started = performance.now();
  const counts: PruneCounts = { rawBodies: 0, conflictBodies: 0, quarantine: 0, deliveries: 0, priceRanges: 0, availabilityRanges: 0, updates: 0, appliedRecords: 0, warnings: 0, audit: 0 };
  let batches = 0;
  let longestBatchMs = 0;
  let heldBodyFiles = 0;
  for (const step of steps(target, cutoffs, (files) => (heldBodyFiles += files))) {
    while (!shouldStop() && target.agent.open) {
      const { changed, ms } = await step.run(batchSize);
      longestBatchMs = Math.max(longestBatchMs, ms);
      batches += 1;
      counts[step.key] += changed;
      if (changed < batchSize) break;
    }
  }
  return { counts, batches, longestBatchMs, totalMs: performance.now() - started, heldBodyFiles };
}

/** The locations the till's file knows, with the timezone their dates are in. */
export function locationTimezones(till: Db, config: Readonly<Config>): { locationId: number; timezone: string }[] {
  return (till.prepare('SELECT location_id FROM locations').all() as { location_id: number }[]).map((l) => ({
    locationId: l.location_id,
    timezone: config.locations[String(l.location_id)]?.timezone ?? config.defaultTimezone,
  }));
}

/**
 * The retention periods in force (pure): a period the manager set in the status window
 * (<dataDir>/ui-settings.json) wins over the configuration's; the others are as configured.
 */
export function effectiveRetention(configured: Config['retention'], overrides: RetentionOverrides): EffectiveRetention {
  const days = {} as Record<RetentionDayKey, number>;
  const source = {} as Record<RetentionDayKey, 'config' | 'window'>;
  for (const key of RETENTION_DAY_KEYS) {
    const override = overrides[key];
    days[key] = override ?? configured[key];
    source[key] = override === undefined ? 'config' : 'window';
  }
  return { days, source };
}

/** Runs the prune on a schedule while the agent runs (AgentService 'retention'). */
export class RetentionService implements AgentService, AdminPanelProvider {
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
    const { effective, error } = this.effective();
    return {
      enabled: this.config.retention.enabled,
      effective,
      settingsError: error,
      lastRunAt: this.lastRunAt,
      lastReport: this.lastReport,
      lastError: this.lastError,
      running: this.running !== null,
    };
  }

  /**
   * Read at every run (not cached), so a period changed in the window applies from the next prune. An
   * unreadable settings file must not stop pruning (the disk would fill): the configured periods are used.
   */
  effective(): { effective: EffectiveRetention; error: string | null } {
    try {
      return { effective: effectiveRetention(this.config.retention, readUiSettingsFile(uiSettingsFile(this.config.dataDir)).retention), error: null };
    } catch (err) {
      return { effective: effectiveRetention(this.config.retention, {}), error: describeError(err) };
    }
  }

  adminPanel(): PanelView {
    return retentionPanel(this.state(), this.config.retention, localTime);
  }

  async runAdminAction(id: string, actor: string): Promise<{ message: string }> {
    if (id !== 'prune-now') throw new AppError('not_found', 404, `retention has no action ${id}`);
    this.log.info(`retention: prune requested from the status window by ${actor}`);
    const report = await this.pruneNow();
    if (!report) throw new AppError('prune_failed', 500, `pruning failed: ${this.lastError ?? 'the database is not open'}`);
    return { message: `Pruned: ${pruneCountsText(report.counts)}.` };
  }

  async pruneNow(): Promise<PruneReport | null> {
    if (this.running) return this.running;
    const agent = this.agent;
    const core = agent?.core;
    if (!agent || !core?.isOpen || this.stopping) return null;
    const applier = agent.applier;
    const target: PruneTarget = { agent: core.agentDb, ranges: (request) => applier.pruneRanges(request) };
    const till = core.tillDb;
    const config = this.config;
    this.running = (async () => {
      try {
        const { effective, error } = this.effective();
        if (error) this.log.warn(`retention: using the configured periods; the window's settings cannot be read: ${error}`);
        const cutoffs = retentionCutoffs({ ...config.retention, ...effective.days }, locationTimezones(till, config), this.clock());
        const report = await pruneDatabase(target, cutoffs, config.retention.batchSize, () => this.stopping);
        this.lastReport = report;
        this.lastError = null;
        const total = Object.values(report.counts).reduce((a, b) => a + b, 0);
        if (total > 0) {
          this.log.info(
            `retention: pruned ${JSON.stringify(report.counts)} in ${report.batches} batches (longest ${report.longestBatchMs.toFixed(1)} ms)`,
          );
        }
        if (report.heldBodyFiles > 0) {
          this.log.warn(`retention: ${report.heldBodyFiles} pruned body file${report.heldBodyFiles === 1 ? ' is' : 's are'} held open by another program and stay until a later start removes them`);
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

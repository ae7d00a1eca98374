import { performance } from 'node:perf_hooks';
import { planBody, readBody, readStoredBody, type ReadBodyResult } from '../domain/body';
import { warningCount, type UpdatePlan } from '../domain/payload';
import { baselineSettleRemaining, decideApply, siteRoleOf, type BaselinePolicy } from '../domain/sequence';
import { AppError, describeError } from '../errors';
import type { Db } from '../store/database';
import { BodyStore, releaseBody } from '../store/bodies';
import { MenuWriter } from '../till/writer';
import { clearApplying, isPaused, markApplying } from '../store/operations-state';
import { crashPoint } from '../crash-points';

interface PendingRow {
  id: number;
  change_sequence: number;
  parent_change_sequence: number;
}

export interface AppliedUpdate {
  readonly inboxId: number;
  readonly locationId: number;
  readonly changeSequence: number;
  readonly baseline: boolean;
  readonly forced: boolean;
  readonly warnings: number;
  readonly rowsWritten: number;
  readonly applyMs: number;
}

export interface ApplierEvents {
  applied?(update: AppliedUpdate): void;
  failed?(locationId: number, inboxId: number, error: unknown): void;
  /** An update the till file says is applied but the inbox did not know yet (a crash between the commits). */
  reconciled?(inboxId: number): void;
  /** Items of the update being applied written so far, of its total (at its start, every ~2 %, at its end). */
  progress?(progress: ApplyProgress): void;
}

export interface ApplyProgress {
  readonly locationId: number;
  readonly changeSequence: number;
  readonly inboxId: number;
  readonly done: number;
  readonly total: number;
}

/** Counts items as the writer takes them, telling `report` at the start, every `step` items and at the end. */
function counted<T>(items: Iterable<T>, total: number, report: (done: number) => void): Iterable<T> {
  const step = Math.max(1, Math.floor(total / 50));
  return {
    *[Symbol.iterator]() {
      let done = 0;
      report(0);
      for (const item of items) {
        yield item;
        done += 1;
        if (done % step === 0 || done === total) report(done);
      }
    },
  };
}

export interface ApplierFailure {
  readonly inboxId: number;
  readonly message: string;
  readonly at: string;
  /** How many times in a row this update has failed to apply. */
  readonly failures: number;
  /** When the next drain may try it again (epoch ms): retryAfterFailureMs after this failure. */
  readonly retryAt: number;
}

/** A location's last failed apply, as the applier thread hands it to the main thread and back. */
export interface LocationFailure extends ApplierFailure {
  readonly locationId: number;
}

/** The first wait before an update that failed to apply is tried again, and the longest. */
export const RETRY_AFTER_FAILURE_MS = { first: 2_000, longest: 5 * 60_000 } as const;

/**
 * How long an update that failed to apply `failures` times in a row waits before the next try:
 * doubling from RETRY_AFTER_FAILURE_MS.first up to .longest. A failure that lasts (a full disk, a
 * till file another program holds locked) is then retried less and less often, instead of re-running
 * a whole apply and logging an error at every poll while the till reads the same file.
 */
export function retryAfterFailureMs(failures: number): number {
  return Math.min(RETRY_AFTER_FAILURE_MS.longest, RETRY_AFTER_FAILURE_MS.first * 2 ** Math.max(0, Math.min(failures, 32) - 1));
}

interface AppliedRecord {
  inbox_id: number;
  location_id: number;
  change_sequence: number;
  applied_at: string;
  apply_ms: number;
  baseline: number;
  forced: number;
}

/**
 * The one writer of the till's menu. For each location it applies, in chain order, every pending
 * update whose ParentChangeSequence equals the last applied ChangeSequence.
 *
 * Two files, two commits (SQLite commits are atomic per file only):
 * 1. pos-sync.db, one IMMEDIATE transaction: the menu rows, the location's applied sequence and an
 *    applied_updates record. This is the truth about what the till has.
 * 2. agent.db: the inbox row becomes 'applied', with its warnings (and, for a force-apply, the older
 *    pending updates become 'superseded').
 * A crash between the two leaves an inbox row 'pending' that the till file lists as applied;
 * `reconcile()` (run before every drain) finishes step 2 for it, so nothing is lost or applied twice.
 * Applies are one at a time and each is reconciled before the next, so only a location's latest
 * applied update can be in that state: after its first run (every pending row, for whatever a stop,
 * a restore or another process left), reconcile reads one applied_updates row per location instead of
 * every pending row, so a backlog does not make every drain read all of it again.
 */
export class Applier {
  private readonly writer: MenuWriter;
  private readonly bodies: BodyStore;
  /** Last failure per location, kept in memory (and in inbox.note) so status can show it. */
  readonly lastFailure = new Map<number, ApplierFailure>();
  private readonly stmt;
  /** Whether reconcile() has looked at every pending row once (it then checks the latest applies only). */
  private fullyReconciled = false;

  constructor(
    private readonly till: Db,
    private readonly agent: Db,
    private readonly policy: BaselinePolicy,
    private readonly events: ApplierEvents = {},
    /** See sync.baselineSettleSeconds. */
    private readonly baselineSettleMs = 0,
    /** Each location's timezone, for its UTC offsets in the till file (src/till/location-time.ts). */
    timezoneFor: ((locationId: number) => string) | null = null,
    /** The clock an apply is recorded at (applied_at, and the change feed's pruning): the wall clock but in benchmarks. */
    private readonly now: () => number = Date.now,
    /** This site's locations (config `locations`, sync.acceptOtherLocations): others are stored, not applied. */
    private readonly site: { readonly configured: readonly number[]; readonly acceptOthers: boolean } = { configured: [], acceptOthers: true },
    /** True once the agent is stopping: a drain ends after the update it is applying. */
    private readonly stopRequested: () => boolean = () => false,
  ) {
    this.writer = new MenuWriter(till, timezoneFor);
    this.bodies = new BodyStore(agent);
    this.stmt = {
      tillSequence: till.prepare<[number], { last_change_sequence: number | null }>('SELECT last_change_sequence FROM locations WHERE location_id = ?'),
      appliedRecord: till.prepare<[number], AppliedRecord>(
        'SELECT inbox_id, location_id, change_sequence, applied_at, apply_ms, baseline, forced FROM applied_updates WHERE inbox_id = ?',
      ),
      upsertLocation: till.prepare(
        `INSERT INTO locations (location_id, location_name, currency, last_change_sequence, last_applied_at)
         VALUES (@locationId, @name, @currency, @sequence, @at)
         ON CONFLICT (location_id) DO UPDATE SET last_change_sequence = excluded.last_change_sequence,
           last_applied_at = excluded.last_applied_at,
           location_name = coalesce(excluded.location_name, location_name), currency = coalesce(excluded.currency, currency)`,
      ),
      insertApplied: till.prepare(
        `INSERT INTO applied_updates (inbox_id, location_id, change_sequence, applied_at, apply_ms, baseline, forced, rows_written)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      latestApplied: till.prepare<[], { id: number }>(
        `SELECT a.inbox_id AS id FROM locations l
         JOIN applied_updates a ON a.location_id = l.location_id AND a.change_sequence = l.last_change_sequence`,
      ),
      pendingById: agent.prepare<[number], { id: number; location_id: number; change_sequence: number }>(
        "SELECT id, location_id, change_sequence FROM inbox WHERE id = ? AND state = 'pending'",
      ),
      pendingIds: agent.prepare<[], { id: number; location_id: number; change_sequence: number }>("SELECT id, location_id, change_sequence FROM inbox WHERE state = 'pending'"),
      pendingLocations: agent.prepare<[], { location_id: number }>("SELECT DISTINCT location_id FROM inbox WHERE state = 'pending' ORDER BY location_id"),
      pendingFor: agent.prepare<[number], PendingRow & { received_at: string; source: string }>(
        "SELECT id, change_sequence, parent_change_sequence, received_at, source FROM inbox WHERE location_id = ? AND state = 'pending' ORDER BY change_sequence, id",
      ),
      markStaleUpTo: agent.prepare<[string, number, number]>(
        "UPDATE inbox SET state = 'stale', note = ? WHERE location_id = ? AND state = 'pending' AND change_sequence <= ?",
      ),
      // inbox_chain (location_id, state, parent_change_sequence): the children of the applied update.
      nextLink: agent.prepare<[number, number, number], PendingRow>(
        "SELECT id, change_sequence, parent_change_sequence FROM inbox WHERE location_id = ? AND state = 'pending' AND parent_change_sequence = ? AND change_sequence > ? ORDER BY change_sequence, id LIMIT 1",
      ),
      // refreshTillCounters, after every drain request.
      counters: agent.prepare<[], { location_id: number; location_name: string | null; waiting: number; warnings: number }>(
        `SELECT k.location_id, k.location_name,
                -- Stored and not applied: waiting in the chain, or a conflicting copy an operator must decide on.
                (SELECT count(*) FROM inbox w WHERE w.location_id = k.location_id AND w.state IN ('pending', 'conflict')) AS waiting,
                (SELECT count(*) FROM update_warnings u WHERE u.location_id = k.location_id AND u.acknowledged_at IS NULL) AS warnings
         FROM known_locations k`,
      ),
      tillCounters: till.prepare<[], { location_id: number; waiting_updates: number; warnings: number }>('SELECT location_id, waiting_updates, warnings FROM locations'),
      upsertCounters: till.prepare(
        `INSERT INTO locations (location_id, location_name, waiting_updates, warnings) VALUES (?, ?, ?, ?)
         ON CONFLICT (location_id) DO UPDATE SET waiting_updates = excluded.waiting_updates, warnings = excluded.warnings,
           location_name = coalesce(location_name, excluded.location_name)`,
      ),
      bodyBytes: agent.prepare<[number], { body_bytes: number }>('SELECT body_bytes FROM inbox WHERE id = ?'),
      markApplied: agent.prepare(
        "UPDATE inbox SET state = 'applied', applied_at = ?, apply_ms = ?, baseline = ?, forced = ?, note = NULL WHERE id = ? AND state = 'pending'",
      ),
      supersede: agent.prepare(
        "UPDATE inbox SET state = 'superseded', note = ? WHERE location_id = ? AND state = 'pending' AND change_sequence < ?",
      ),
      insertWarning: agent.prepare('INSERT INTO update_warnings (inbox_id, location_id, path, message, created_at) VALUES (?, ?, ?, ?, ?)'),
      knownName: agent.prepare('UPDATE known_locations SET location_name = coalesce(?, location_name) WHERE location_id = ?'),
      audit: agent.prepare('INSERT INTO audit_log (at, actor, action, details) VALUES (?, ?, ?, ?)'),
      note: agent.prepare('UPDATE inbox SET note = ? WHERE id = ?'),
    };
  }

  /** The till file's applied ChangeSequence for a location (null: nothing applied yet). */
  appliedSequence(locationId: number): number | null {
    return this.stmt.tillSequence.get(locationId)?.last_change_sequence ?? null;
  }

  /**
   * Finishes, in agent.db, any update the till file has applied but the inbox still calls pending
   * (a crash between the two commits). Idempotent. Returns how many it finished.
   */
  reconcile(): number {
    let finished = 0;
    // Each candidate is the inbox's own row, so the check below compares agent.db with the till file.
    const candidates = this.fullyReconciled
      ? this.stmt.latestApplied.all().flatMap((applied) => this.stmt.pendingById.get(applied.id) ?? [])
      : this.stmt.pendingIds.all();
    for (const { id, location_id, change_sequence } of candidates) {
      const record = this.stmt.appliedRecord.get(id);
      // The same update, not merely the same number: an agent.db from another set could reuse the id.
      if (!record || record.location_id !== location_id || record.change_sequence !== change_sequence) continue;
      // The warnings were not recorded: derive them again from the stored body (same plan, same warnings).
      let plan: UpdatePlan | null = null;
      try {
        plan = this.planFor(id);
        // Element warnings are found while items are planned: plan them all (nothing is written).
        for (const _item of plan.items) void _item;
      } catch {
        plan = null;
      }
      this.agent
        .transaction(() => {
          this.finish(record, plan, record.forced === 1);
          this.stmt.audit.run(new Date().toISOString(), 'pos-sync-agent', 'reconcile', JSON.stringify({ inboxId: id, locationId: record.location_id, changeSequence: record.change_sequence }));
        })
        .immediate();
      finished += 1;
      this.events.reconciled?.(id);
    }
    this.fullyReconciled = true;
    return finished;
  }

  /**
   * What the last drain left that becomes due with no change to agent.db: the earliest baseline
   * settle deadline or failed update's retry time (epoch ms), 0 after an interrupted drain (try again
   * at once), or null
   * when nothing does: every update left waits for a change first (its parent to arrive, an
   * operator's force-apply or conflict resolution, a resume), each of which reaches agent.db or cues a
   * drain itself. The agent's poll reads it to let the applier thread rest during a chain gap.
   */
  wakeAt: number | null = 0;

  /** Applies everything that can be applied now (nothing while paused). Returns what was applied, in order. */
  drain(): AppliedUpdate[] {
    const done: AppliedUpdate[] = [];
    let wake: number | null = null;
    const dueAt = (at: number): void => {
      wake = wake === null ? at : Math.min(wake, at);
    };
    this.wakeAt = 0;
    this.reconcile();
    if (isPaused(this.agent)) {
      // A resume cues its own drain.
      this.wakeAt = null;
      return done;
    }
    for (const { location_id } of this.stmt.pendingLocations.all()) {
      if (!this.forThisSite(location_id)) continue;
      for (;;) {
        // Stopping: the rest stays queued and is applied at the next start.
        if (this.stopRequested()) return done;
        let applied: AppliedUpdate | null = null;
        let attemptedId: number | null = null;
        // A location whose last apply failed waits out its retry delay, whatever else cued this
        // drain: its chain cannot move past the failed update anyway.
        const retryAt = this.retryAtFor(location_id);
        if (retryAt !== null) {
          dueAt(retryAt);
          break;
        }
        try {
          const next = this.nextFor(location_id);
          if (!next) break;
          if ('settlesAt' in next) {
            dueAt(next.settlesAt);
            break;
          }
          attemptedId = next.row.id;
          applied = this.applyRow(location_id, next.row, next.baseline, false, next.last);
        } catch (err) {
          this.recordFailure(location_id, attemptedId, err);
          // Retried once its delay is over (retryAfterFailureMs), as long as it fails.
          dueAt(this.lastFailure.get(location_id)!.retryAt);
          break;
        }
        this.lastFailure.delete(location_id);
        done.push(applied);
        this.events.applied?.(applied);
      }
    }
    this.wakeAt = wake;
    return done;
  }

  /**
   * Operator action: applies a pending update even though its parent never arrived (or as the
   * baseline under the `operator` policy). Pending updates older than it are marked superseded.
   * Runs even while paused: it names one update explicitly.
   */
  forceApply(inboxId: number, actor: string, reason: string): AppliedUpdate {
    this.reconcile();
    const row = this.agent
      .prepare<[number], PendingRow & { location_id: number; state: string }>(
        'SELECT id, location_id, change_sequence, parent_change_sequence, state FROM inbox WHERE id = ?',
      )
      .get(inboxId);
    if (!row) throw new AppError('not_found', 404, `no stored update #${inboxId}`);
    if (row.state !== 'pending') {
      throw new AppError('not_pending', 409, `update #${inboxId} is ${row.state}; only a waiting update can be force-applied`);
    }
    if (!this.forThisSite(row.location_id)) {
      throw new AppError('not_for_site', 409, `location ${row.location_id} is not one of this site's configured locations: add it under \`locations\` in the configuration first`);
    }
    const last = this.appliedSequence(row.location_id);
    if (last !== null && row.change_sequence <= last) {
      throw new AppError('stale', 409, `update #${inboxId} (ChangeSequence ${row.change_sequence}) is not newer than the applied ${last}`);
    }
    // Audited before the apply: the operator's reason must survive a crash between the two files' commits.
    this.stmt.audit.run(
      new Date().toISOString(),
      actor,
      'force-apply',
      JSON.stringify({ inboxId, locationId: row.location_id, changeSequence: row.change_sequence, parentChangeSequence: row.parent_change_sequence, previouslyApplied: last, reason }),
    );
    let applied: AppliedUpdate;
    try {
      applied = this.applyRow(row.location_id, row, last === null, true, last);
    } catch (err) {
      this.recordFailure(row.location_id, row.id, err);
      throw err;
    }
    this.lastFailure.delete(applied.locationId);
    this.events.applied?.(applied);
    return applied;
  }

  /**
   * When a location whose last apply failed may be tried again, or null when it may now (no failure,
   * its delay over, or a retry time further off than any delay, as after the clock was set back).
   */
  private retryAtFor(locationId: number): number | null {
    const failed = this.lastFailure.get(locationId);
    if (failed === undefined) return null;
    const wait = failed.retryAt - Date.now();
    return wait > 0 && wait <= RETRY_AFTER_FAILURE_MS.longest ? failed.retryAt : null;
  }

  /** The failed applies this applier keeps, for the main thread to hand to the next applier thread. */
  failureRecords(): LocationFailure[] {
    return [...this.lastFailure].map(([locationId, f]) => ({ locationId, ...f }));
  }

  /** Takes over failed applies an earlier applier thread recorded (before this one recorded any). */
  adoptFailures(records: readonly LocationFailure[]): void {
    for (const { locationId, ...failure } of records) if (!this.lastFailure.has(locationId)) this.lastFailure.set(locationId, failure);
  }

  /** Whether a location's updates go to this till (a location already on it always does). */
  private forThisSite(locationId: number): boolean {
    return siteRoleOf(locationId, this.appliedSequence(locationId), this.site) !== 'other';
  }

  /**
   * Finds the update to apply next for a location, marking stale ones on the way: null when none can
   * be applied until something changes, `settlesAt` when its baseline waits for the settle deadline.
   */
  private nextFor(locationId: number): { row: PendingRow; baseline: boolean; last: number | null } | { settlesAt: number } | null {
    const last = this.appliedSequence(locationId);
    if (last !== null) {
      // What the loop below decides for a location with an applied update, without reading every
      // pending row for each apply (a backlog of n made draining it O(n^2): bench:load, 1,500 per
      // location). decideApply: a row not newer than `last` is stale, and all of them precede any
      // applicable row in (change_sequence, id) order, so the loop marked them all; the first
      // applicable row in that order is the first child of `last` that is newer than it.
      this.stmt.markStaleUpTo.run(`not newer than the applied ChangeSequence ${last}`, locationId, last);
      const row = this.stmt.nextLink.get(locationId, last, last);
      return row ? { row, baseline: false, last } : null;
    }
    // No update applied yet: the location's baseline (decideApply says which, by policy).
    const pending = this.stmt.pendingFor.all(locationId);
    // Only webhook deliveries settle: an operator's import is meant to apply now.
    const webhookDeliveries = pending.filter((p) => p.source === 'webhook');
    if (this.policy === 'auto' && webhookDeliveries.length > 0) {
      const earliest = Math.min(...webhookDeliveries.map((p) => Date.parse(p.received_at)));
      const now = Date.now();
      const remaining = baselineSettleRemaining(earliest, now, this.baselineSettleMs);
      if (remaining > 0) return { settlesAt: now + remaining };
    }
    for (const row of pending) {
      const decision = decideApply({ lastApplied: null }, { changeSequence: row.change_sequence, parentChangeSequence: row.parent_change_sequence }, this.policy);
      if (decision.kind === 'apply') return { row, baseline: decision.baseline, last };
    }
    return null;
  }

  /**
   * A stored body, read part by part. Its layout (where the envelope's members and each item are,
   * recorded when it was stored) lets the envelope and each item be read from agent.db as they are
   * planned (BodyStore.ranges), so the largest publication is never loaded whole. A body
   * stored before layouts existed is read whole once, to find its items, and released at once.
   */
  private readStored(inboxId: number): ReadBodyResult {
    const missing = (): AppError => new AppError('body_missing', 500, `the body of update #${inboxId} is no longer stored`);
    const ranges = this.bodies.ranges(inboxId);
    if (!ranges) throw missing();
    const layout = this.bodies.layout(inboxId);
    if (layout) return readStoredBody(layout, ranges);
    const stored = this.bodies.read(inboxId, this.stmt.bodyBytes.get(inboxId)?.body_bytes);
    if (!stored) throw missing();
    try {
      return readBody(stored, { checkItems: false, itemBytes: ranges });
    } finally {
      releaseBody(stored);
    }
  }

  /** The stored update's plan: items are parsed, planned and written one at a time (src/domain/body.ts). */
  private planFor(inboxId: number): UpdatePlan {
    return this.countedPlanFor(inboxId).plan;
  }

  private countedPlanFor(inboxId: number): { plan: UpdatePlan; total: number } {
    const checked = this.readStored(inboxId);
    if (!checked.ok) throw new AppError('invalid_envelope', 500, `stored update #${inboxId} no longer validates: ${checked.error.field}: ${checked.error.message}`);
    return { plan: planBody(checked), total: checked.itemCount };
  }

  private applyRow(locationId: number, row: PendingRow, baseline: boolean, forced: boolean, expectedLast: number | null): AppliedUpdate {
    const started = performance.now();
    // 0. A note that this apply starts, before its body is even read, removed by step 2 (applyPlan): a
    //    start that finds it says "the agent stopped during update L:S; applying it again"
    //    (src/sync/resume.ts), and a thread that ends meanwhile is this update's failure (ApplierHost).
    markApplying(this.agent, { inboxId: row.id, locationId, changeSequence: row.change_sequence, startedAt: new Date(this.now()).toISOString() });
    const { plan, total } = this.countedPlanFor(row.id);
    const report = this.events.progress;
    if (!report) return this.applyPlan(locationId, row, baseline, forced, expectedLast, plan, started);
    const items = counted(plan.items, total, (done) => report({ locationId, changeSequence: row.change_sequence, inboxId: row.id, done, total }));
    // The plan's warnings array fills as its items are iterated: the copy shares it.
    const tracked: UpdatePlan = { ...plan, items };
    return this.applyPlan(locationId, row, baseline, forced, expectedLast, tracked, started);
  }

  private applyPlan(locationId: number, row: PendingRow, baseline: boolean, forced: boolean, expectedLast: number | null, plan: UpdatePlan, started: number): AppliedUpdate {
    const at = new Date(this.now()).toISOString();
    let rowsWritten = 0;
    // 1. The till's file: menu rows, applied sequence and the record, in one transaction.
    this.till
      .transaction(() => {
        // One writer by design; this guards the design (a second writer would otherwise double-apply).
        const now = this.appliedSequence(locationId);
        if (now !== expectedLast) throw new AppError('applied_sequence_moved', 409, `location ${locationId} moved from ${expectedLast} to ${now} during the apply`);
        rowsWritten = this.writer.write(plan, row.id, at).rowsWritten;
        crashPoint('apply-before-commit');
        this.stmt.upsertLocation.run({ locationId, name: plan.locationName, currency: plan.currency, sequence: row.change_sequence, at });
        this.stmt.insertApplied.run(row.id, locationId, row.change_sequence, at, performance.now() - started, baseline ? 1 : 0, forced ? 1 : 0, rowsWritten);
      })
      .immediate();
    crashPoint('between-commits');
    const applyMs = performance.now() - started;
    // 2. agent.db follows.
    this.agent
      .transaction(() =>
        this.finish(
          { inbox_id: row.id, location_id: locationId, change_sequence: row.change_sequence, applied_at: at, apply_ms: applyMs, baseline: baseline ? 1 : 0, forced: forced ? 1 : 0 },
          plan,
          forced,
        ),
      )
      .immediate();
    return { inboxId: row.id, locationId, changeSequence: row.change_sequence, baseline, forced, warnings: warningCount(plan.warnings), rowsWritten, applyMs };
  }

  /** agent.db's half of an apply (inside the caller's transaction). */
  private finish(record: AppliedRecord, plan: UpdatePlan | null, forced: boolean): void {
    clearApplying(this.agent);
    const changed = this.stmt.markApplied.run(record.applied_at, record.apply_ms, record.baseline, record.forced, record.inbox_id).changes;
    if (changed === 0) return;
    if (plan) {
      for (const w of plan.warnings) this.stmt.insertWarning.run(record.inbox_id, record.location_id, w.path, w.message, record.applied_at);
      this.stmt.knownName.run(plan.locationName, record.location_id);
    }
    if (forced) {
      this.stmt.supersede.run(`skipped by force-apply of ChangeSequence ${record.change_sequence}`, record.location_id, record.change_sequence);
    }
  }

  private recordFailure(locationId: number, inboxId: number | null, err: unknown): void {
    const message = describeError(err);
    const previous = this.lastFailure.get(locationId);
    const failures = previous !== undefined && previous.inboxId === (inboxId ?? 0) ? previous.failures + 1 : 1;
    const at = Date.now();
    this.lastFailure.set(locationId, { inboxId: inboxId ?? 0, message, at: new Date(at).toISOString(), failures, retryAt: at + retryAfterFailureMs(failures) });
    if (inboxId !== null) {
      try {
        // It failed, it was not cut short: the next start must not say it stopped during it.
        clearApplying(this.agent);
        this.stmt.note.run(`apply failed: ${message}`, inboxId);
      } catch {
        // Storage itself is failing; the in-memory record above still reaches status.
      }
    }
    this.events.failed?.(locationId, inboxId ?? 0, err);
  }

  /**
   * Copies what the till's pos_sync_state shows from agent.db (waiting updates, open warnings, names of
   * locations that have nothing applied yet) into the till file. Writes only what changed.
   */
  refreshTillCounters(): void {
    const rows = this.stmt.counters.all();
    const current = new Map(this.stmt.tillCounters.all().map((r) => [r.location_id, r]));
    const changed = rows.filter((r) => {
      const c = current.get(r.location_id);
      return !c || c.waiting_updates !== r.waiting || c.warnings !== r.warnings;
    });
    if (changed.length === 0) return;
    const upsert = this.stmt.upsertCounters;
    this.till.transaction(() => {
      for (const r of changed) upsert.run(r.location_id, r.location_name, r.waiting, r.warnings);
    }).immediate();
  }
}

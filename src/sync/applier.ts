import { performance } from 'node:perf_hooks';
import { streamUpdate, validateEnvelope } from '../domain/payload';
import { baselineSettleRemaining, decideApply, type BaselinePolicy } from '../domain/sequence';
import { AppError, describeError } from '../errors';
import type { Db } from '../store/database';
import { MenuWriter } from '../store/menu';

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
}

/**
 * The one writer of the menu tables. For each location it applies, in chain order, every pending
 * update whose ParentChangeSequence equals the last applied ChangeSequence. Each apply is one
 * IMMEDIATE transaction covering the menu rows, the inbox state and the location's sequence, so a
 * crash at any instant leaves either all of an update or none of it, and a restart resumes.
 */
export class Applier {
  private readonly writer: MenuWriter;
  private readonly parsedBodies = new Map<number, Record<string, unknown>>();
  /** Last failure per location, kept in memory (and in inbox.note) so status can show it. */
  readonly lastFailure = new Map<number, { inboxId: number; message: string; at: string }>();

  constructor(
    private readonly db: Db,
    private readonly policy: BaselinePolicy,
    private readonly events: ApplierEvents = {},
    /** See sync.baselineSettleSeconds. */
    private readonly baselineSettleMs = 0,
  ) {
    this.writer = new MenuWriter(db);
  }

  /** Hands over a body already parsed at receipt so a large payload is not parsed twice. */
  remember(inboxId: number, body: Record<string, unknown>): void {
    this.parsedBodies.set(inboxId, body);
  }

  /** Applies everything that can be applied now. Returns what was applied, in order. */
  drain(): AppliedUpdate[] {
    const done: AppliedUpdate[] = [];
    const locations = this.db
      .prepare<[], { location_id: number }>("SELECT DISTINCT location_id FROM inbox WHERE state = 'pending' ORDER BY location_id")
      .all();
    for (const { location_id } of locations) {
      for (;;) {
        let applied: AppliedUpdate | null;
        let attemptedId: number | null = null;
        try {
          applied = this.db
            .transaction(() => {
              const next = this.nextFor(location_id);
              if (!next) return null;
              attemptedId = next.row.id;
              return this.applyRow(location_id, next.row, next.baseline, false);
            })
            .immediate();
        } catch (err) {
          this.recordFailure(location_id, attemptedId, err);
          break;
        }
        if (!applied) break;
        this.lastFailure.delete(location_id);
        done.push(applied);
        this.events.applied?.(applied);
      }
    }
    // Bodies whose rows did not apply now are re-read from the inbox later; do not hold them in memory.
    this.parsedBodies.clear();
    return done;
  }

  /**
   * Operator action: applies a pending update even though its parent never arrived (or as the
   * baseline under the `operator` policy). Pending updates older than it are marked superseded.
   */
  forceApply(inboxId: number, actor: string, reason: string): AppliedUpdate {
    const applied = this.db
      .transaction(() => {
        const row = this.db
          .prepare<[number], PendingRow & { location_id: number; state: string }>(
            'SELECT id, location_id, change_sequence, parent_change_sequence, state FROM inbox WHERE id = ?',
          )
          .get(inboxId);
        if (!row) throw new AppError('not_found', 404, `no stored update #${inboxId}`);
        if (row.state !== 'pending') {
          throw new AppError('not_pending', 409, `update #${inboxId} is ${row.state}; only a waiting update can be force-applied`);
        }
        const location = this.locationSequence(row.location_id);
        if (location !== null && row.change_sequence <= location) {
          throw new AppError('stale', 409, `update #${inboxId} (ChangeSequence ${row.change_sequence}) is not newer than the applied ${location}`);
        }
        this.db
          .prepare("UPDATE inbox SET state = 'superseded', note = ? WHERE location_id = ? AND state = 'pending' AND change_sequence < ?")
          .run(`skipped by force-apply of ChangeSequence ${row.change_sequence}`, row.location_id, row.change_sequence);
        this.db
          .prepare('INSERT INTO audit_log (at, actor, action, details) VALUES (?, ?, ?, ?)')
          .run(
            new Date().toISOString(),
            actor,
            'force-apply',
            JSON.stringify({ inboxId, locationId: row.location_id, changeSequence: row.change_sequence, parentChangeSequence: row.parent_change_sequence, previouslyApplied: location, reason }),
          );
        return this.applyRow(row.location_id, row, location === null, true);
      })
      .immediate();
    this.lastFailure.delete(applied.locationId);
    this.events.applied?.(applied);
    return applied;
  }

  private locationSequence(locationId: number): number | null {
    const row = this.db
      .prepare<[number], { last_change_sequence: number | null }>('SELECT last_change_sequence FROM locations WHERE location_id = ?')
      .get(locationId);
    return row?.last_change_sequence ?? null;
  }

  /** Finds the update to apply next for a location, marking stale ones on the way. */
  private nextFor(locationId: number): { row: PendingRow; baseline: boolean } | null {
    const last = this.locationSequence(locationId);
    const pending = this.db
      .prepare<[number], PendingRow & { received_at: string; source: string }>(
        "SELECT id, change_sequence, parent_change_sequence, received_at, source FROM inbox WHERE location_id = ? AND state = 'pending' ORDER BY change_sequence, id",
      )
      .all(locationId);
    // Only webhook deliveries settle: an operator's import is meant to apply now.
    const webhookDeliveries = pending.filter((p) => p.source === 'webhook');
    if (last === null && this.policy === 'auto' && webhookDeliveries.length > 0) {
      const earliest = Math.min(...webhookDeliveries.map((p) => Date.parse(p.received_at)));
      if (baselineSettleRemaining(earliest, Date.now(), this.baselineSettleMs) > 0) return null;
    }
    for (const row of pending) {
      const decision = decideApply(
        { lastApplied: last },
        { changeSequence: row.change_sequence, parentChangeSequence: row.parent_change_sequence },
        this.policy,
      );
      if (decision.kind === 'stale') {
        this.db
          .prepare("UPDATE inbox SET state = 'stale', note = ? WHERE id = ?")
          .run(`not newer than the applied ChangeSequence ${last}`, row.id);
        continue;
      }
      if (decision.kind === 'apply') return { row, baseline: decision.baseline };
    }
    return null;
  }

  private applyRow(locationId: number, row: PendingRow, baseline: boolean, forced: boolean): AppliedUpdate {
    const started = performance.now();
    let body = this.parsedBodies.get(row.id);
    if (!body) {
      const stored = this.db.prepare<[number], { body: Buffer }>('SELECT body FROM inbox WHERE id = ?').get(row.id);
      if (!stored?.body) throw new AppError('body_missing', 500, `the body of update #${row.id} is no longer stored`);
      body = JSON.parse(stored.body.toString('utf8')) as Record<string, unknown>;
    }
    const checked = validateEnvelope(body);
    if (!checked.ok) throw new AppError('invalid_envelope', 500, `stored update #${row.id} no longer validates: ${checked.error.field}: ${checked.error.message}`);
    const plan = streamUpdate(checked.envelope, checked.body);
    const at = new Date().toISOString();
    const { rowsWritten } = this.writer.write(plan, row.id, at);
    const applyMs = performance.now() - started;
    this.db
      .prepare("UPDATE inbox SET state = 'applied', applied_at = ?, apply_ms = ?, baseline = ?, forced = ?, note = NULL WHERE id = ?")
      .run(at, applyMs, baseline ? 1 : 0, forced ? 1 : 0, row.id);
    this.db
      .prepare(
        `UPDATE locations SET last_change_sequence = ?, last_applied_at = ?,
           location_name = coalesce(?, location_name), currency = coalesce(?, currency) WHERE location_id = ?`,
      )
      .run(row.change_sequence, at, plan.locationName, plan.currency, locationId);
    return {
      inboxId: row.id,
      locationId,
      changeSequence: row.change_sequence,
      baseline,
      forced,
      warnings: plan.warnings.length,
      rowsWritten,
      applyMs,
    };
  }

  private recordFailure(locationId: number, inboxId: number | null, err: unknown): void {
    const message = describeError(err);
    this.lastFailure.set(locationId, { inboxId: inboxId ?? 0, message, at: new Date().toISOString() });
    if (inboxId !== null) {
      try {
        this.db.prepare('UPDATE inbox SET note = ? WHERE id = ?').run(`apply failed: ${message}`, inboxId);
      } catch {
        // Storage itself is failing; the in-memory record above still reaches status.
      }
    }
    this.events.failed?.(locationId, inboxId ?? 0, err);
  }
}

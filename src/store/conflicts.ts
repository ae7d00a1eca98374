import type { Db } from './database';
import { AppError } from '../errors';
import { formatUpdateName } from '../domain/update-name';

/**
 * Conflicting redeliveries: head office sent a different body under a ChangeSequence the inbox already
 * holds. The receiver keeps both (the later one as state 'conflict', never applied) and the location
 * turns red. An operator compares the bodies and keeps one, with a reason, audited; the others become
 * 'superseded' (kept for the retention period, no longer counted), so the location can go green again.
 */

/** One body stored under the conflicting update name. */
export interface ConflictBody {
  readonly inboxId: number;
  readonly receivedAt: string;
  readonly bytes: number;
  readonly sha256: string;
  readonly source: string;
  /** pending / applied / stale for the body received first; conflict for a later one. */
  readonly state: string;
  /** False once retention pruned the bytes: it can still be kept or dropped, not shown. */
  readonly bodyKept: boolean;
}

export interface Conflict {
  /** LOCATION:SEQUENCE (domain/update-name.ts). */
  readonly name: string;
  readonly locationId: number;
  readonly changeSequence: number;
  /** In the order received: the first is the one the chain uses unless an operator keeps another. */
  readonly bodies: readonly ConflictBody[];
  /**
   * Null when any body may be kept. Otherwise why only the first can be: it is already applied (or
   * behind what is applied), and another body cannot replace it under the same number.
   */
  readonly onlyFirst: string | null;
}

export interface ConflictResolution {
  readonly name: string;
  readonly kept: number;
  readonly dropped: readonly number[];
  /** The kept body's state afterwards: 'pending' means the applier applies it when its chain allows. */
  readonly keptState: string;
}

interface Row {
  readonly id: number;
  readonly location_id: number;
  readonly change_sequence: number;
  readonly received_at: string;
  readonly body_bytes: number;
  readonly body_sha256: string;
  readonly source: string;
  readonly state: string;
  readonly body_kept: number;
}

/** The rows still in play under one name: superseded ones are settled and not shown again. */
const ROWS_SQL =
  "SELECT id, location_id, change_sequence, received_at, body_bytes, body_sha256, source, state, body_kept FROM inbox WHERE location_id = ? AND change_sequence = ? AND state IN ('pending', 'applied', 'stale', 'conflict') ORDER BY id";

const FIRST_APPLIED =
  'the body received first is already on the till; another body cannot replace it under the same number. Keep it, and ask head office (through support) to send the corrected content as a new update.';
const FIRST_STALE = 'the body received first is behind what the till already has, so neither can be applied. Keep the first one to clear this.';

function onlyFirstReason(first: Pick<Row, 'state'> | undefined): string | null {
  if (!first || first.state === 'pending' || first.state === 'conflict') return null;
  return first.state === 'applied' ? FIRST_APPLIED : FIRST_STALE;
}

function conflictOf(rows: readonly Row[]): Conflict {
  const first = rows[0]!;
  return {
    name: formatUpdateName(first.location_id, first.change_sequence),
    locationId: first.location_id,
    changeSequence: first.change_sequence,
    bodies: rows.map((r) => ({ inboxId: r.id, receivedAt: r.received_at, bytes: r.body_bytes, sha256: r.body_sha256, source: r.source, state: r.state, bodyKept: r.body_kept === 1 })),
    onlyFirst: onlyFirstReason(rows.find((r) => r.state !== 'conflict')),
  };
}

/** Every unresolved conflict (of one location, or all), oldest first. */
export function listConflicts(db: Db, locationId: number | null = null): Conflict[] {
  const names = db
    .prepare<[number | null, number | null], { location_id: number; change_sequence: number }>(
      // Per known location (CROSS JOIN fixes that loop order) through the (location_id, state) index: no scan
      // of a large inbox on the HTTP thread.
      `SELECT i.location_id, i.change_sequence FROM known_locations k CROSS JOIN inbox i ON i.location_id = k.location_id AND i.state = 'conflict'
        WHERE (? IS NULL OR k.location_id = ?) GROUP BY i.location_id, i.change_sequence ORDER BY min(i.id)`,
    )
    .all(locationId, locationId);
  const rows = db.prepare<[number, number], Row>(ROWS_SQL);
  return names.map((n) => conflictOf(rows.all(n.location_id, n.change_sequence)));
}

/** The unresolved conflict under one name, or an error saying there is none. */
export function conflictNamed(db: Db, locationId: number, changeSequence: number): Conflict {
  const rows = db.prepare<[number, number], Row>(ROWS_SQL).all(locationId, changeSequence);
  if (!rows.some((r) => r.state === 'conflict')) {
    throw new AppError('no_conflict', 404, `update ${formatUpdateName(locationId, changeSequence)} has no conflicting body to resolve`);
  }
  return conflictOf(rows);
}

/** Whether the till file lists this inbox row as applied (the till commits before agent.db does). */
function tillApplied(till: Db, inboxId: number): boolean {
  return till.prepare<[number], { n: number }>('SELECT count(*) AS n FROM applied_updates WHERE inbox_id = ?').get(inboxId)!.n > 0;
}

/**
 * Keeps one body of a conflicting update and drops the others (state 'superseded', with a note), in one
 * agent.db transaction with its audit record. Keeping a later body is possible only while the first
 * one waits: that body then waits in its place, and the applier applies it when its chain allows.
 *
 * The applier writes the till file first and agent.db second. If it applied the first body between
 * our check and our commit, the till file shows it afterwards: the swap is then undone (the first body
 * back to 'pending', which the applier's reconcile marks applied) and the operator told so.
 */
export function keepConflictBody(
  agent: Db,
  till: Db,
  input: { locationId: number; changeSequence: number; keep: number; actor: string; reason: string },
): ConflictResolution {
  const name = formatUpdateName(input.locationId, input.changeSequence);
  const swap = agent
    .transaction((): ConflictResolution & { swapped: number | null } => {
      const conflict = conflictNamed(agent, input.locationId, input.changeSequence);
      const kept = conflict.bodies.find((b) => b.inboxId === input.keep);
      if (!kept) {
        throw new AppError('not_in_conflict', 400, `#${input.keep} is not one of the bodies of update ${name}: choose ${conflict.bodies.map((b) => `#${b.inboxId}`).join(' or ')}`);
      }
      const first = conflict.bodies.find((b) => b.state !== 'conflict') ?? null;
      let swapped: number | null = null;
      if (kept.state === 'conflict') {
        if (conflict.onlyFirst !== null || (first && tillApplied(till, first.inboxId))) {
          throw new AppError('conflict_first_applied', 409, `cannot keep #${kept.inboxId} of update ${name}: ${conflict.onlyFirst ?? FIRST_APPLIED}`);
        }
        // Kept, it would wait to be applied from bytes that are gone, and its chain with it.
        if (!kept.bodyKept) {
          throw new AppError(
            'conflict_body_pruned',
            409,
            `cannot keep #${kept.inboxId} of update ${name}: retention has pruned its bytes (retention.quarantineDays), so it could never be applied; keep the first body, or ask head office to send the correction as a new update`,
          );
        }
        swapped = first?.inboxId ?? null;
      }
      const note = `conflict resolved by ${input.actor}: kept #${kept.inboxId} (${input.reason})`;
      const drop = agent.prepare<[string, number]>("UPDATE inbox SET state = 'superseded', note = ? WHERE id = ? AND state IN ('pending', 'conflict', 'stale')");
      const dropped = conflict.bodies.filter((b) => b.inboxId !== kept.inboxId && b.state !== 'applied').map((b) => b.inboxId);
      for (const id of dropped) drop.run(note, id);
      let keptState = kept.state;
      if (kept.state === 'conflict') {
        agent.prepare<[string, number]>("UPDATE inbox SET state = 'pending', note = ? WHERE id = ? AND state = 'conflict'").run(note, kept.inboxId);
        keptState = 'pending';
      }
      agent
        .prepare('INSERT INTO audit_log (at, actor, action, details) VALUES (?, ?, ?, ?)')
        .run(
          new Date().toISOString(),
          input.actor,
          'resolve-conflict',
          JSON.stringify({ locationId: input.locationId, changeSequence: input.changeSequence, kept: kept.inboxId, dropped, reason: input.reason }),
        );
      return { name, kept: kept.inboxId, dropped, keptState, swapped };
    })
    .immediate();
  if (swap.swapped !== null && tillApplied(till, swap.swapped)) {
    agent
      .transaction(() => {
        agent.prepare("UPDATE inbox SET state = 'pending', note = NULL WHERE id = ? AND state = 'superseded'").run(swap.swapped);
        agent.prepare("UPDATE inbox SET state = 'conflict', note = NULL WHERE id = ? AND state = 'pending'").run(swap.kept);
        agent
          .prepare('INSERT INTO audit_log (at, actor, action, details) VALUES (?, ?, ?, ?)')
          .run(new Date().toISOString(), input.actor, 'resolve-conflict-undone', JSON.stringify({ locationId: input.locationId, changeSequence: input.changeSequence, reason: 'the first body was applied meanwhile' }));
      })
      .immediate();
    throw new AppError('conflict_first_applied', 409, `cannot keep #${swap.kept} of update ${name}: the body received first was applied meanwhile; ${FIRST_APPLIED}`);
  }
  return { name: swap.name, kept: swap.kept, dropped: swap.dropped, keptState: swap.keptState };
}

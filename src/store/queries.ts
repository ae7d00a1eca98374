import { baselineSettleRemaining, classifyPending, siteRoleOf, type BaselinePolicy } from '../domain/sequence';
import { BodyStore } from './bodies';
import type { Db } from './database';
import type { AvailabilityAnswer, DeliveryRow, LocationStatus, NotAppliedUpdate, PriceAnswer, RefusedUpdate, SitePolicy, TillAnswer, WaitingUpdate, WarningRow } from './read-models';

export type { AvailabilityAnswer, DeliveryRow, LocationStatus, NotAppliedUpdate, PriceAnswer, RefusedUpdate, SitePolicy, TillAnswer, WaitingUpdate, WarningRow };

/** Every location is this site's (a site without `locations`). */
export const OPEN_SITE: SitePolicy = { configured: [], acceptOthers: true };

/** Read models for `status`, `lookup`, the admin API and the status window. Read-only. */

/**
 * Per-location sync state: what is applied comes from the till's file (its truth), what waits and
 * what was warned about from agent.db.
 */
export function locationStatuses(till: Db, agent: Db, policy: BaselinePolicy, baselineSettleMs = 0, now: number = Date.now(), site: SitePolicy = OPEN_SITE): LocationStatus[] {
  const known = agent
    .prepare<[], { location_id: number; location_name: string | null; first_seen_at: string }>(
      'SELECT location_id, location_name, first_seen_at FROM known_locations ORDER BY location_id',
    )
    .all();
  const applied = new Map(
    till
      .prepare<[], { location_id: number; location_name: string | null; currency: string | null; last_change_sequence: number | null; last_applied_at: string | null }>(
        'SELECT location_id, location_name, currency, last_change_sequence, last_applied_at FROM locations',
      )
      .all()
      .map((l) => [l.location_id, l]),
  );
  const locations = known.map((k) => {
    const a = applied.get(k.location_id);
    return {
      location_id: k.location_id,
      location_name: a?.location_name ?? k.location_name,
      currency: a?.currency ?? null,
      last_change_sequence: a?.last_change_sequence ?? null,
      last_applied_at: a?.last_applied_at ?? null,
      first_seen_at: k.first_seen_at,
    };
  });
  const db = agent;
  const pendingStmt = db.prepare<[number], { id: number; change_sequence: number; parent_change_sequence: number; received_at: string; source: string; note: string | null }>(
    "SELECT id, change_sequence, parent_change_sequence, received_at, source, note FROM inbox WHERE location_id = ? AND state = 'pending' ORDER BY change_sequence, id",
  );
  const conflictsStmt = db.prepare<[number], { n: number }>("SELECT count(*) AS n FROM inbox WHERE location_id = ? AND state = 'conflict'");
  const warningsCount = db.prepare<[number], { n: number }>('SELECT count(*) AS n FROM update_warnings WHERE location_id = ? AND acknowledged_at IS NULL');
  const warningsStmt = db.prepare<[number], { id: number; inbox_id: number; change_sequence: number; path: string; message: string; created_at: string }>(
    `SELECT w.id, w.inbox_id, i.change_sequence, w.path, w.message, w.created_at FROM update_warnings w JOIN inbox i ON i.id = w.inbox_id
     WHERE w.location_id = ? AND w.acknowledged_at IS NULL ORDER BY w.id DESC LIMIT 20`,
  );
  // inbox_chain's (location_id, state) prefix: the few stale rows of a location, newest first.
  const staleStmt = db.prepare<[number, string], { change_sequence: number }>(
    "SELECT change_sequence FROM inbox WHERE location_id = ? AND state = 'stale' AND received_at > ? ORDER BY id DESC",
  );
  const notAppliedStmt = db.prepare<[number], { id: number; change_sequence: number; received_at: string; state: 'stale' | 'superseded'; note: string | null }>(
    "SELECT id, change_sequence, received_at, state, note FROM inbox WHERE location_id = ? AND state IN ('stale', 'superseded') ORDER BY id DESC LIMIT 10",
  );
  const notAppliedCount = db.prepare<[number], { n: number }>("SELECT count(*) AS n FROM inbox WHERE location_id = ? AND state IN ('stale', 'superseded')");
  // For a gap's missing update: its latest delivery, when that was a refusal (a refused body's row
  // names the update its envelope named, src/store/inbox.ts) and no copy of it is in the inbox.
  const refusedStmt = db.prepare<
    [number, number, number, number],
    { id: number; received_at: string; outcome: string; reason: string | null; quarantine_id: number | null; error_id: string | null; q_reason: string | null }
  >(
    `SELECT d.id, d.received_at, d.outcome, d.reason, d.quarantine_id, q.error_id, q.reason AS q_reason
     FROM deliveries d LEFT JOIN quarantine q ON q.id = d.quarantine_id
     WHERE d.location_id = ? AND d.change_sequence = ?
       AND NOT EXISTS (SELECT 1 FROM inbox i WHERE i.location_id = ? AND i.change_sequence = ?)
     ORDER BY d.id DESC LIMIT 1`,
  );
  const refusedMissing = (locationId: number, missing: readonly number[]): RefusedUpdate[] =>
    [...new Set(missing)].sort((a, b) => a - b).flatMap((sequence): RefusedUpdate[] => {
      const d = refusedStmt.get(locationId, sequence, locationId, sequence);
      if (!d || d.outcome !== 'rejected') return [];
      return [{
        changeSequence: sequence,
        receivedAt: d.received_at,
        errorId: d.error_id,
        // The quarantine's reason is the refusal's own words; the delivery's adds the field (a path of the body's keys).
        message: d.q_reason ?? d.reason,
        deliveryId: d.id,
        quarantineId: d.quarantine_id,
      }];
    });
  return locations.map((l): LocationStatus => {
    const pending = pendingStmt.all(l.location_id);
    const stale = l.last_applied_at === null ? [] : staleStmt.all(l.location_id, l.last_applied_at).map((r) => r.change_sequence);
    const webhookDeliveries = pending.filter((p) => p.source === 'webhook');
    const siteRole = siteRoleOf(l.location_id, l.last_change_sequence, site);
    const settling =
      l.last_change_sequence === null && policy === 'auto' && webhookDeliveries.length > 0 &&
      baselineSettleRemaining(Math.min(...webhookDeliveries.map((p) => Date.parse(p.received_at))), now, baselineSettleMs) > 0;
    const verdicts = classifyPending(
      l.last_change_sequence,
      pending.map((p) => ({ changeSequence: p.change_sequence, parentChangeSequence: p.parent_change_sequence })),
      policy,
      { settling, notForSite: siteRole === 'other' },
    );
    const missing = verdicts.flatMap((v, i) => (v.reason === 'waiting' ? [v.missing ?? pending[i]!.parent_change_sequence] : []));
    return {
      locationId: l.location_id,
      locationName: l.location_name,
      currency: l.currency,
      lastChangeSequence: l.last_change_sequence,
      lastAppliedAt: l.last_applied_at,
      firstSeenAt: l.first_seen_at,
      waiting: pending.map((p, i): WaitingUpdate => ({
        inboxId: p.id,
        changeSequence: p.change_sequence,
        parentChangeSequence: p.parent_change_sequence,
        receivedAt: p.received_at,
        reason: verdicts[i]!.reason,
        waitingFor: verdicts[i]!.waitingFor,
        missing: verdicts[i]!.missing,
        note: p.note,
      })),
      refusedMissing: missing.length === 0 ? [] : refusedMissing(l.location_id, missing),
      conflicts: conflictsStmt.get(l.location_id)?.n ?? 0,
      warnings: warningsCount.get(l.location_id)?.n ?? 0,
      recentWarnings: warningsStmt.all(l.location_id).map((w) => ({
        id: w.id,
        inboxId: w.inbox_id,
        changeSequence: w.change_sequence,
        path: w.path,
        message: w.message,
        createdAt: w.created_at,
      })),
      notApplied: notAppliedStmt.all(l.location_id).map((n): NotAppliedUpdate => ({
        inboxId: n.id,
        changeSequence: n.change_sequence,
        receivedAt: n.received_at,
        state: n.state,
        why: notAppliedWhy(n.state, n.note, l.last_change_sequence),
      })),
      notAppliedCount: notAppliedCount.get(l.location_id)?.n ?? 0,
      siteRole,
      staleSinceApplied: { count: stale.length, latest: stale.slice(0, 5) },
    };
  });
}

/** Why an update will never be applied, in a manager's words (from the note the applier left). */
function notAppliedWhy(state: 'stale' | 'superseded', note: string | null, lastApplied: number | null): string {
  // A copy dropped by resolve-conflict (store/conflicts.ts): the update itself goes on with the kept copy.
  const resolved = note?.match(/^conflict resolved by (.*): kept #(\d+) \((.*)\)$/s);
  if (state === 'superseded' && resolved) {
    return `this copy differed from the one kept, #${resolved[2]}, which is the update's content (conflict resolved by ${resolved[1]}: ${resolved[3]})`;
  }
  if (state === 'superseded') return note?.replace(/^skipped by force-apply of ChangeSequence (\d+)$/, 'skipped when update $1 was force-applied') ?? 'skipped by a force-apply';
  const m = note?.match(/^not newer than the applied ChangeSequence (\d+)$/);
  return m
    ? `it arrived after update ${m[1]} had been applied (or adopted as this location's starting point), and applying it would undo newer prices`
    : `it is not newer than the applied update${lastApplied === null ? '' : ` ${lastApplied}`}`;
}

/** Marks open warnings as seen by an operator (all, or one location's). Returns how many. */
export function acknowledgeWarnings(agent: Db, actor: string, locationId: number | null): number {
  const db = agent;
  return db
    .transaction(() => {
      const at = new Date().toISOString();
      const result =
        locationId === null
          ? db.prepare('UPDATE update_warnings SET acknowledged_at = ? WHERE acknowledged_at IS NULL').run(at)
          : db.prepare('UPDATE update_warnings SET acknowledged_at = ? WHERE acknowledged_at IS NULL AND location_id = ?').run(at, locationId);
      db.prepare('INSERT INTO audit_log (at, actor, action, details) VALUES (?, ?, ?, ?)').run(
        at,
        actor,
        'acknowledge-warnings',
        JSON.stringify({ locationId, count: result.changes }),
      );
      return result.changes;
    })
    .immediate();
}

export function recentDeliveries(agent: Db, limit = 100, beforeId: number | null = null): DeliveryRow[] {
  const rows = agent
    .prepare(
      `SELECT d.id, d.received_at, d.sender, d.source, d.body_bytes, d.location_id, d.change_sequence, d.outcome,
              d.http_status, d.reason, d.inbox_id, d.quarantine_id, i.state, i.apply_ms, i.note,
              (SELECT count(*) FROM update_warnings w WHERE w.inbox_id = d.inbox_id) AS warnings
       FROM deliveries d LEFT JOIN inbox i ON i.id = d.inbox_id
       WHERE (@beforeId IS NULL OR d.id < @beforeId)
       ORDER BY d.id DESC LIMIT @limit`,
    )
    .all({ limit, beforeId }) as {
    id: number; received_at: string; sender: string | null; source: string; body_bytes: number; location_id: number | null;
    change_sequence: number | null; outcome: string; http_status: number; reason: string | null; inbox_id: number | null;
    quarantine_id: number | null; state: string | null; apply_ms: number | null; note: string | null; warnings: number;
  }[];
  return rows.map((r) => {
    let result: DeliveryRow['result'];
    if (r.outcome === 'rejected') result = 'rejected';
    else if (r.outcome === 'duplicate') result = 'duplicate';
    else if (r.outcome === 'conflict') result = 'conflict';
    else if (r.state === 'applied') result = 'applied';
    else if (r.state === 'stale') result = 'stale';
    else if (r.state === 'superseded') result = 'superseded';
    else result = 'waiting';
    return {
      id: r.id,
      receivedAt: r.received_at,
      sender: r.sender,
      source: r.source,
      bytes: r.body_bytes,
      locationId: r.location_id,
      changeSequence: r.change_sequence,
      result,
      httpStatus: r.http_status,
      reason: r.reason ?? r.note,
      inboxId: r.inbox_id,
      quarantineId: r.quarantine_id,
      applyMs: r.outcome === 'accepted' ? r.apply_ms : null,
      warnings: r.outcome === 'accepted' ? r.warnings : 0,
    };
  });
}

/** A stored body (inbox or quarantine) for inspection, as the bytes that arrived. */
export function storedBody(agent: Db, kind: 'inbox' | 'quarantine', id: number): Buffer | null {
  if (kind === 'inbox') return new BodyStore(agent).read(id);
  // A row whose body was over the daily quarantine budget keeps an empty body: nothing to show.
  const row = agent.prepare<[number], { body: Buffer | null; body_bytes: number }>('SELECT body, body_bytes FROM quarantine WHERE id = ?').get(id);
  if (!row?.body || row.body.length !== row.body_bytes) return null;
  return row.body;
}

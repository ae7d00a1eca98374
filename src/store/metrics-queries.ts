import { preparedStatement, type Db } from './database';

/**
 * What a Prometheus scrape reads from the files (src/admin/metrics.ts). Each query is an index lookup
 * or reads a table with one row per location or per staff resource; none walks the inbox, the
 * deliveries, the quarantine or the staff records, so a scrape costs the same at a site with years
 * of history. test/unit/admin/metrics-queries.test.ts checks each plan with EXPLAIN QUERY PLAN.
 */
export const METRICS_SQL = {
  /** agent.db, one row per location. */
  knownLocations: 'SELECT location_id FROM known_locations',
  /** pos-sync.db (the till's file), one row per location. */
  appliedLocations: 'SELECT location_id, last_change_sequence, last_applied_at FROM locations',
  /** Updates stored and not yet applied for a location (inbox_chain: location_id, state). */
  pending: "SELECT count(*) AS n FROM inbox WHERE location_id = ? AND state = 'pending'",
  /**
   * Pending updates that cannot be applied next because their parent is not the last applied update:
   * a gap in the chain. The oldest one's arrival says how long the site has been waiting.
   */
  gap: "SELECT count(*) AS n, min(received_at) AS oldest FROM inbox WHERE location_id = ? AND state = 'pending' AND parent_change_sequence <> ? AND change_sequence > ?",
  /** Bodies quarantined since a time (quarantine_received). */
  quarantinedSince: 'SELECT count(*) AS n FROM quarantine WHERE received_at >= ?',
  /** staff.db, one row per resource (five at most). */
  staffSync: 'SELECT resource, refreshed_at, last_attempt_at, last_error FROM staff_sync_state',
} as const;

export interface AppliedLocationRow {
  readonly location_id: number;
  readonly last_change_sequence: number | null;
  readonly last_applied_at: string | null;
}

export interface LocationChainFigures {
  readonly locationId: number;
  readonly lastChangeSequence: number | null;
  readonly lastAppliedAt: string | null;
  readonly pending: number;
  /** Pending updates behind a missing parent (0 before the first apply: those are settling or wait for adoption). */
  readonly gapUpdates: number;
  readonly oldestGapReceivedAt: string | null;
}

/** Per location: what is applied, what waits, and the oldest update stuck behind a gap. */
export function locationChainFigures(agent: Db, till: Db): LocationChainFigures[] {
  const applied = new Map((preparedStatement(till, METRICS_SQL.appliedLocations).all() as AppliedLocationRow[]).map((r) => [r.location_id, r]));
  const ids = new Set([...(preparedStatement(agent, METRICS_SQL.knownLocations).all() as { location_id: number }[]).map((r) => r.location_id), ...applied.keys()]);
  const pending = preparedStatement(agent, METRICS_SQL.pending);
  const gap = preparedStatement(agent, METRICS_SQL.gap);
  return [...ids]
    .sort((a, b) => a - b)
    .map((locationId) => {
      const a = applied.get(locationId);
      const last = a?.last_change_sequence ?? null;
      const g = last === null ? { n: 0, oldest: null } : (gap.get(locationId, last, last) as { n: number; oldest: string | null });
      return {
        locationId,
        lastChangeSequence: last,
        lastAppliedAt: a?.last_applied_at ?? null,
        pending: (pending.get(locationId) as { n: number }).n,
        gapUpdates: g.n,
        oldestGapReceivedAt: g.oldest,
      };
    });
}

export function quarantinedSince(agent: Db, sinceIso: string): number {
  return (preparedStatement(agent, METRICS_SQL.quarantinedSince).get(sinceIso) as { n: number }).n;
}

export interface StaffSyncRow {
  readonly resource: string;
  readonly refreshed_at: string | null;
  readonly last_attempt_at: string | null;
  readonly last_error: string | null;
}

export function staffSyncRows(staff: Db): StaffSyncRow[] {
  return preparedStatement(staff, METRICS_SQL.staffSync).all() as StaffSyncRow[];
}

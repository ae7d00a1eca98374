import type { Db } from '../store/database';

/**
 * Retention of the till file's rows (src/ops/retention.ts): ended price/availability ranges, and the
 * applied_updates records of old applies. The till file's one writer is the applier thread, so the
 * deleting runs there (applier-worker.ts), one batch per request: an apply request queued meanwhile
 * runs between two batches.
 */
export type RangeKind = 'price' | 'availability' | 'applied-updates';

export interface RangePruneRequest {
  readonly locationId: number;
  readonly kind: RangeKind;
  /**
   * price, availability: ranges whose DateTo is before this date (the location's own calendar) are
   * deleted. applied-updates: records applied before this instant (ISO 8601) are.
   */
  readonly endedBefore: string;
  readonly batchSize: number;
}

export interface RangePruneBatch {
  /** Rows deleted (fewer than batchSize: nothing more of this kind for this location). */
  readonly changed: number;
  /** How long the one IMMEDIATE transaction took, in ms. */
  readonly ms: number;
}

/**
 * One batch of each kind. Ranges: through the (location_id, date_to) index, so a batch reads the ended
 * ranges it deletes and not the location's others. Applied records: through (location_id,
 * change_sequence) up to the location's last applied update, which is always kept (the chain's state:
 * the applier's reconcile joins locations to it).
 */
export const BATCH_SQL: Readonly<Record<RangeKind, string>> = {
  price: 'DELETE FROM price_ranges WHERE id IN (SELECT id FROM price_ranges WHERE date_to < ? AND location_id = ? LIMIT ?)',
  availability: 'DELETE FROM availability_ranges WHERE id IN (SELECT id FROM availability_ranges WHERE date_to < ? AND location_id = ? LIMIT ?)',
  'applied-updates': `DELETE FROM applied_updates WHERE inbox_id IN (
      SELECT a.inbox_id FROM locations l CROSS JOIN applied_updates a ON a.location_id = l.location_id AND a.change_sequence < l.last_change_sequence
      WHERE a.applied_at < ? AND l.location_id = ? LIMIT ?)`,
};

/** Deletes at most `batchSize` rows of one kind for one location, in one transaction. */
export function pruneRangeBatch(till: Db, request: RangePruneRequest): RangePruneBatch {
  const statement = till.prepare(BATCH_SQL[request.kind]);
  const t0 = performance.now();
  const changed = till.transaction(() => statement.run(request.endedBefore, request.locationId, request.batchSize).changes).immediate();
  return { changed, ms: performance.now() - t0 };
}

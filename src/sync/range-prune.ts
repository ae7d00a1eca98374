import type { Db } from '../store/database';

/**
 * Retention of ended price/availability ranges (src/ops/retention.ts). These rows are the till's menu,
 * whose one writer is the applier thread, so the deleting runs there (applier-worker.ts), one batch per
 * request: an apply request queued meanwhile runs between two batches.
 */
export type RangeKind = 'price' | 'availability';

export interface RangePruneRequest {
  readonly locationId: number;
  readonly kind: RangeKind;
  /** Ranges whose DateTo is before this date (the location's own calendar) are deleted. */
  readonly endedBefore: string;
  readonly batchSize: number;
}

export interface RangePruneBatch {
  /** Rows deleted (fewer than batchSize: nothing more of this kind for this location). */
  readonly changed: number;
  /** How long the one IMMEDIATE transaction took, in ms. */
  readonly ms: number;
}

const TABLE: Readonly<Record<RangeKind, string>> = { price: 'price_ranges', availability: 'availability_ranges' };

/** Deletes at most `batchSize` ended ranges of one kind for one location, in one transaction. */
export function pruneRangeBatch(till: Db, request: RangePruneRequest): RangePruneBatch {
  const table = TABLE[request.kind];
  const statement = till.prepare(`DELETE FROM ${table} WHERE id IN (SELECT id FROM ${table} WHERE date_to < ? AND location_id = ? LIMIT ?)`);
  const t0 = performance.now();
  const changed = till.transaction(() => statement.run(request.endedBefore, request.locationId, request.batchSize).changes).immediate();
  return { changed, ms: performance.now() - t0 };
}

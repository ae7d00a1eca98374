import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { databasePath, openDatabase } from '../../../src/store/database';
import { tempDir } from '../../helpers/fixtures';

/**
 * Found by the benchmark (bench/run.ts, docs/performance.md): the till's lookup by location and PLU
 * through pos_prices_today took ~37 ms on a 5,000-item menu, because SQLite walked every range row of
 * the location and joined items afterwards. Migration 001 makes the views start from items (CROSS JOIN
 * keeps that order). This pins the plan: items first (by location and PLU), then the range table by
 * (location_id, item_id).
 *
 * The _today views (till migration 004) find the location's date as one day row of location_days,
 * by its key bounded to two days, between the item and its ranges. Under 002 the date was a
 * correlated subquery run for every range row (72 times for one PLU on the benchmark's L menu); under
 * 003 it was worked out once per query from the offsets, in a co-routine that cost more than the
 * key search (docs/performance.md).
 *
 * The ranges are searched with the date as a date_to bound (till migration 005, issue 30): before it
 * every range of the item since the first publication was read. test/integration/date-bounded-plans
 * checks the same on every SQLite here.
 */
function plan(sql: string): string[] {
  const db = openDatabase(databasePath(tempDir()));
  try {
    return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[]).map((r) => r.detail);
  } finally {
    db.close();
  }
}

describe('regression: the till lookup by PLU reaches ranges through items', () => {
  for (const [view, alias, index] of [
    ['pos_prices', 'p', 'price_ranges_item_end'],
    ['pos_availability', 'a', 'availability_ranges_item_end'],
  ] as const) {
    it(`${view} WHERE location_id = ? AND plu = ? AND date BETWEEN date_from AND date_to`, () => {
      const steps = plan(`SELECT * FROM ${view} WHERE location_id = 1 AND plu = '1001' AND '2026-12-01' BETWEEN date_from AND date_to`);
      assert.equal(steps.length, 2, steps.join(' | '));
      assert.match(steps[0]!, /^SEARCH i USING .*\(location_id=\? AND plu=\?\)/, steps.join(' | '));
      // Bounded by the date (till migration 005): the item's ranges that end on or after it, not its history.
      assert.equal(steps[1], `SEARCH ${alias} USING INDEX ${index} (location_id=? AND item_id=? AND date_to>?)`);
    });
  }

  for (const [view, alias, index] of [
    ['pos_prices_today', 'p', 'price_ranges_item_end'],
    ['pos_availability_today', 'a', 'availability_ranges_item_end'],
  ] as const) {
    for (const [filter, items] of [
      ["location_id = 1 AND plu = '1001'", 'SEARCH i USING INDEX items_plu (location_id=? AND plu=?)'],
      // Every location: by the PLU index, never a scan of items or ranges.
      ["plu = '1001'", 'SEARCH i USING INDEX items_plu_any_location (plu=?)'],
    ] as const) {
      it(`${view} WHERE ${filter}: the item, its location's day row, its ranges`, () => {
        const steps = plan(`SELECT * FROM ${view} WHERE ${filter}`);
        assert.deepEqual(
          steps,
          [items, 'SEARCH d USING PRIMARY KEY (location_id=? AND utc_from>? AND utc_from<?) LEFT-JOIN', `SEARCH ${alias} USING INDEX ${index} (location_id=? AND item_id=? AND date_to>?)`],
          steps.join(' | '),
        );
      });
    }
  }
});

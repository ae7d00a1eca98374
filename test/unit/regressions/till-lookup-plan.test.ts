import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { databasePath, openDatabase } from '../../../src/store/database';
import { tempDir } from '../../helpers/fixtures';

/**
 * Found by the benchmark (bench/run.ts, docs/performance.md): the till's lookup by location and PLU
 * through pos_prices_today took ~37 ms on a 5,000-item menu, because SQLite walked every range row of
 * the location and joined items afterwards. Migration 001 makes the views start from items (CROSS JOIN keeps that order). This
 * pins the plan: items first (by location), then the range table by (location_id, item_id). The _today
 * views (till migration 002) then find the location's UTC offset by its primary key, once per row.
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
    ['pos_prices_today', 'p', 'price_ranges_key'],
    ['pos_availability_today', 'a', 'availability_ranges_key'],
    ['pos_prices', 'p', 'price_ranges_key'],
    ['pos_availability', 'a', 'availability_ranges_key'],
  ] as const) {
    it(`${view} WHERE location_id = ? AND plu = ?`, () => {
      const steps = plan(`SELECT * FROM ${view} WHERE location_id = 1 AND plu = '1001'`);
      const today = view.endsWith('_today');
      assert.equal(steps.length, today ? 4 : 2, steps.join(' | '));
      assert.match(steps[0]!, /^SEARCH i USING .*\(location_id=\?/, steps.join(' | '));
      assert.equal(steps[1], `SEARCH ${alias} USING INDEX ${index} (location_id=? AND item_id=?)`);
      if (today) {
        assert.match(steps[2]!, /^CORRELATED SCALAR SUBQUERY/);
        assert.equal(steps[3], 'SEARCH o USING INDEX sqlite_autoindex_location_utc_offsets_1 (location_id=? AND from_utc<?)');
      }
    });
  }
});

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
 * The _today views (till migration 003) work out the location's date first, once: the lookup's
 * location_id reaches the date's subquery, which reads one locations row by its key and the offset by
 * its primary key. Under 002 the date was a correlated subquery run for every range row (72 times
 * for one PLU on the benchmark's L menu).
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
    ['pos_prices', 'p', 'price_ranges_key'],
    ['pos_availability', 'a', 'availability_ranges_key'],
  ] as const) {
    it(`${view} WHERE location_id = ? AND plu = ?`, () => {
      const steps = plan(`SELECT * FROM ${view} WHERE location_id = 1 AND plu = '1001'`);
      assert.equal(steps.length, 2, steps.join(' | '));
      assert.match(steps[0]!, /^SEARCH i USING .*\(location_id=\? AND plu=\?\)/, steps.join(' | '));
      assert.equal(steps[1], `SEARCH ${alias} USING INDEX ${index} (location_id=? AND item_id=?)`);
    });
  }

  for (const [view, alias, index] of [
    ['pos_prices_today', 'p', 'price_ranges_key'],
    ['pos_availability_today', 'a', 'availability_ranges_key'],
  ] as const) {
    it(`${view} WHERE location_id = ? AND plu = ?: the location's date once, then items, then ranges`, () => {
      const steps = plan(`SELECT * FROM ${view} WHERE location_id = 1 AND plu = '1001'`);
      const all = steps.join(' | ');
      assert.deepEqual(
        steps.map((s) => s.replace(/ \d+$/, '')),
        [
          'CO-ROUTINE t',
          'SEARCH l USING INTEGER PRIMARY KEY (rowid=?)',
          'CORRELATED SCALAR SUBQUERY',
          'SEARCH o USING INDEX sqlite_autoindex_location_utc_offsets_1 (location_id=? AND from_utc<?)',
          'SCAN t',
          'SEARCH i USING INDEX items_plu (location_id=? AND plu=?)',
          `SEARCH ${alias} USING INDEX ${index} (location_id=? AND item_id=?)`,
        ],
        all,
      );
    });

    it(`${view} WHERE plu = ? (every location): still by items' index, never a scan of the ranges`, () => {
      const steps = plan(`SELECT * FROM ${view} WHERE plu = '1001'`);
      const all = steps.join(' | ');
      assert.ok(steps.includes('SCAN l'), all);
      assert.ok(steps.includes('SEARCH i USING INDEX items_plu (location_id=? AND plu=?)'), all);
      assert.ok(steps.includes(`SEARCH ${alias} USING INDEX ${index} (location_id=? AND item_id=?)`), all);
      // The date's subquery belongs to the co-routine, before the ranges are read.
      assert.ok(steps.lastIndexOf('SCAN t') > steps.findIndex((s) => s.startsWith('CORRELATED SCALAR SUBQUERY')), all);
    });
  }
});

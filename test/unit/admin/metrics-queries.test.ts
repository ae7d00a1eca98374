import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, describe, it } from 'node:test';
import { METRICS_SQL } from '../../../src/store/metrics-queries';
import { closeStore, openStore } from '../../../src/store/store';
import { tempDir } from '../../helpers/fixtures';

/**
 * A scrape must cost the same at a site with years of history: every query /metrics runs is an index
 * lookup, except over the tables that hold one row per location (known_locations, the till's
 * locations) or per staff resource (staff_sync_state, five rows at most).
 */
const SMALL_TABLES = new Set(['known_locations', 'locations', 'staff_sync_state']);

describe('the queries behind /metrics', () => {
  const dir = tempDir();
  const store = openStore(dir);
  after(() => {
    closeStore(store);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const dbFor = (sql: string) => (/FROM (locations)\b/.test(sql) ? store.till : /staff_sync_state/.test(sql) ? store.staff : store.agent);

  for (const [name, sql] of Object.entries(METRICS_SQL)) {
    it(`${name}: no scan of a table that grows`, () => {
      const params = (sql.match(/\?/g) ?? []).map(() => 1);
      const plan = dbFor(sql).prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[];
      assert.ok(plan.length > 0);
      for (const { detail } of plan) {
        const scan = /^SCAN (\w+)/.exec(detail);
        if (!scan) {
          assert.match(detail, /^SEARCH \w+ USING (COVERING )?INDEX|^SEARCH \w+ USING INTEGER PRIMARY KEY/, `${name}: ${detail}`);
          continue;
        }
        assert.ok(SMALL_TABLES.has(scan[1]!), `${name} scans ${scan[1]}: ${detail}`);
      }
    });
  }

  it('checks the large tables through an index (the test sees a SEARCH for them)', () => {
    const plan = store.agent.prepare(`EXPLAIN QUERY PLAN ${METRICS_SQL.gap}`).all(1, 1, 1) as { detail: string }[];
    assert.match(plan.map((p) => p.detail).join('\n'), /SEARCH inbox USING INDEX inbox_(chain|sequence) \(location_id=\? AND /);
    const q = store.agent.prepare(`EXPLAIN QUERY PLAN ${METRICS_SQL.quarantinedSince}`).all('x') as { detail: string }[];
    assert.match(q.map((p) => p.detail).join('\n'), /SEARCH quarantine USING COVERING INDEX quarantine_received/);
  });
});

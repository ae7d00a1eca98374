import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { AgentCore } from '../../src/core';
import { silentLogger } from '../../src/log';
import { openDatabase, storeFilePath } from '../../src/store/database';
import { item, price, schedule, tempDir, testConfig, update } from '../helpers/fixtures';

/**
 * ANALYZE's samples of index keys (sqlite_stat4) in the till's file make SQLite plan every lookup by
 * a new PLU again (docs/performance.md). The agent's own statistics (PRAGMA optimize) have none; a
 * full ANALYZE run on the file by hand adds them, and the next writer to open the file removes them
 * and keeps the summary statistics the lookups are planned with.
 */
describe("the till's file keeps no per-value index samples", () => {
  it('removes the samples a hand-run ANALYZE adds, keeps sqlite_stat1, leaves the plans as they were, and never waits for the lock to do it', () => {
    const dataDir = tempDir('pos-sync-stat4-');
    const core = new AgentCore(testConfig({ dataDir }), silentLogger);
    const items = Array.from({ length: 300 }, (_, i) => item(String(1000 + i), `item-${i}`, [price('2026-12-01', '9999-12-31', 'Eat In', `${1 + (i % 9)}.50`)], [schedule('2026-12-01', '9999-12-31', 'Lunch')]));
    assert.equal(core.importPayload(Buffer.from(JSON.stringify(update(7, 2, 1, items))), 'test').applied.length, 1);
    core.close();
    const file = storeFilePath(dataDir, 'till');
    const count = (db: Database.Database, table: string): number => (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
    const plan = (db: Database.Database): string =>
      (db.prepare("EXPLAIN QUERY PLAN SELECT sell_price FROM pos_prices_today WHERE location_id = 7 AND plu = '1001'").all() as { detail: string }[]).map((r) => r.detail).join(' | ');

    const byHand = new Database(file);
    byHand.exec('ANALYZE');
    const samples = count(byHand, 'sqlite_stat4');
    const planBefore = plan(byHand);
    byHand.close();
    assert.ok(samples > 0, 'a full ANALYZE wrote samples (better-sqlite3 is built with STAT4)');

    const writer = openDatabase(file, { kind: 'till' });
    try {
      assert.equal(count(writer, 'sqlite_stat4'), 0, 'the samples are gone');
      assert.ok(count(writer, 'sqlite_stat1') > 0, 'the summary statistics stay');
      assert.equal(plan(writer), planBefore);
      assert.match(planBefore, /items_plu/);
    } finally {
      writer.close();
    }
    // While another connection holds the write lock (the applier mid-apply, as a CLI command opens the
    // file), the samples are left for a later open: the open neither waits for the lock nor fails.
    const again = new Database(file);
    again.exec('ANALYZE');
    assert.ok(count(again, 'sqlite_stat4') > 0);
    again.exec('BEGIN IMMEDIATE');
    try {
      const meanwhile = openDatabase(file, { kind: 'till' });
      try {
        assert.ok(count(meanwhile, 'sqlite_stat4') > 0, 'left as they were');
      } finally {
        meanwhile.close();
      }
    } finally {
      again.exec('COMMIT');
      again.close();
    }
    const later = openDatabase(file, { kind: 'till' });
    try {
      assert.equal(count(later, 'sqlite_stat4'), 0, 'removed at the next open');
    } finally {
      later.close();
    }
    // A reader still finds the menu, planned the same way.
    const reader = new Database(file, { readonly: true });
    try {
      assert.equal(plan(reader), planBefore);
      assert.deepEqual(reader.prepare("SELECT sell_price FROM pos_prices WHERE location_id = 7 AND plu = '1004'").all(), [{ sell_price: '5.50' }]);
    } finally {
      reader.close();
    }
  });
});

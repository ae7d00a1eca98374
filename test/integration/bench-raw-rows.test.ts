import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { createRawRowsTable } from '../../bench/raw-rows';
import { openDatabase } from '../../src/store/database';
import { tempDir } from '../helpers/fixtures';

/** Each index of price_ranges in `db` as its columns, in order (the rowid's automatic ones aside). */
function indexColumns(db: Database.Database): string[] {
  const indexes = db.prepare("SELECT name FROM pragma_index_list('price_ranges') WHERE origin = 'c'").all() as { name: string }[];
  return indexes.map(({ name }) => (db.prepare('SELECT name FROM pragma_index_info(?) ORDER BY seqno').all(name) as { name: string }[]).map((c) => c.name).join(', ')).sort();
}

describe("the bench's raw rows baseline", () => {
  it("has the columns and indexes of the till file's price_ranges, so the indexed baseline is what the apply writes into", () => {
    const till = openDatabase(path.join(tempDir(), 'pos-sync.db'), { kind: 'till' });
    const raw = new Database(':memory:');
    try {
      createRawRowsTable(raw, true);
      assert.deepEqual(indexColumns(raw), indexColumns(till));
      const columns = (db: Database.Database): string[] => (db.prepare("SELECT name FROM pragma_table_info('price_ranges') ORDER BY cid").all() as { name: string }[]).map((c) => c.name);
      assert.deepEqual(columns(raw), columns(till));
      createRawRowsTable(raw, false);
      assert.deepEqual(indexColumns(raw), [], 'the unindexed baseline has none');
    } finally {
      raw.close();
      till.close();
    }
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { appliedMigrations, openDatabase, storeFilePath } from '../../src/store/database';
import { TILL_MIGRATIONS } from '../../src/store/migrations';
import { tempDir } from '../helpers/fixtures';
import { folderWithSamples } from '../helpers/sample-folder';

/**
 * Till migration 005 (issue 30) changes only the range tables' indexes: a 0.2 file keeps every row,
 * and every POS view answers the same rows with the same columns after it, including a till's lookup
 * on a date. A file at 005 is refused by a build that does not know it (the rule every migration has).
 */
const VIEWS = ['pos_prices', 'pos_availability', 'pos_prices_today', 'pos_availability_today', 'pos_sync_state', 'pos_changes'];
const TABLES = ['locations', 'applied_updates', 'items', 'price_ranges', 'availability_ranges', 'item_changes', 'location_utc_offsets', 'location_days'];

function snapshot(file: string): Record<string, unknown> {
  const db = openDatabase(file, { migrate: false });
  try {
    const out: Record<string, unknown> = {};
    for (const t of TABLES) out[t] = db.prepare(`SELECT * FROM ${t}`).all().map((r) => JSON.stringify(r)).sort();
    for (const v of VIEWS) {
      out[`${v} columns`] = db.prepare(`SELECT * FROM ${v}`).columns().map((c) => `${c.name} ${c.type}`);
      out[v] = db.prepare(`SELECT * FROM ${v} ORDER BY 1, 2, 3, 4, 5, 6`).all();
    }
    // A till's lookups by location, PLU and date, for every PLU on three dates.
    const lookup = db.prepare('SELECT * FROM pos_prices WHERE location_id = ? AND plu = ? AND ? BETWEEN date_from AND date_to ORDER BY item_id, tariff_name');
    const plus = db.prepare('SELECT DISTINCT location_id, plu FROM items ORDER BY 1, 2').all() as { location_id: number; plu: string }[];
    out.lookups = plus.flatMap((p) => ['2026-12-01', '2026-12-25', '2027-02-01'].map((d) => lookup.all(p.location_id, p.plu, d)));
    return out;
  } finally {
    db.close();
  }
}

describe('till migration 005: ranges indexed by end date', () => {
  it('a 0.2 till file (migrations 1-4) keeps every row and every view answer', () => {
    const dir = tempDir('pos-sync-till-005-');
    const file = storeFilePath(dir, 'till');
    // The file as 0.2 made it: its schema, then the samples applied by this build's writer.
    openDatabase(file, { migrations: TILL_MIGRATIONS.filter((m) => m.version <= 4) }).close();
    const before004 = openDatabase(file, { migrate: false });
    assert.deepEqual(appliedMigrations(before004).map((m) => m.version), [1, 2, 3, 4]);
    before004.close();
    // Importing through the core would migrate the file first: apply the samples into a copy at 005,
    // then replay its rows into the 0.2 file.
    const source = folderWithSamples('pos-sync-till-005-src-');
    const old = openDatabase(file, { migrate: false });
    try {
      old.exec(`ATTACH DATABASE '${storeFilePath(source, 'till').replace(/'/g, "''")}' AS src`);
      old.transaction(() => {
        for (const t of TABLES) old.exec(`INSERT INTO main.${t} SELECT * FROM src.${t}`);
      })();
      old.exec('DETACH DATABASE src');
      assert.ok((old.prepare('SELECT count(*) AS n FROM price_ranges').get() as { n: number }).n > 0);
    } finally {
      old.close();
    }
    const before = snapshot(file);
    openDatabase(file).close();
    const after = snapshot(file);
    assert.deepEqual(after, before);
    const db = openDatabase(file, { migrate: false });
    try {
      assert.deepEqual(appliedMigrations(db).map((m) => m.version), TILL_MIGRATIONS.map((m) => m.version));
      const indexes = (table: string): string[] =>
        (db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL ORDER BY name").all(table) as { name: string }[]).map((r) => r.name);
      assert.deepEqual(indexes('price_ranges'), ['price_ranges_item_end', 'price_ranges_location_end']);
      assert.deepEqual(indexes('availability_ranges'), ['availability_ranges_item_end', 'availability_ranges_location_end']);
    } finally {
      db.close();
    }
  });

  it('a build that knows only migrations 1-4 refuses the migrated file', () => {
    const file = storeFilePath(tempDir('pos-sync-till-005-refuse-'), 'till');
    openDatabase(file).close();
    assert.throws(() => openDatabase(file, { migrations: TILL_MIGRATIONS.filter((m) => m.version <= 4) }), /5-till-ranges-by-end-date/);
  });
});

import type Database from 'better-sqlite3';

/**
 * The raw row-insert baselines' work (with the till's indexes, or `indexed` false: none): `rows` rows
 * into a fresh table (createRawRowsTable) shaped like the till file's price_ranges (same columns, and
 * the indexes till migration 005 gives it), one prepared statement, one transaction.
 * bench/run.ts times it alone; bench/plain-writer-child.ts repeats it as a background writer.
 */
export function createRawRowsTable(db: Database.Database, indexed = true): Database.Statement {
  db.exec(`DROP TABLE IF EXISTS price_ranges;
    CREATE TABLE price_ranges (id INTEGER PRIMARY KEY, location_id INTEGER NOT NULL, item_id TEXT NOT NULL, tariff_name TEXT NOT NULL,
    date_from TEXT NOT NULL, date_to TEXT NOT NULL, price_model TEXT, tax_code TEXT NOT NULL, tax_rate INTEGER NOT NULL,
    sell_price_minor INTEGER NOT NULL, sell_price TEXT NOT NULL, currency TEXT NOT NULL, source_inbox_id INTEGER NOT NULL) STRICT;`);
  // Without indexes: the plainest insert of the same rows (issue 29's baseline for 200 -> applied).
  if (indexed) db.exec(`
    CREATE INDEX price_ranges_item_end ON price_ranges (location_id, item_id, date_to, date_from, tariff_name);
    CREATE INDEX price_ranges_location_end ON price_ranges (location_id, date_to, date_from);`);
  return db.prepare('INSERT INTO price_ranges (location_id, item_id, tariff_name, date_from, date_to, price_model, tax_code, tax_rate, sell_price_minor, sell_price, currency, source_inbox_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
}

/** The timed part: the rows, with the statement createRawRowsTable prepared, in one transaction. */
export function insertRawRows(db: Database.Database, insert: Database.Statement, rows: number): void {
  db.transaction(() => {
    for (let i = 0; i < rows; i++) insert.run(3000, `3000-${String(i % 5000).padStart(5, '0')}`, `Tariff ${i % 3}`, '2026-12-01', '2027-01-01', 'Standard', 'S', 20, 1150, '11.50', 'GBP', 1);
  })();
}

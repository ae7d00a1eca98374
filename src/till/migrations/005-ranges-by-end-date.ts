/**
 * Till file (pos-sync.db) 005: the range tables' indexes end with date_to, so every read bounded by a
 * date reads only the ranges that end on or after it, whatever the history before it (issue 30).
 *
 * 001 indexed the ranges by (location_id, item_id, key, date_from) and by date_to alone. A lookup for
 * a date (the views, the applier's overlay reads) could bound only date_from <= date with those, so it
 * read every range of the item since the first publication; Coming up and retention's prune found
 * their location's ranges through the key index and read the whole location. The indexes here:
 *
 * - (location_id, item_id, date_to, date_from, key): a till's lookup by location and PLU reaches the
 *   item's ranges with `date_to >= its date` (SQLite plans `SEARCH p USING INDEX ..._item_end
 *   (location_id=? AND item_id=? AND date_to>?)` from the views' own predicates, with or without
 *   ANALYZE statistics, from SQLite 3.31 to 3.54). date_from and the key are in the index so that
 *   SQLite tests `date_from <= date` (and the applier's key) on the index entry and fetches only the
 *   rows that match: a lookup for today then reads one row per key, not every future range's. date_to
 *   before the key: a lookup through the views names no tariff or meal period, and a key column in
 *   between would leave its date bound unused.
 * - (location_id, date_to, date_from): Coming up's window (the rows that overlap it) and the prune's
 *   ended ranges of one location.
 *
 * The old indexes go: while one led with (location_id, item_id, key), the planner preferred its three
 * equalities to the date bound. So does (tax_code, location_id): the views start from items, so a
 * query by tax code searched it once per item, reading every range of the location with that tax code
 * for each; without it SQLite reads each item's ranges once, by the index above. No view changes: the same names, columns, declared types and rows
 * (docs/pos-database.md); a till's own query by location, PLU and date is planned the same way.
 */
export const name = 'till-ranges-by-end-date';

export const sql = /* sql */ `
DROP INDEX price_ranges_key;
DROP INDEX price_ranges_ended;
DROP INDEX price_ranges_tax;
CREATE INDEX price_ranges_item_end ON price_ranges (location_id, item_id, date_to, date_from, tariff_name);
CREATE INDEX price_ranges_location_end ON price_ranges (location_id, date_to, date_from);

DROP INDEX availability_ranges_key;
DROP INDEX availability_ranges_ended;
CREATE INDEX availability_ranges_item_end ON availability_ranges (location_id, item_id, date_to, date_from, meal_period);
CREATE INDEX availability_ranges_location_end ON availability_ranges (location_id, date_to, date_from);
`;

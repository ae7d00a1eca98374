/**
 * Till file (pos-sync.db) 003: the _today views work out each location's date once per query
 * instead of once per candidate row (issue 11, till lookup during an apply).
 *
 * 002 compared every range row of a looked-up item with a correlated subquery on
 * location_utc_offsets: 72 evaluations for one PLU on a menu of 3 tariffs x 3 meal periods x 12
 * ranges. Here the date comes from one row per location (`location_today` below), joined first; a
 * `location_id = ?` filter on the view reaches it (SQLite pushes it into the subquery, which then
 * reads one locations row), so a lookup evaluates the date once. Same names, same columns, same
 * declared types, same rows: the contract does not change (docs/pos-database.md).
 *
 * Same rules as 001 for SQLite 3.31: no STRICT, no RETURNING, every view column a plain column
 * reference. GROUP BY keeps SQLite from flattening the subquery into the outer query (which would put
 * the date back in every row's WHERE); location_id is the locations table's key, so it groups nothing.
 * Every item has its locations row: the applier writes both in one transaction.
 */
export const name = 'till-today-once-per-location';

export const sql = /* sql */ `
DROP VIEW pos_prices_today;
DROP VIEW pos_availability_today;

-- The location's date now, as in 002: the offset of the latest interval that has started, else the
-- reading PC's local date. The subquery is the one locationToday() in src/store/location-time.ts runs
-- with an explicit instant (a test checks the texts are the same).
CREATE VIEW pos_prices_today AS
SELECT t.location_id, i.plu, p.item_id, i.item_name, i.item_type, p.tariff_name, p.price_model,
       p.tax_code, p.tax_rate, p.sell_price_minor, p.sell_price, p.currency, p.date_from, p.date_to
FROM (SELECT l.location_id AS location_id,
             coalesce((SELECT date('now', o.offset_minutes || ' minutes') FROM location_utc_offsets o
                        WHERE o.location_id = l.location_id AND o.from_utc <= datetime('now') ORDER BY o.from_utc DESC LIMIT 1),
                      date('now', 'localtime')) AS today
      FROM locations l GROUP BY l.location_id) t
CROSS JOIN items i ON i.location_id = t.location_id
CROSS JOIN price_ranges p ON p.location_id = i.location_id AND p.item_id = i.item_id
WHERE t.today BETWEEN p.date_from AND p.date_to;

CREATE VIEW pos_availability_today AS
SELECT t.location_id, i.plu, a.item_id, i.item_name, a.meal_period, a.status, a.date_from, a.date_to
FROM (SELECT l.location_id AS location_id,
             coalesce((SELECT date('now', o.offset_minutes || ' minutes') FROM location_utc_offsets o
                        WHERE o.location_id = l.location_id AND o.from_utc <= datetime('now') ORDER BY o.from_utc DESC LIMIT 1),
                      date('now', 'localtime')) AS today
      FROM locations l GROUP BY l.location_id) t
CROSS JOIN items i ON i.location_id = t.location_id
CROSS JOIN availability_ranges a ON a.location_id = i.location_id AND a.item_id = i.item_id
WHERE t.today BETWEEN a.date_from AND a.date_to;
`;

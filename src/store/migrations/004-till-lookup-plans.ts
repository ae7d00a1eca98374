/**
 * 004: the POS views start from `items` (CROSS JOIN fixes SQLite's join order) and take location_id
 * from it.
 *
 * Found by the benchmark (bench/run.ts): a till lookup by PLU for today took ~37 ms on a 5,000-item
 * menu. With `WHERE location_id = ? AND plu = ?` split across the join (location_id from the range
 * table, plu from items), SQLite could not use items_plu (location_id, plu), so it walked every range
 * row of the location. Even with both columns taken from items, the planner (without ANALYZE
 * statistics, as on a fresh site) still preferred to walk the range index by location. In SQLite
 * CROSS JOIN is an inner join that keeps the written order, so the lookup now starts at items_plu and
 * reaches the ranges through their (location_id, item_id, ...) index. The join makes the two
 * location columns equal, so the views return exactly the same rows; columns and meanings are
 * unchanged.
 */
export const name = 'till-lookup-plans';

export const sql = /* sql */ `
DROP VIEW pos_prices_today;
DROP VIEW pos_availability_today;
DROP VIEW pos_prices;
DROP VIEW pos_availability;

CREATE VIEW pos_prices AS
SELECT i.location_id, i.plu, p.item_id, i.item_name, i.item_type, p.tariff_name, p.price_model,
       p.tax_code, p.tax_rate, p.sell_price_minor, p.sell_price, p.currency, p.date_from, p.date_to
FROM items i
CROSS JOIN price_ranges p ON p.location_id = i.location_id AND p.item_id = i.item_id;

CREATE VIEW pos_availability AS
SELECT i.location_id, i.plu, a.item_id, i.item_name, a.meal_period, a.status, a.date_from, a.date_to
FROM items i
CROSS JOIN availability_ranges a ON a.location_id = i.location_id AND a.item_id = i.item_id;

CREATE VIEW pos_prices_today AS
SELECT * FROM pos_prices WHERE date('now', 'localtime') BETWEEN date_from AND date_to;

CREATE VIEW pos_availability_today AS
SELECT * FROM pos_availability WHERE date('now', 'localtime') BETWEEN date_from AND date_to;
`;

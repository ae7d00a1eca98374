/**
 * Till file (pos-sync.db) 004: each location's local days as UTC intervals (location_days), so the
 * _today views find the location's date with one key search instead of working it out from the
 * offsets in every query (issue 11: the till's lookup during an apply, which `npm run bench` measures
 * on its L menu; docs/performance.md).
 *
 * The days are derived, in SQL, from location_utc_offsets: one row per local calendar day within
 * each period of constant offset (a day that a DST change cuts has two rows with the same date). The
 * INSERT below is the one the applier runs whenever it writes a location's offsets
 * (LOCAL_DAYS_FROM_OFFSETS_SQL in src/till/location-time.ts; a test keeps the texts the same), and
 * it runs here in the migration's transaction: a file upgraded from 003 answers with the same dates
 * from its first read, whether or not the agent ever runs again.
 *
 * The views reach today's row through (location_id, utc_from) bounded to the last two days (no day
 * is longer than 25 hours), so SQLite reads at most two day rows. Where no row covers the current
 * instant (a location whose offsets were never written, an instant before the first written day or
 * more than four years after the agent last ran), they use the reading PC's local date, as 001-003
 * did for a location without offsets. 003 used the last written offset after the end; the agent
 * extends the days whenever fewer than four years remain, at every start and apply.
 *
 * Same rules as 001 for SQLite 3.31 (what the till's driver runs): no STRICT, no RETURNING, every
 * view column a plain column reference. WITHOUT ROWID (3.8.2) keeps each location's days in key
 * order in one b-tree. The recursive CTE runs only in the agent's SQLite.
 */
export const name = 'till-location-days';

export const sql = /* sql */ `
CREATE TABLE location_days (
  location_id INTEGER NOT NULL,
  utc_from    TEXT NOT NULL,
  utc_to      TEXT NOT NULL,
  local_date  TEXT NOT NULL,
  PRIMARY KEY (location_id, utc_from),
  CHECK (utc_from < utc_to)
) WITHOUT ROWID;

WITH RECURSIVE day (location_id, period_from, period_to, offset_minutes, local_date) AS (
  SELECT location_id, from_utc, to_utc, offset_minutes, date(from_utc, offset_minutes || ' minutes')
  FROM location_utc_offsets
  UNION ALL
  SELECT location_id, period_from, period_to, offset_minutes, date(local_date, '+1 day')
  FROM day
  WHERE datetime(local_date, '+1 day', (-offset_minutes) || ' minutes') < period_to
)
INSERT INTO location_days (location_id, utc_from, utc_to, local_date)
SELECT location_id,
       max(period_from, datetime(local_date, (-offset_minutes) || ' minutes')),
       min(period_to, datetime(local_date, '+1 day', (-offset_minutes) || ' minutes')),
       local_date
FROM day;

-- The views below start from items. A till asking by PLU alone (every location) would scan them all
-- without this; 003 started from locations and reached items_plu once per location.
CREATE INDEX items_plu_any_location ON items (plu);

DROP VIEW pos_prices_today;
DROP VIEW pos_availability_today;

-- The location's date now: the local_date of its day row that contains the current UTC time, else
-- the reading PC's local date. Items first (items_plu for a lookup by location and PLU), then the
-- day row by its key, then the item's ranges. LEFT JOIN: an item whose location has no day row for
-- now still has its prices, at the PC's date.
CREATE VIEW pos_prices_today AS
SELECT i.location_id, i.plu, p.item_id, i.item_name, i.item_type, p.tariff_name, p.price_model,
       p.tax_code, p.tax_rate, p.sell_price_minor, p.sell_price, p.currency, p.date_from, p.date_to
FROM items i
LEFT JOIN location_days d ON d.location_id = i.location_id AND d.utc_from <= datetime('now') AND d.utc_from > datetime('now', '-2 days') AND d.utc_to > datetime('now')
CROSS JOIN price_ranges p ON p.location_id = i.location_id AND p.item_id = i.item_id
WHERE coalesce(d.local_date, date('now', 'localtime')) BETWEEN p.date_from AND p.date_to;

CREATE VIEW pos_availability_today AS
SELECT i.location_id, i.plu, a.item_id, i.item_name, a.meal_period, a.status, a.date_from, a.date_to
FROM items i
LEFT JOIN location_days d ON d.location_id = i.location_id AND d.utc_from <= datetime('now') AND d.utc_from > datetime('now', '-2 days') AND d.utc_to > datetime('now')
CROSS JOIN availability_ranges a ON a.location_id = i.location_id AND a.item_id = i.item_id
WHERE coalesce(d.local_date, date('now', 'localtime')) BETWEEN a.date_from AND a.date_to;
`;

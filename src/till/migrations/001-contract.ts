/**
 * Till file (pos-sync.db) 001: the POS contract (docs/pos-database.md) and nothing else.
 *
 * Written for the SQLite builds tills bundle (3.31 and newer): no STRICT tables, no RETURNING, no
 * JSON operators. Types are declared on every column and every view column is a plain column
 * reference, so drivers that report types from sqlite3_column_decltype (ODBC, ADO.NET) see INTEGER
 * and TEXT rather than VARCHAR. CHECK constraints keep the values as strict as STRICT did.
 */
export const name = 'till-contract';

export const sql = /* sql */ `
-- One row per location the agent knows. last_change_sequence commits with the menu rows it
-- describes: it is the truth about what is applied. waiting_updates and warnings are refreshed by
-- the applier from the agent's own file after every apply and every receipt it is told about.
CREATE TABLE locations (
  location_id          INTEGER PRIMARY KEY,
  location_name        TEXT,
  currency             TEXT,
  last_change_sequence INTEGER,
  last_applied_at      TEXT,
  waiting_updates      INTEGER NOT NULL DEFAULT 0,
  warnings             INTEGER NOT NULL DEFAULT 0
);

-- Every update applied to this file, committed with its menu rows (the applier's record of what it
-- did; the agent's inbox follows it after a crash between the two files' commits).
CREATE TABLE applied_updates (
  inbox_id        INTEGER PRIMARY KEY,
  location_id     INTEGER NOT NULL,
  change_sequence INTEGER NOT NULL,
  applied_at      TEXT NOT NULL,
  apply_ms        REAL NOT NULL,
  baseline        INTEGER NOT NULL CHECK (baseline IN (0, 1)),
  forced          INTEGER NOT NULL CHECK (forced IN (0, 1)),
  rows_written    INTEGER NOT NULL
);
CREATE INDEX applied_updates_location ON applied_updates (location_id, change_sequence);

CREATE TABLE items (
  location_id INTEGER NOT NULL,
  item_id     TEXT NOT NULL,
  plu         TEXT NOT NULL,
  item_name   TEXT NOT NULL,
  item_type   TEXT NOT NULL CHECK (item_type IN ('RECIPE', 'MENU')),
  updated_by  INTEGER NOT NULL,
  -- A rowid table (not WITHOUT ROWID): with it, SQLite's planner picks items_plu for a PLU lookup
  -- even before ANALYZE has gathered statistics.
  UNIQUE (location_id, item_id)
);
CREATE INDEX items_plu ON items (location_id, plu);

CREATE TABLE price_ranges (
  id               INTEGER PRIMARY KEY,
  location_id      INTEGER NOT NULL,
  item_id          TEXT NOT NULL,
  tariff_name      TEXT NOT NULL,
  date_from        TEXT NOT NULL,
  date_to          TEXT NOT NULL,
  price_model      TEXT,
  tax_code         TEXT NOT NULL,
  tax_rate         INTEGER NOT NULL CHECK (typeof(tax_rate) = 'integer'),
  sell_price_minor INTEGER NOT NULL CHECK (typeof(sell_price_minor) = 'integer'),
  sell_price       TEXT NOT NULL CHECK (typeof(sell_price) = 'text'),
  currency         TEXT NOT NULL,
  source_inbox_id  INTEGER NOT NULL,
  CHECK (date_from <= date_to)
);
CREATE INDEX price_ranges_key ON price_ranges (location_id, item_id, tariff_name, date_from);
CREATE INDEX price_ranges_tax ON price_ranges (tax_code, location_id);
CREATE INDEX price_ranges_ended ON price_ranges (date_to);

CREATE TABLE availability_ranges (
  id              INTEGER PRIMARY KEY,
  location_id     INTEGER NOT NULL,
  item_id         TEXT NOT NULL,
  meal_period     TEXT NOT NULL,
  date_from       TEXT NOT NULL,
  date_to         TEXT NOT NULL,
  status          TEXT NOT NULL CHECK (status IN ('AVAILABLE', 'UNAVAILABLE')),
  source_inbox_id INTEGER NOT NULL,
  CHECK (date_from <= date_to)
);
CREATE INDEX availability_ranges_key ON availability_ranges (location_id, item_id, meal_period, date_from);
CREATE INDEX availability_ranges_ended ON availability_ranges (date_to);

-- The POS contract. Columns and meanings are stable; internals above may change.
-- The views start from items and take location_id from it, joined with CROSS JOIN (in SQLite an inner
-- join that keeps the written order): a till lookup by (location_id, plu) then starts at items_plu and
-- reaches the ranges through their (location_id, item_id, ...) index, even on a fresh database without
-- ANALYZE statistics (37 ms instead of 0.08 ms per lookup on a 5,000-item menu otherwise).
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

CREATE VIEW pos_sync_state AS
SELECT location_id, location_name, currency, last_change_sequence, last_applied_at, waiting_updates, warnings
FROM locations;
`;

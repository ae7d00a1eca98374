/**
 * 001: the inbox, the menu tables and the POS views (the contract in docs/pos-database.md).
 */
export const name = 'core';

export const sql = /* sql */ `
CREATE TABLE locations (
  location_id          INTEGER PRIMARY KEY,
  location_name        TEXT,
  currency             TEXT,
  last_change_sequence INTEGER,
  last_applied_at      TEXT,
  first_seen_at        TEXT NOT NULL
) STRICT;

-- Every distinct body received with a valid envelope: raw bytes as received, kept until retention.
CREATE TABLE inbox (
  id                     INTEGER PRIMARY KEY,
  location_id            INTEGER NOT NULL,
  change_sequence        INTEGER NOT NULL,
  parent_change_sequence INTEGER NOT NULL,
  body                   BLOB,
  body_bytes             INTEGER NOT NULL,
  body_sha256            TEXT NOT NULL,
  received_at            TEXT NOT NULL,
  sender                 TEXT,
  source                 TEXT NOT NULL CHECK (source IN ('webhook', 'import')),
  -- pending: waits for its parent (or adoption); applied; stale: behind what was applied;
  -- conflict: a different body under a ChangeSequence already stored; superseded: force-apply skipped it.
  state                  TEXT NOT NULL CHECK (state IN ('pending', 'applied', 'stale', 'conflict', 'superseded')),
  applied_at             TEXT,
  apply_ms               REAL,
  baseline               INTEGER NOT NULL DEFAULT 0,
  forced                 INTEGER NOT NULL DEFAULT 0,
  note                   TEXT
) STRICT;
CREATE INDEX inbox_chain ON inbox (location_id, state, parent_change_sequence);
CREATE INDEX inbox_sequence ON inbox (location_id, change_sequence);
CREATE INDEX inbox_received ON inbox (received_at);

-- One row per POST (or import) that was answered, including duplicates: the delivery history.
CREATE TABLE deliveries (
  id           INTEGER PRIMARY KEY,
  received_at  TEXT NOT NULL,
  sender       TEXT,
  source       TEXT NOT NULL,
  body_bytes   INTEGER NOT NULL,
  inbox_id     INTEGER REFERENCES inbox (id) ON DELETE SET NULL,
  quarantine_id INTEGER,
  -- accepted (new), duplicate, conflict, stale, rejected
  outcome      TEXT NOT NULL,
  http_status  INTEGER NOT NULL,
  location_id  INTEGER,
  change_sequence INTEGER,
  reason       TEXT
) STRICT;
CREATE INDEX deliveries_received ON deliveries (received_at);

-- Bodies refused for their content (not JSON, no valid envelope): kept for inspection, never applied.
CREATE TABLE quarantine (
  id           INTEGER PRIMARY KEY,
  received_at  TEXT NOT NULL,
  sender       TEXT,
  source       TEXT NOT NULL,
  content_type TEXT,
  body         BLOB NOT NULL,
  body_bytes   INTEGER NOT NULL,
  body_sha256  TEXT NOT NULL,
  error_id     TEXT NOT NULL,
  field        TEXT,
  reason       TEXT NOT NULL
) STRICT;

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
) STRICT;
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
  tax_rate         INTEGER NOT NULL,
  sell_price_minor INTEGER NOT NULL,
  sell_price       TEXT NOT NULL,
  currency         TEXT NOT NULL,
  source_inbox_id  INTEGER NOT NULL,
  CHECK (date_from <= date_to)
) STRICT;
CREATE INDEX price_ranges_key ON price_ranges (location_id, item_id, tariff_name, date_from);
CREATE INDEX price_ranges_tax ON price_ranges (tax_code, location_id);

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
) STRICT;
CREATE INDEX availability_ranges_key ON availability_ranges (location_id, item_id, meal_period, date_from);

-- Elements skipped while applying an update: shown by status until an operator acknowledges them.
CREATE TABLE update_warnings (
  id              INTEGER PRIMARY KEY,
  inbox_id        INTEGER NOT NULL REFERENCES inbox (id) ON DELETE CASCADE,
  location_id     INTEGER NOT NULL,
  path            TEXT NOT NULL,
  message         TEXT NOT NULL,
  created_at      TEXT NOT NULL,
  acknowledged_at TEXT
) STRICT;
CREATE INDEX update_warnings_open ON update_warnings (location_id, acknowledged_at);

CREATE TABLE audit_log (
  id      INTEGER PRIMARY KEY,
  at      TEXT NOT NULL,
  actor   TEXT NOT NULL,
  action  TEXT NOT NULL,
  details TEXT NOT NULL
) STRICT;

-- The POS contract. Columns and meanings are stable; internals above may change.
-- The views start from items and take location_id from it, joined with CROSS JOIN (in SQLite an inner
-- join that keeps the written order): a till lookup by (location_id, plu) then starts at items_plu and
-- reaches the ranges through their (location_id, item_id, ...) index, even on a fresh database without
-- ANALYZE statistics. Otherwise the planner may walk every range row of the location (37 ms instead
-- of 0.08 ms per lookup on a 5,000-item menu, found by bench/run.ts).
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
SELECT l.location_id, l.location_name, l.currency, l.last_change_sequence, l.last_applied_at,
       (SELECT count(*) FROM inbox w WHERE w.location_id = l.location_id AND w.state = 'pending') AS waiting_updates,
       (SELECT count(*) FROM update_warnings u WHERE u.location_id = l.location_id AND u.acknowledged_at IS NULL) AS warnings
FROM locations l;
`;

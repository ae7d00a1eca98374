/**
 * Till file (pos-sync.db) 002: the change feed (pos_changes) and "today" in each location's own
 * timezone (docs/pos-database.md).
 *
 * Same rules as 001 for SQLite 3.31: no STRICT, no RETURNING, every view column a plain column
 * reference (so drivers see a declared type). The _today views keep their names and columns; only
 * the date they filter on changes, from the reading PC's local date to the location's.
 */
export const name = 'till-changes-and-location-today';

export const sql = /* sql */ `
-- One row per item whose data an applied update changed, written in the apply's transaction.
-- AUTOINCREMENT, not a plain rowid: pruning may delete every row, and a plain rowid would then start
-- again at 1 and a till polling "change_id > :last" would miss everything until it caught up.
CREATE TABLE item_changes (
  change_id       INTEGER PRIMARY KEY AUTOINCREMENT,
  location_id     INTEGER NOT NULL,
  item_id         TEXT NOT NULL,
  plu             TEXT NOT NULL,
  inbox_id        INTEGER NOT NULL,
  change_sequence INTEGER NOT NULL,
  applied_at      TEXT NOT NULL
);
-- Pruning deletes by age, inside an apply.
CREATE INDEX item_changes_applied_at ON item_changes (applied_at);

CREATE VIEW pos_changes AS
SELECT change_id, location_id, item_id, plu, change_sequence, applied_at FROM item_changes;

-- Each location's UTC offset over time, from the IANA database (Intl) for its configured timezone,
-- written by the applier for the coming years: the _today views need no clock or timezone setting on
-- the reading PC, and no agent running at midnight or at a DST change. Times are UTC as SQLite's
-- datetime() writes them ('YYYY-MM-DD HH:MM:SS'), so they compare as text with datetime('now').
CREATE TABLE location_utc_offsets (
  location_id    INTEGER NOT NULL,
  from_utc       TEXT NOT NULL,
  to_utc         TEXT NOT NULL,
  offset_minutes INTEGER NOT NULL CHECK (typeof(offset_minutes) = 'integer'),
  timezone       TEXT NOT NULL,
  PRIMARY KEY (location_id, from_utc),
  CHECK (from_utc < to_utc)
);

DROP VIEW pos_prices_today;
DROP VIEW pos_availability_today;

-- The location's date now: the offset of the latest interval that has started (the last one written
-- if the agent has not run for years); a location with no offsets written yet falls back to the
-- reading PC's local date, as 001 did. COALESCE evaluates its second argument only when needed.
-- The subquery is the one locationToday() in src/store/location-time.ts runs with an explicit instant
-- (lookup and the window use it; a test checks the two texts are the same).
CREATE VIEW pos_prices_today AS
SELECT * FROM pos_prices p
WHERE coalesce((SELECT date('now', o.offset_minutes || ' minutes') FROM location_utc_offsets o
                 WHERE o.location_id = p.location_id AND o.from_utc <= datetime('now') ORDER BY o.from_utc DESC LIMIT 1), date('now', 'localtime')) BETWEEN p.date_from AND p.date_to;

CREATE VIEW pos_availability_today AS
SELECT * FROM pos_availability a
WHERE coalesce((SELECT date('now', o.offset_minutes || ' minutes') FROM location_utc_offsets o
                 WHERE o.location_id = a.location_id AND o.from_utc <= datetime('now') ORDER BY o.from_utc DESC LIMIT 1), date('now', 'localtime')) BETWEEN a.date_from AND a.date_to;
`;

/**
 * Staff file (staff.db) 001: the staff cache (docs/staff.md): what the lookups need from the UK employee interface, plus
 * each record as received, so lookups work while the site is offline. Personal data: names, employee
 * numbers, employment/manager, IR35, furlough, contract hours, residency status and expiry, holiday
 * balance. Kept until a pull no longer returns the person, or `staff purge`.
 */
export const name = 'staff-cache';

export const sql = /* sql */ `
CREATE TABLE staff_employees (
  employee_id      INTEGER PRIMARY KEY,
  employee_number  TEXT,
  display_name     TEXT NOT NULL,
  -- name, preferred name and number: lower-case, accents stripped (search.ts normaliseForSearch)
  search_text      TEXT NOT NULL,
  former           INTEGER NOT NULL DEFAULT 0 CHECK (former IN (0, 1)),
  former_since     TEXT,
  ir35             INTEGER,
  furloughed       INTEGER,
  contract_hours   REAL,
  raw              TEXT NOT NULL,
  refreshed_at     TEXT NOT NULL
) STRICT;
CREATE INDEX staff_employees_number ON staff_employees (employee_number);
CREATE INDEX staff_employees_name ON staff_employees (former, display_name);

CREATE TABLE staff_employments (
  id                          INTEGER PRIMARY KEY,
  employee_id                 INTEGER,
  employee_number             TEXT,
  reports_to                  TEXT,
  reports_to_employee_number  TEXT,
  reports_to_faid             TEXT,
  ir35                        INTEGER,
  raw                         TEXT NOT NULL,
  refreshed_at                TEXT NOT NULL
) STRICT;
CREATE INDEX staff_employments_employee ON staff_employments (employee_id);
CREATE INDEX staff_employments_number ON staff_employments (employee_number);

CREATE TABLE staff_divisions (
  division_id            INTEGER PRIMARY KEY,
  division_name          TEXT NOT NULL,
  accounting_system_code TEXT,
  division_guid          TEXT,
  raw                    TEXT NOT NULL
) STRICT;

CREATE TABLE staff_sources (
  id                 INTEGER PRIMARY KEY,
  source_description TEXT NOT NULL,
  raw                TEXT NOT NULL
) STRICT;

CREATE TABLE staff_locations (
  location_id            INTEGER PRIMARY KEY,
  description            TEXT NOT NULL,
  country                TEXT,
  area                   TEXT,
  accounting_system_code TEXT,
  location_guid          TEXT,
  raw                    TEXT NOT NULL
) STRICT;

-- The last holiday balance fetched per person (accrual is fetched live, on demand).
CREATE TABLE staff_accrual (
  employee_id INTEGER PRIMARY KEY,
  fetched_at  TEXT NOT NULL,
  raw         TEXT NOT NULL
) STRICT;

-- Residency fields this agent submitted (POST), for expiry warnings when GET does not return them.
CREATE TABLE staff_submitted_residency (
  employee_number TEXT PRIMARY KEY,
  fields          TEXT NOT NULL,
  submitted_at    TEXT NOT NULL
) STRICT;

CREATE TABLE staff_sync_state (
  resource        TEXT PRIMARY KEY CHECK (resource IN ('employees', 'employments', 'divisions', 'sources', 'locations')),
  refreshed_at    TEXT,
  -- start of the last successful pull: the next delta asks for changes since this
  pulled_from     TEXT,
  last_full_at    TEXT,
  last_mode       TEXT CHECK (last_mode IN ('full', 'delta')),
  last_attempt_at TEXT,
  last_error      TEXT,
  records         INTEGER NOT NULL DEFAULT 0
) STRICT;
`;

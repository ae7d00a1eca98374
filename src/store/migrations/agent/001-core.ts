/**
 * Agent file (agent.db) 001: what only the agent reads: the durable inbox, the delivery history,
 * quarantined bodies, warnings, the audit log and operations state. Owner-only; never opened by a till.
 */
export const name = 'agent-core';

export const sql = /* sql */ `
-- Every location a valid delivery named, first seen when. What is applied lives in the till file.
CREATE TABLE known_locations (
  location_id   INTEGER PRIMARY KEY,
  location_name TEXT,
  first_seen_at TEXT NOT NULL
) STRICT;

-- Every distinct body received with a valid envelope. The raw bytes are in inbox_bodies (so that
-- changing an update's state never rewrites a 43 MB record), kept until retention prunes them.
-- state follows the till file: an update is 'applied' here only after its menu rows committed there
-- (src/sync/applier.ts reconciles after a crash between the two commits).
CREATE TABLE inbox (
  id                     INTEGER PRIMARY KEY,
  location_id            INTEGER NOT NULL,
  change_sequence        INTEGER NOT NULL,
  parent_change_sequence INTEGER NOT NULL,
  -- 1 while inbox_bodies holds the bytes; 0 once retention pruned them
  body_kept              INTEGER NOT NULL DEFAULT 1 CHECK (body_kept IN (0, 1)),
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
CREATE INDEX inbox_body_prunable ON inbox (state, coalesce(applied_at, received_at)) WHERE body_kept = 1;

-- The bytes of each inbox row exactly as received, in chunks of at most 1 MiB (src/store/bodies.ts).
CREATE TABLE inbox_bodies (
  inbox_id INTEGER NOT NULL REFERENCES inbox (id) ON DELETE CASCADE,
  chunk    INTEGER NOT NULL,
  body     BLOB NOT NULL,
  PRIMARY KEY (inbox_id, chunk)
) STRICT;
CREATE INDEX inbox_pending ON inbox (state) WHERE state = 'pending';

-- One row per POST (or import) that was answered, including duplicates: the delivery history.
CREATE TABLE deliveries (
  id              INTEGER PRIMARY KEY,
  received_at     TEXT NOT NULL,
  sender          TEXT,
  source          TEXT NOT NULL,
  body_bytes      INTEGER NOT NULL,
  inbox_id        INTEGER REFERENCES inbox (id) ON DELETE SET NULL,
  quarantine_id   INTEGER,
  -- accepted (new), duplicate, conflict, stale, rejected
  outcome         TEXT NOT NULL,
  http_status     INTEGER NOT NULL,
  location_id     INTEGER,
  change_sequence INTEGER,
  reason          TEXT
) STRICT;
CREATE INDEX deliveries_received ON deliveries (received_at);
CREATE INDEX deliveries_inbox ON deliveries (inbox_id);

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
CREATE INDEX quarantine_received ON quarantine (received_at);

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
CREATE INDEX update_warnings_inbox ON update_warnings (inbox_id);

CREATE TABLE audit_log (
  id      INTEGER PRIMARY KEY,
  at      TEXT NOT NULL,
  actor   TEXT NOT NULL,
  action  TEXT NOT NULL,
  details TEXT NOT NULL
) STRICT;

-- Durable operator state every process sees (pause survives a restart; the CLI honours it).
CREATE TABLE operations_state (
  key        TEXT PRIMARY KEY,
  value      TEXT NOT NULL,
  changed_at TEXT NOT NULL,
  changed_by TEXT NOT NULL
) STRICT;
`;

export const name = 'body-layout';

/**
 * Where each stored body's parts are (src/store/bodies.ts, BodyLayout): written with the body when a
 * delivery is stored, so the applier reads the envelope and each item straight from their bytes and
 * never loads a large body whole. Bodies stored before this migration have none and are scanned
 * once when applied, as before.
 */
export const sql = `
CREATE TABLE inbox_body_layout (
  inbox_id INTEGER PRIMARY KEY REFERENCES inbox (id) ON DELETE CASCADE,
  -- JSON: [[key, start, end], ...] for each top-level member except the items' array
  members  TEXT NOT NULL,
  -- the items' [start, end) byte offsets, as little-endian float64 pairs; NULL when there is no items array
  items    BLOB
) STRICT;
`;

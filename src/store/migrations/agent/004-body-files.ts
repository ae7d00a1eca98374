export const name = 'body-files';

/**
 * Large bodies (over webhook.fileBodyFromBytes) are streamed to a file of their own in
 * <dataDir>/bodies/ as they arrive, instead of into inbox_bodies (src/store/body-files.ts). This row
 * says which file holds an inbox row's bytes; a file no row names is a leftover of a crash before its
 * row was committed, and is removed at the next start.
 */
export const sql = `
CREATE TABLE inbox_body_files (
  inbox_id INTEGER PRIMARY KEY REFERENCES inbox (id) ON DELETE CASCADE,
  -- the file's name inside <dataDir>/bodies/
  file     TEXT NOT NULL UNIQUE
) STRICT;
`;

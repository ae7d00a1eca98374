/**
 * What "today" means for the till, said once: the clock banner, `status`, the README and the docs
 * (docs/pos-database.md, docs/operations.md) all give this sentence; a test keeps them equal.
 * The truth behind it: the till file's _today views take each location's date from location_days,
 * which the agent derives from the location's timezone (src/store/location-time.ts).
 */
export const TODAY_STATEMENT =
  "The till's \"today\" is each location's own date, worked out from this PC's clock (UTC) and the location's timezone: this PC's timezone does not matter, its clock does.";

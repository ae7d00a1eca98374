/**
 * 003: indexes for retention (src/ops/retention.ts), so each small pruning batch finds its rows
 * without scanning whole tables. auto_vacuum is deliberately left as created (NONE): it cannot be
 * switched to INCREMENTAL without a full VACUUM, which cannot run inside a migration's transaction;
 * pages freed by pruning are reused by later writes instead (docs/operations.md).
 */
export const name = 'ops';

export const sql = /* sql */ `
CREATE INDEX inbox_body_prunable ON inbox (state, coalesce(applied_at, received_at)) WHERE body IS NOT NULL;
CREATE INDEX quarantine_received ON quarantine (received_at);
CREATE INDEX price_ranges_ended ON price_ranges (date_to);
CREATE INDEX availability_ranges_ended ON availability_ranges (date_to);
`;

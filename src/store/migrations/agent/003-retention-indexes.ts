/**
 * Agent file (agent.db) 003: the indexes retention's newer rules search by (src/ops/retention.ts), so
 * each prune batch reads the rows it deletes rather than the whole table: finished updates by state and
 * age (the expression is the one the prune's query uses), acknowledged warnings by when, the audit log
 * by when.
 */
export const name = 'retention-indexes';

export const sql = /* sql */ `
CREATE INDEX inbox_finished ON inbox (state, coalesce(applied_at, received_at));
CREATE INDEX update_warnings_acknowledged ON update_warnings (acknowledged_at) WHERE acknowledged_at IS NOT NULL;
CREATE INDEX audit_log_at ON audit_log (at);
`;

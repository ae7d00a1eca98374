export const name = 'deliveries-by-update';

/**
 * Agent file (agent.db) 005: the deliveries of one update (location and ChangeSequence). The status
 * looks up, for each gap's missing update, whether its latest delivery was a refusal
 * (src/store/queries.ts); the window asks for the status again and again while a gap is open, and the
 * delivery history keeps rows for retention.deliveryDays: without this index each look read them all.
 */
export const sql = `
CREATE INDEX deliveries_update ON deliveries (location_id, change_sequence);
`;

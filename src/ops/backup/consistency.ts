import Database from 'better-sqlite3';

/** Whether a set's till file and agent.db agree on what was applied (the check every set and restore runs). */

export interface SetConsistency {
  readonly problems: string[];
  /** Updates the till file has applied whose inbox row agent.db still shows pending: the agent finishes them on start (Applier.reconcile). */
  readonly reconcilable: number[];
}

/**
 * Do a till file and an agent.db belong together? Every update the till file lists as applied
 * (applied_updates) must be the same update (location and ChangeSequence, not merely the same number)
 * in agent.db's inbox, either 'applied' or still 'pending' (a crash, or a backup, between the apply's
 * two commits: the agent's reconcile finishes it); and every inbox row agent.db calls applied must be
 * in the till file, unless it is older than the location's last applied update there. Retention keeps
 * some applied rows in agent.db longer than their till records (one with a warning nobody has seen,
 * or under a conflict's ChangeSequence: the operator still needs them), and a till that has applied
 * a later update of the chain has applied every earlier one, in order. Done in SQL over the two files
 * attached.
 */
export function checkSetConsistency(tillFile: string, agentFile: string): SetConsistency {
  const db = new Database(tillFile, { readonly: true, fileMustExist: true });
  try {
    db.prepare('ATTACH DATABASE ? AS agent').run(agentFile);
    const missing = db
      .prepare(
        `SELECT a.inbox_id, a.location_id, a.change_sequence, i.state, i.location_id AS inbox_location, i.change_sequence AS inbox_sequence
         FROM main.applied_updates a LEFT JOIN agent.inbox i ON i.id = a.inbox_id
         WHERE i.id IS NULL OR i.location_id <> a.location_id OR i.change_sequence <> a.change_sequence OR i.state NOT IN ('applied', 'pending')
         ORDER BY a.inbox_id LIMIT 10`,
      )
      .all() as { inbox_id: number; location_id: number; change_sequence: number; state: string | null; inbox_location: number | null; inbox_sequence: number | null }[];
    const unapplied = db
      .prepare(
        `SELECT i.id, i.location_id, i.change_sequence FROM agent.inbox i
         WHERE i.state = 'applied' AND NOT EXISTS (SELECT 1 FROM main.applied_updates a WHERE a.inbox_id = i.id)
           AND NOT EXISTS (SELECT 1 FROM main.locations l WHERE l.location_id = i.location_id AND i.change_sequence < l.last_change_sequence)
         ORDER BY i.id LIMIT 10`,
      )
      .all() as { id: number; location_id: number; change_sequence: number }[];
    const reconcilable = (
      db
        .prepare(
          `SELECT a.inbox_id FROM main.applied_updates a
           JOIN agent.inbox i ON i.id = a.inbox_id AND i.location_id = a.location_id AND i.change_sequence = a.change_sequence
           WHERE i.state = 'pending' ORDER BY a.inbox_id`,
        )
        .all() as { inbox_id: number }[]
    ).map((r) => r.inbox_id);
    const problems = [
      ...missing.map((r) =>
        r.state === null || r.inbox_location !== r.location_id || r.inbox_sequence !== r.change_sequence
          ? `pos-sync.db has update #${r.inbox_id} (location ${r.location_id}, ChangeSequence ${r.change_sequence}) applied, which agent.db does not hold`
          : `pos-sync.db has update #${r.inbox_id} applied, which agent.db calls ${r.state}`,
      ),
      ...unapplied.map((r) => `agent.db calls update #${r.id} (location ${r.location_id}, ChangeSequence ${r.change_sequence}) applied; pos-sync.db does not have it`),
    ];
    return { problems, reconcilable };
  } finally {
    db.close();
  }
}

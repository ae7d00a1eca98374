import { preparedStatement, type Db } from './database';

/**
 * Durable operator state in agent.db, seen by every process (the agent, its applier thread, the CLI).
 * Pause lives here, not in memory: it survives a restart and an `import` run while paused stores but
 * does not apply.
 */

export interface PauseState {
  readonly paused: boolean;
  readonly changedAt: string | null;
  readonly changedBy: string | null;
}

export function pauseState(agent: Db): PauseState {
  // Read before every drain: prepared once per connection.
  const row = preparedStatement<[], { value: string; changed_at: string; changed_by: string }>(agent, "SELECT value, changed_at, changed_by FROM operations_state WHERE key = 'paused'").get();
  return { paused: row?.value === 'true', changedAt: row?.changed_at ?? null, changedBy: row?.changed_by ?? null };
}

export function isPaused(agent: Db): boolean {
  return pauseState(agent).paused;
}

/** Sets the pause and audits it, in one transaction. Returns whether it changed. */
export function setPaused(agent: Db, paused: boolean, actor: string, at: Date = new Date(), reason: string | null = null): boolean {
  return agent
    .transaction(() => {
      if (isPaused(agent) === paused) return false;
      agent
        .prepare(
          `INSERT INTO operations_state (key, value, changed_at, changed_by) VALUES ('paused', ?, ?, ?)
           ON CONFLICT (key) DO UPDATE SET value = excluded.value, changed_at = excluded.changed_at, changed_by = excluded.changed_by`,
        )
        .run(String(paused), at.toISOString(), actor);
      agent.prepare('INSERT INTO audit_log (at, actor, action, details) VALUES (?, ?, ?, ?)').run(at.toISOString(), actor, paused ? 'pause' : 'resume', JSON.stringify(reason ? { reason } : {}));
      return true;
    })
    .immediate();
}

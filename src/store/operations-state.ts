import { preparedStatement, type Db } from './database';
import type { ResumeNote } from '../domain/wording';

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

/** The update an apply is under way for (agent.db key 'applying'), written as the apply starts. */
export interface ApplyingMark {
  readonly inboxId: number;
  readonly locationId: number;
  readonly changeSequence: number;
  readonly startedAt: string;
}

/**
 * Notes in agent.db that an apply starts, so that the next start can say it was cut short. Only a
 * message depends on it (the apply itself is safe without it: the till file's transaction rolls
 * back), so this commit is not flushed to disk on its own: it is durable against the agent being
 * killed, and is flushed with the apply's own agent.db commit. A power cut may lose it; the next start
 * then says "queued" instead of "stopped during it".
 */
export function markApplying(agent: Db, mark: ApplyingMark): void {
  agent.pragma('synchronous = NORMAL');
  try {
    preparedStatement<[string, string]>(
      agent,
      `INSERT INTO operations_state (key, value, changed_at, changed_by) VALUES ('applying', ?, ?, 'pos-sync-agent')
       ON CONFLICT (key) DO UPDATE SET value = excluded.value, changed_at = excluded.changed_at, changed_by = excluded.changed_by`,
    ).run(JSON.stringify({ inboxId: mark.inboxId, locationId: mark.locationId, changeSequence: mark.changeSequence }), mark.startedAt);
  } finally {
    agent.pragma('synchronous = FULL');
  }
}

/** Removes the 'applying' note (inside the apply's agent.db transaction, or after a failed apply). */
export function clearApplying(agent: Db): void {
  preparedStatement<[]>(agent, "DELETE FROM operations_state WHERE key = 'applying'").run();
}

/** The 'applying' note, or null. A note whose update is no longer pending is stale (the apply finished). */
export function applyingMark(agent: Db): ApplyingMark | null {
  const row = preparedStatement<[], { value: string; changed_at: string }>(agent, "SELECT value, changed_at FROM operations_state WHERE key = 'applying'").get();
  if (!row) return null;
  try {
    const v = JSON.parse(row.value) as Partial<ApplyingMark>;
    if (typeof v.inboxId !== 'number' || typeof v.locationId !== 'number' || typeof v.changeSequence !== 'number') return null;
    return { inboxId: v.inboxId, locationId: v.locationId, changeSequence: v.changeSequence, startedAt: row.changed_at };
  } catch {
    return null;
  }
}

/**
 * What the running agent is resuming (agent.db key 'resuming'), so that `status`, another process,
 * says the same as the window. Written at start when there is something, removed when it is applied.
 */
export function setResumeNote(agent: Db, note: ResumeNote | null): void {
  if (note === null) {
    preparedStatement<[]>(agent, "DELETE FROM operations_state WHERE key = 'resuming'").run();
    return;
  }
  preparedStatement<[string, string]>(
    agent,
    `INSERT INTO operations_state (key, value, changed_at, changed_by) VALUES ('resuming', ?, ?, 'pos-sync-agent')
     ON CONFLICT (key) DO UPDATE SET value = excluded.value, changed_at = excluded.changed_at, changed_by = excluded.changed_by`,
  ).run(JSON.stringify({ interrupted: note.interrupted, queued: note.queued }), note.since);
}

export function resumeNote(agent: Db): ResumeNote | null {
  const row = preparedStatement<[], { value: string; changed_at: string }>(agent, "SELECT value, changed_at FROM operations_state WHERE key = 'resuming'").get();
  if (!row) return null;
  try {
    const v = JSON.parse(row.value) as { interrupted?: { locationId?: unknown; changeSequence?: unknown } | null; queued?: unknown };
    const i = v.interrupted;
    const interrupted = i && typeof i.locationId === 'number' && typeof i.changeSequence === 'number' ? { locationId: i.locationId, changeSequence: i.changeSequence } : null;
    return { interrupted, queued: typeof v.queued === 'number' ? v.queued : 0, since: row.changed_at };
  } catch {
    return null;
  }
}

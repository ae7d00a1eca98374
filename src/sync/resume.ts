import type { ResumeNote } from '../domain/wording';
import type { Db } from '../store/database';
import { applyingMark, clearApplying } from '../store/operations-state';
import type { LocationStatus } from '../store/read-models';

/**
 * What a start finds left by the previous run: the update whose apply it stopped during (agent.db's
 * 'applying' note names an update still pending, which the till file does not have: its transaction
 * rolled back whatever that apply had written, so it is applied again from the start), and the
 * updates that were queued. This only says so; the first drain does the work. A run stopped between
 * the till file's commit and agent.db's is not "interrupted": the till has the update, and the first
 * drain completes agent.db's record of it (Applier.reconcile, which logs it).
 */

function pending(agent: Db, inboxId: number): boolean {
  const row = agent.prepare<[number], { state: string }>('SELECT state FROM inbox WHERE id = ?').get(inboxId);
  return row?.state === 'pending';
}

function tillHas(till: Db, mark: { inboxId: number; locationId: number; changeSequence: number }): boolean {
  return till.prepare('SELECT 1 FROM applied_updates WHERE inbox_id = ? AND location_id = ? AND change_sequence = ?').get(mark.inboxId, mark.locationId, mark.changeSequence) !== undefined;
}

/** The apply the previous run stopped during and never finished, or null (`status` without an agent). */
export function interruptedApply(agent: Db, till: Db): { locationId: number; changeSequence: number } | null {
  const mark = applyingMark(agent);
  if (!mark || !pending(agent, mark.inboxId) || tillHas(till, mark)) return null;
  return { locationId: mark.locationId, changeSequence: mark.changeSequence };
}

/** Read before the first drain; null when nothing was left (nothing to say). */
export function leftOverAtStart(agent: Db, till: Db, locations: readonly LocationStatus[], at: Date): ResumeNote | null {
  const mark = applyingMark(agent);
  const interrupted = interruptedApply(agent, till);
  // A note whose update is no longer pending (applied, or set aside since): nothing was cut short.
  if (mark && !pending(agent, mark.inboxId)) clearApplying(agent);
  const queued = locations
    .filter((l) => l.siteRole !== 'other')
    .flatMap((l) => l.waiting.filter((w) => w.reason === 'queued' && !(interrupted && l.locationId === interrupted.locationId && w.changeSequence === interrupted.changeSequence)))
    .length;
  return interrupted || queued > 0 ? { interrupted, queued, since: at.toISOString() } : null;
}

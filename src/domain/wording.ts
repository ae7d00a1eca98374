/**
 * Plain-English pieces the status window, the tray and the CLI share. Pure and free of Node imports:
 * the renderer bundles this file.
 */

import { formatUpdateName } from './update-name';

/**
 * A whole count with its thousands grouped, as en-GB writes it: 1,234,567. Written out rather than
 * `toLocaleString`, which in the agent's process would page in ICU's number formatting for good.
 */
export function groupDigits(n: number): string {
  if (!Number.isSafeInteger(n)) return String(n);
  const digits = String(Math.abs(n));
  let grouped = '';
  for (let end = digits.length; end > 0; end -= 3) grouped = digits.slice(Math.max(0, end - 3), end) + (grouped === '' ? '' : `,${grouped}`);
  return n < 0 ? `-${grouped}` : grouped;
}

/** `1 delivery`, `2 deliveries`: a count with its noun in the right number. */
export function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * The employee service's last failure as a manager reads it: one sentence saying what happened and
 * what to check, without the endpoint URL or the operating system's error code (ECONNREFUSED...).
 * The technical text stays in the agent's log and the window's "Technical details" for support.
 */
export function plainServiceProblem(technical: string | null): string {
  const t = technical ?? '';
  if (/cancelled: the agent is stopping/.test(t)) return 'The last refresh was interrupted because the agent was stopping.';
  if (/ECONNREFUSED/.test(t)) return 'Nothing answered at the employee service’s address: the service may be down, or the address in the settings may be wrong.';
  if (/ENOTFOUND|EAI_AGAIN/.test(t)) return 'The employee service’s address could not be found: this PC may be offline, or the address in the settings may be wrong.';
  if (/ETIMEDOUT|did not answer .* in time|timed? ?out/i.test(t)) return 'The employee service did not answer in time.';
  if (/ECONNRESET|EPIPE|socket hang up/i.test(t)) return 'The connection to the employee service was cut off.';
  if (/certificate|CERT_|SSL|TLS/i.test(t)) return 'The employee service’s security certificate was not accepted.';
  if (/refused our credentials/.test(t)) return 'The employee service refused the agent’s credentials: check the user name, password or token in the settings.';
  if (/limiting requests/.test(t)) return 'The employee service asked the agent to slow down; it tries again later.';
  if (/HTTP 5\d\d/.test(t)) return 'The employee service reported a fault on its side; it tries again later.';
  if (/data this agent cannot read/.test(t)) return 'The employee service answered with data the agent cannot read.';
  if (/could not be reached|ENETUNREACH|EHOSTUNREACH/.test(t)) return 'The employee service could not be reached: this PC may be offline.';
  return 'The last attempt to reach the employee service failed.';
}

/**
 * What the agent is doing about an employee service it cannot reach, for the staff banner: trying
 * again in the background (and when), trying right now, or nothing more until the next refresh
 * (null while a sync goes on with no retry pending: nothing to add).
 * `time` formats an ISO instant in the reader's clock.
 */
export function staffRetryText(retry: { readonly attempt: number; readonly of: number; readonly at: string | null } | null, syncing: boolean, time: (iso: string) => string): string | null {
  if (retry === null) return syncing ? null : 'No more attempts for now: “Refresh staff data now” tries again.';
  if (retry.at === null) return `Trying again now (attempt ${retry.attempt} of ${retry.of})…`;
  return `Trying again in the background at ${time(retry.at)} (attempt ${retry.attempt} of ${retry.of}); the cached data can be used meanwhile.`;
}

/** `1 employment`, `3 divisions`: the resource names of a staff sync, singular for one. */
function countOf(resource: string, n: number): string {
  return n === 1 ? `1 ${resource.replace(/ies$/, 'y').replace(/s$/, '')}` : `${n} ${resource}`;
}

/**
 * A staff sync's counts in words. A delta sync counts only the employees and employments that changed
 * since the last one, so "0 employees" would read as "you have no staff": it says "no staff changes"
 * and, when known, how many people the cache holds. The other lists are always read whole.
 */
export function staffSyncText(mode: 'full' | 'delta', counts: Readonly<Record<string, number>>, cachedEmployees: number | null): string {
  const held = cachedEmployees === null ? '' : `; the cache holds ${plural(cachedEmployees, 'employee', 'employees')}`;
  if (mode === 'full') return `full download: ${Object.entries(counts).map(([k, v]) => countOf(k, v)).join(', ')}${held}`;
  const delta = ['employees', 'employments'];
  const changed = delta.filter((k) => (counts[k] ?? 0) > 0).map((k) => countOf(k, counts[k]!));
  const whole = Object.entries(counts).filter(([k]) => !delta.includes(k)).map(([k, v]) => countOf(k, v));
  const staff = changed.length === 0 ? 'no staff changes since the last sync' : `changed since the last sync: ${changed.join(', ')}`;
  return `${staff}${whole.length > 0 ? `; re-read ${whole.join(', ')}` : ''}${held}`;
}

/**
 * What a start found left by the previous run (src/sync/resume.ts): an apply the agent stopped
 * during, and updates that were queued. Shown until they are applied.
 */
export interface ResumeNote {
  /** The update whose apply the previous run did not finish: it is applied again, from the start. */
  readonly interrupted: { readonly locationId: number; readonly changeSequence: number } | null;
  /** Updates queued (ready to apply) when the agent stopped, besides the interrupted one. */
  readonly queued: number;
  /** When this start found them (ISO instant). */
  readonly since: string;
}

/**
 * The one sentence for a resume, in the start-up log, `status`, the window and the tray: the agent
 * running (and applying), running but paused, or not running (`status` without an agent).
 */
export function resumeText(note: ResumeNote, state: 'running' | 'paused' | 'stopped'): string {
  const name = note.interrupted ? formatUpdateName(note.interrupted.locationId, note.interrupted.changeSequence) : null;
  const queued = note.queued > 0 ? plural(note.queued, 'queued update', 'queued updates') : null;
  if (state === 'stopped') {
    return name
      ? `Interrupted: the agent stopped while applying update ${name}; it applies it again, from the start, when it starts.`
      : `${plural(note.queued, 'update was', 'updates were')} queued when the agent stopped; they are applied when it starts.`;
  }
  if (state === 'paused') {
    return name
      ? `Resuming when applying resumes: update ${name} is applied again (the agent stopped during it)${queued ? `, then ${queued}` : ''}.`
      : `Resuming when applying resumes: ${plural(note.queued, 'update', 'updates')} queued when the agent stopped.`;
  }
  return name
    ? `Resuming: applying update ${name} again (the agent stopped during it)${queued ? `, then ${queued}` : ''}.`
    : `Resuming: applying ${plural(note.queued, 'update', 'updates')} queued when the agent stopped.`;
}

/**
 * What a till lookup says about selling one item on one date, beside its prices and meal periods
 * (the till's own rule, docs/pos-database.md: no price that day, no sale; priced with no meal-period
 * rows that day, sold whenever it is priced). Never that the till sells an item it cannot sell.
 */
export function tillDayNotes(date: string, priced: boolean, mealPeriods: boolean): { readonly prices: string | null; readonly mealPeriods: string | null } {
  if (!priced) {
    return {
      prices: `No price on ${date}: the till cannot sell this item that day.`,
      mealPeriods: mealPeriods ? `Without a price on ${date}, the till does not sell it in these meal periods either.` : `No meal periods set for ${date}.`,
    };
  }
  return { prices: null, mealPeriods: mealPeriods ? null : `Not tied to meal periods on ${date}: sold whenever it is priced, at any time of day.` };
}

/** What notYetOnTillNote reads of a location's updates not applied yet (LocationStatus.waiting). */
export interface NotYetOnTill {
  readonly changeSequence: number;
  readonly reason: 'queued' | 'waiting' | 'fork' | 'needs-adoption' | 'settling' | 'not-for-site';
  readonly missing?: number | null;
}

/**
 * Beside an answer read from the till (a price check, Coming up) for one location: that head office
 * has sent updates for it which are not on the till yet, so the answer is the till's now and may
 * change once they are applied; and what they wait for. Null when nothing sent is waiting to be
 * applied (updates for a location this site does not serve are never applied, so they are not named).
 */
export function notYetOnTillNote(waiting: readonly NotYetOnTill[], paused: boolean): string | null {
  const pending = waiting.filter((w) => w.reason !== 'not-for-site');
  if (pending.length === 0) return null;
  const sent = `Head office has sent ${plural(pending.length, 'update', 'updates')} for this location that ${pending.length === 1 ? 'is' : 'are'} not on the till yet`;
  const after = 'this is what the till has now, and it may change once';
  const they = pending.length === 1 ? 'it is' : 'they are';
  const missing = pending
    .filter((w) => w.reason === 'waiting' && typeof w.missing === 'number')
    .map((w) => w.missing as number)
    .sort((a, b) => a - b)[0];
  if (missing !== undefined) return `${sent}: ${pending.length === 1 ? 'it waits' : 'they wait'} for update ${missing}, which has not arrived (a gap in the chain). ${capitalise(after)} ${they} applied.`;
  if (pending.some((w) => w.reason === 'fork' || w.reason === 'needs-adoption')) return `${sent}: ${pending.length === 1 ? 'it waits' : 'they wait'} for a decision on Sync status. ${capitalise(after)} ${they} applied.`;
  if (paused) return `${sent}: applying is paused. ${capitalise(after)} applying resumes.`;
  if (pending.every((w) => w.reason === 'settling')) return `${sent}: a new location's first updates are collected for a short while before the first is applied. ${capitalise(after)} ${they} applied.`;
  return `${sent}: ${they} being applied. ${capitalise(after)} ${they} applied.`;
}

/** notYetOnTillNote for each location that has one, by LocationID. */
export function notYetOnTillNotes(locations: readonly { readonly locationId: number; readonly waiting: readonly NotYetOnTill[] }[], paused: boolean): Map<number, string> {
  const notes = new Map<number, string>();
  for (const l of locations) {
    const note = notYetOnTillNote(l.waiting, paused);
    if (note !== null) notes.set(l.locationId, note);
  }
  return notes;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * The one severity model: how serious the agent's state is, as a pure function of that state.
 * The status window's header and cards, the tray, `pos-sync-agent status` and /metrics all render
 * what `assessSeverity` returns; none of them decides a light on its own.
 *
 * - red: the till is wrong or will be, or something needs a person now (the agent cannot be reached,
 *   applying is paused while updates are held, an apply failed, a real gap past its alert time or one
 *   whose missing update arrived and was refused, a fork,
 *   a conflict, a first update waiting for acceptance, an expired right to work, storage failing or
 *   an operations alert that stops updates arriving).
 * - amber: attention soon (a young gap, paused with nothing held yet, warnings to read, a right to work
 *   expiring within the warning window, a location that is configured but has never received anything,
 *   a location with nothing on the till yet, updates queued while no agent runs to apply them, an
 *   operations alert that is a warning).
 * - green: nothing to do. "Up to date" is said only when nothing head office sent waits to be applied:
 *   green with updates being applied is "Applying".
 *
 * Paused is red while updates are held, because the till is then missing prices head office has
 * already sent; with nothing held it is amber, because the till is still right but will not follow
 * the next update.
 *
 * No Node imports: the renderer bundles this file.
 */

import { cliCommand } from '../config/invocation';
import { staleAdvice } from './stale-advice';
import { formatUpdateName } from './update-name';
import { groupDigits, resumeText, type ResumeNote } from './wording';

export type { ResumeNote } from './wording';

export type Light = 'green' | 'amber' | 'red';

const RANK: Record<Light, number> = { green: 0, amber: 1, red: 2 };

export function worstLight(a: Light, b: Light): Light {
  return RANK[a] >= RANK[b] ? a : b;
}

/**
 * A problem reported by an operations service (tunnel, disk, clock, backups). `light` is how it counts:
 * null only informs (shown as a banner, no change to the light).
 */
export interface OperationsAlert {
  /** Stable per kind ("tunnel", "disk", "clock", "backup"): the window and tests find the banner by it. */
  readonly id: string;
  readonly light: 'amber' | 'red' | null;
  /** One short sentence, used as the banner's heading and in the headline when it counts. */
  readonly title: string;
  /** What it means and what to do, in plain words. */
  readonly text: string;
  /** Extra lines (e.g. the tunnel program's last output), shown smaller. */
  readonly details?: readonly string[];
}

/**
 * Why a stored update is not applied yet:
 * - queued: it follows what is applied (directly or through other queued updates) and is applied in
 *   turn; an apply in progress or a stop mid-apply leaves updates queued, not waiting.
 * - waiting: a real gap: an update it needs (`missing`) has not arrived, or arrived and was refused
 *   (SeverityLocation.refusedMissing).
 * - fork: it continues a chain this location did not follow.
 * - needs-adoption: the first update of a location under the operator policy.
 * - settling: a new location's first deliveries, collected for sync.baselineSettleSeconds.
 * - not-for-site: for a location this site is not configured for (stored, never applied).
 */
export type WaitingReason = 'queued' | 'waiting' | 'fork' | 'needs-adoption' | 'settling' | 'not-for-site';

export interface SeverityWaiting {
  readonly changeSequence: number;
  readonly parentChangeSequence: number;
  readonly receivedAt: string;
  readonly reason: WaitingReason;
  /** For `waiting`: the update that has not arrived (the first missing link of its chain). */
  readonly missing?: number | null;
  /** Set when the last attempt to apply it failed ("apply failed: …"). */
  readonly note?: string | null;
  /** After a failed apply: when the agent tries it again by itself (ISO), when the status knows it. */
  readonly retryAt?: string | null;
}

/**
 * The update a gap waits for, delivered and refused at receipt, with no copy accepted: a resend of the same
 * body is refused again (LocationStatus.refusedMissing, src/store/queries.ts).
 */
export interface SeverityRefusal {
  readonly changeSequence: number;
  readonly receivedAt: string;
  readonly errorId: string | null;
  readonly message: string | null;
}

/** An update that will never be applied, and why (a later baseline adopted, skipped by force-apply). */
export interface SeverityNotApplied {
  readonly changeSequence: number;
  readonly receivedAt: string;
  readonly why: string;
}

export interface SeverityLocation {
  readonly locationId: number;
  readonly locationName: string | null;
  readonly lastChangeSequence: number | null;
  readonly lastAppliedAt: string | null;
  readonly waiting: readonly SeverityWaiting[];
  /** The missing updates of its gaps that arrived and were refused (none: every gap's has not arrived). */
  readonly refusedMissing?: readonly SeverityRefusal[];
  readonly conflicts: number;
  readonly warnings: number;
  /** Recent updates that will not be applied and why (newest first); `notAppliedCount` counts them all. */
  readonly notApplied?: readonly SeverityNotApplied[];
  readonly notAppliedCount?: number;
  /**
   * configured: listed in the site's `locations`; other: not configured, refused for the till (shown as
   * not for this site); open: the site has no `locations` (or allows others), so every location counts.
   */
  readonly siteRole?: 'configured' | 'other' | 'open';
  /** Updates set aside as stale behind a far-ahead applied sequence (stale-advice.ts). */
  readonly staleSinceApplied?: { readonly count: number; readonly latest: readonly number[] };
}

/** Progress of the apply under way (the applier reports it), shown as a bar. */
export interface ApplyProgress {
  readonly locationId: number;
  readonly changeSequence: number;
  readonly done: number;
  readonly total: number;
}

/** Right-to-work expiries among current staff (employees' residency warnings). */
export interface StaffSeverity {
  /** Already expired, or expiring today: that person may not work after today. */
  readonly expired: number;
  /** Expiring within the warning window. */
  readonly expiringSoon: number;
  readonly windowDays: number;
}

export interface AgentState {
  readonly now: Date;
  /** False while the agent cannot be reached (window: requests fail; CLI: no agent runs). */
  readonly reachable: boolean;
  /** Since when it cannot be reached (null: not known). */
  readonly unreachableSince?: string | null;
  /** Why, in plain words ("the agent is not running", "no answer from the agent"). */
  readonly unreachableWhy?: string | null;
  /**
   * The locations were read just now from the agent's files (the CLI), not kept from before it became
   * unreachable (the window): they are then assessed as they are, not shown as "not known".
   */
  readonly locationsCurrent?: boolean;
  readonly paused: boolean;
  readonly pausedBy?: string | null;
  readonly pausedAt?: string | null;
  /** Set when the agent's storage is failing (reads or writes of its files answer errors). */
  readonly storageError?: string | null;
  readonly locations: readonly SeverityLocation[];
  /** Configured locations (site `locations`) that have never received anything. */
  readonly neverReceived?: readonly { readonly locationId: number; readonly name: string | null }[];
  readonly alerts?: readonly OperationsAlert[];
  readonly staff?: StaffSeverity | null;
  readonly applying?: ApplyProgress | null;
  /** What this start found left by the previous run, until it is applied (null: nothing). */
  readonly resuming?: ResumeNote | null;
  /** A gap older than this turns red: the missing update is probably not coming by itself. */
  readonly gapAlertMinutes: number;
  /** sync.baselineSettleSeconds. */
  readonly baselineSettleSeconds?: number;
}

export interface Reason {
  /** Stable: "agent", "paused", "storage", "staff", "alert:<id>", "location:<id>", "never:<id>". */
  readonly id: string;
  readonly light: Light;
  readonly text: string;
}

export interface LocationSeverity {
  readonly locationId: number;
  readonly light: Light;
  /**
   * The badge's word: Up to date (only when nothing sent waits to be applied), Applying, Not on the till
   * yet, Paused, Check, Attention, Not known, Not for this site.
   */
  readonly label: string;
  /** Plain sentences, most important first. */
  readonly lines: readonly string[];
  /** A new location collecting its first deliveries (amber only for that). */
  readonly settling: boolean;
}

export interface Severity {
  readonly light: Light;
  /**
   * The header's badge word: "Up to date" (only when nothing sent waits to be applied), "Applying",
   * "Check", "Attention", "Paused", "Agent unreachable".
   */
  readonly label: string;
  readonly headline: string;
  /** Every reason for the light, worst first. */
  readonly reasons: readonly Reason[];
  readonly locations: readonly LocationSeverity[];
  /** Operations alerts, worst first (banners). */
  readonly alerts: readonly OperationsAlert[];
  /** False while the agent cannot be reached: every action is disabled. */
  readonly actionsEnabled: boolean;
}

export type FormatTime = (iso: string) => string;

export function locationLabel(l: { readonly locationId: number; readonly locationName: string | null }): string {
  return l.locationName ? `${l.locationName} (${l.locationId})` : `Location ${l.locationId}`;
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Alerts worst first: red, amber, then those that only inform; order kept otherwise. */
export function sortAlerts(alerts: readonly OperationsAlert[]): OperationsAlert[] {
  const rank = (a: OperationsAlert): number => (a.light === 'red' ? 0 : a.light === 'amber' ? 1 : 2);
  return alerts.map((a, i) => ({ a, i })).sort((x, y) => rank(x.a) - rank(y.a) || x.i - y.i).map((x) => x.a);
}

/** Gaps of a location, one per missing update: the missing sequence, since when, how many it holds back. */
export function gapsOf(l: SeverityLocation): { missing: number; since: string; blocked: number }[] {
  const gaps = new Map<number, { missing: number; since: string; blocked: number }>();
  for (const w of l.waiting) {
    if (w.reason !== 'waiting') continue;
    const missing = w.missing ?? w.parentChangeSequence;
    const g = gaps.get(missing);
    if (!g) gaps.set(missing, { missing, since: w.receivedAt, blocked: 1 });
    else gaps.set(missing, { missing, since: Date.parse(w.receivedAt) < Date.parse(g.since) ? w.receivedAt : g.since, blocked: g.blocked + 1 });
  }
  return [...gaps.values()].sort((a, b) => a.missing - b.missing);
}

const APPLY_FAILED = /^apply failed: /;

/** The most of a refusal's reason a line quotes (the delivery history has it whole). */
const REFUSAL_CHARS = 160;

/**
 * The missing update of a gap arrived and was refused: head office has to correct it (a resend of the
 * same body is refused again), or the next update is forced across the gap. `next` is the waiting
 * update that follows the refused one (what force-apply takes). Never the body's content or sender.
 */
export function refusedGapText(locationId: number, refusal: SeverityRefusal, blocked: number, next: number, fmt: FormatTime): string {
  const message = refusal.message === null ? null : refusal.message.length > REFUSAL_CHARS ? `${refusal.message.slice(0, REFUSAL_CHARS - 1)}…` : refusal.message;
  const why = [refusal.errorId, message].filter((x) => x !== null).join(': ');
  return (
    `Update ${refusal.changeSequence} arrived at ${fmt(refusal.receivedAt)} and was refused${why ? ` (${why})` : ''}: a resend of the same body would be refused again; ` +
    `${plural(blocked, 'later update waits', 'later updates wait')} for it. Ask head office to correct it and send it again, ` +
    `or force-apply update ${next} across the gap (${cliCommand(`force-apply ${formatUpdateName(locationId, next)} --reason TEXT`)}).`
  );
}

/**
 * A failed apply: the agent retries it by itself after a delay that doubles with each failure in a
 * row (src/sync/applier.ts, retryAfterFailureMs), so nothing needs to arrive or restart for that.
 */
export function applyFailedText(w: Pick<SeverityWaiting, 'changeSequence' | 'note' | 'retryAt'>, fmt: FormatTime): string {
  const when = w.retryAt ? `, next at ${fmt(w.retryAt)}` : '';
  return (
    `Applying update ${w.changeSequence} failed (${(w.note ?? '').replace(APPLY_FAILED, '')}); the agent tries it again by itself${when}, ` +
    'waiting longer after each failure — if it keeps failing, contact support.'
  );
}

/** The badge of a location whose queued updates nothing applies meanwhile (the agent is not running). */
const NOT_ON_TILL = 'Not on the till yet';

export function assessLocation(l: SeverityLocation, state: AgentState, fmt: FormatTime): LocationSeverity {
  const lines: string[] = [];
  let light = 'green' as Light;
  let label: string | null = null;
  let settling = false;
  const settleSeconds = state.baselineSettleSeconds ?? 60;
  // Each line's own light, so the lines can be put worst first at the end (the headline of the
  // location's reason is its first line); a line without one is news, after every problem.
  const lineLights = new Map<string, Light>();
  const say = (lineLight: Light, text: string, first = false): void => {
    light = worstLight(light, lineLight);
    lineLights.set(text, worstLight(lineLights.get(text) ?? lineLight, lineLight));
    if (first) lines.unshift(text);
    else lines.push(text);
  };

  if (l.siteRole === 'other') {
    const held = l.waiting.length;
    return {
      locationId: l.locationId,
      light: 'amber',
      label: 'Not for this site',
      lines: [
        `Not for this site: location ${l.locationId} is not in this site's configured locations, so its updates are stored but not applied to the till` +
          (held > 0 ? ` (${plural(held, 'update', 'updates')} stored).` : '.') +
          ' If head office is right to send it, add it under `locations` in the configuration.',
      ],
      settling: false,
    };
  }

  const failed = l.waiting.find((w) => w.note && APPLY_FAILED.test(w.note));
  if (failed) {
    say('red', applyFailedText(failed, fmt));
  }

  const needsAdoption = l.waiting.filter((w) => w.reason === 'needs-adoption');
  if (needsAdoption.length > 0) {
    const first = needsAdoption[0]!;
    say(
      'red',
      `Update ${first.changeSequence} is the first one seen here and waits for a person to accept it as the starting point (force-apply) — received ${fmt(first.receivedAt)}` +
        (needsAdoption.length > 1 ? `; ${plural(needsAdoption.length - 1, 'other update waits', 'other updates wait')} behind it.` : '.'),
    );
  }

  const settlingRows = l.waiting.filter((w) => w.reason === 'settling');
  if (settlingRows.length > 0) {
    settling = true;
    const first = settlingRows.reduce((a, b) => (Date.parse(b.receivedAt) < Date.parse(a.receivedAt) ? b : a));
    say(
      'amber',
      `Waiting up to ${settleSeconds} s for head office's first publication: update ${first.changeSequence} arrived at ${fmt(first.receivedAt)}; ` +
        'the till is updated once any earlier update has had time to arrive.',
    );
  }

  for (const w of l.waiting.filter((x) => x.reason === 'fork')) {
    say('red', `Update ${w.changeSequence} continues from ${w.parentChangeSequence}, which is not the update applied here — contact support before forcing it.`);
  }

  const gapAlertMs = state.gapAlertMinutes * 60_000;
  for (const g of gapsOf(l)) {
    const refusal = l.refusedMissing?.find((r) => r.changeSequence === g.missing);
    if (refusal) {
      // Nothing will come by itself: a person is needed now, whatever the gap's age.
      // The update that follows the refused one (its child), else the first held behind the gap.
      const held = l.waiting.filter((w) => w.reason === 'waiting' && (w.missing ?? w.parentChangeSequence) === g.missing);
      const children = held.filter((w) => w.parentChangeSequence === g.missing);
      const next = (children.length > 0 ? children : held).reduce((a, w) => Math.min(a, w.changeSequence), Infinity);
      say('red', refusedGapText(l.locationId, refusal, g.blocked, next, fmt));
      continue;
    }
    const age = state.now.getTime() - Date.parse(g.since);
    const late = age > gapAlertMs;
    say(
      late ? 'red' : 'amber',
      `Update ${g.missing} has not arrived from head office (missing since ${fmt(g.since)}); ${plural(g.blocked, 'later update waits', 'later updates wait')} for it. ` +
        (late
          ? `It is overdue (more than ${state.gapAlertMinutes} min): ask head office to resend update ${g.missing}, or force-apply the next one if support says so.`
          : 'Head office usually resends it by itself; nothing to do yet.'),
    );
  }

  // Sent by head office and not on the till yet: a location with any of these is never "up to date".
  // With nothing applied at all the till has none of this location's prices: amber until the first is.
  const neverApplied = l.lastChangeSequence === null;
  const queued = l.waiting.filter((w) => w.reason === 'queued');
  if (queued.length > 0) {
    const next = queued.reduce((a, b) => (b.changeSequence < a.changeSequence ? b : a));
    const progress = state.applying && state.applying.locationId === l.locationId ? state.applying : null;
    if (!state.paused && state.reachable) {
      label = 'Applying';
      if (neverApplied) say('amber', `Nothing is on the till yet: update ${progress?.changeSequence ?? next.changeSequence}, the first for this location, is being applied.`);
      lines.push(
        progress
          ? `Applying update ${progress.changeSequence}: ${groupDigits(progress.done)} of ${groupDigits(progress.total)} items` +
              (queued.length > 1 ? `; ${plural(queued.length - 1, 'more update is', 'more updates are')} queued behind it.` : '.')
          : `${plural(queued.length, 'update is', 'updates are')} queued and applied in turn (next: update ${next.changeSequence}).`,
      );
    } else if (!state.reachable) {
      // Nothing applies them meanwhile (`status` with no agent running, or a window that lost it).
      label = NOT_ON_TILL;
      const applied = `${queued.length === 1 ? 'it is' : 'they are'} applied when the agent runs again.`;
      say(
        'amber',
        neverApplied
          ? `Nothing is on the till yet: ${plural(queued.length, 'update is', 'updates are')} queued (next: update ${next.changeSequence}); ${applied}`
          : `${plural(queued.length, 'update is', 'updates are')} queued and not on the till yet (next: update ${next.changeSequence}); ${applied}`,
      );
    }
  }

  // The update the previous run stopped during: said on its location's card until it is applied.
  const interrupted = state.resuming?.interrupted;
  if (interrupted && interrupted.locationId === l.locationId && state.reachable && queued.some((w) => w.changeSequence === interrupted.changeSequence)) {
    lines.unshift(resumeText({ ...state.resuming!, queued: 0 }, state.paused ? 'paused' : 'running'));
  }

  const stale = staleAdvice(l);
  if (stale) {
    // Head office's real updates are being set aside: the till no longer follows head office.
    say('red', stale.charAt(0).toUpperCase() + stale.slice(1) + '.');
  }
  if (l.conflicts > 0) {
    say(
      'red',
      l.conflicts === 1
        ? 'An update arrived again with different content under the same number — compare the two copies and keep one.'
        : `${l.conflicts} updates arrived again with different content under a number already used — compare the copies and keep one of each.`,
    );
  }
  if (l.warnings > 0) {
    say('amber', `${l.warnings === 1 ? 'One warning' : `${l.warnings} warnings`} from applied updates: read them below and mark them as seen.`);
  }
  // Updates for a location this site does not serve are never applied: they leave the till as empty.
  if (neverApplied && l.waiting.every((w) => w.reason === 'not-for-site')) {
    say('amber', 'Nothing applied yet.');
  }

  // Held back by a pause: the till misses what is held; with nothing held it is still right.
  const held = l.waiting.filter((w) => w.reason !== 'not-for-site').length;
  if (state.paused) {
    label = 'Paused';
    if (held > 0) {
      say('red', `Applying is paused: ${plural(held, 'update is', 'updates are')} held and not on the till. Resume applying to bring the till up to date.`, true);
    } else {
      say('amber', 'Applying is paused: nothing is held yet, but the next update from head office will wait until applying resumes.', true);
    }
  }

  const notApplied = l.notApplied ?? [];
  const notAppliedCount = l.notAppliedCount ?? notApplied.length;
  if (notAppliedCount > 0) {
    const shown = notApplied.slice(0, 3).map((n) => `update ${n.changeSequence} (received ${fmt(n.receivedAt)}): ${n.why}`);
    lines.push(`Not applied, by design: ${shown.join('; ')}${notAppliedCount > shown.length ? `; and ${notAppliedCount - shown.length} more` : ''}.`);
  }

  // Worst first (stable: lines of one light keep their order); news after every problem.
  const rankOf = (text: string): number => {
    const lineLight = lineLights.get(text);
    return lineLight === undefined ? -1 : RANK[lineLight];
  };
  lines.sort((a, b) => rankOf(b) - rankOf(a));

  if (!state.reachable && !state.locationsCurrent) {
    // What was last read is shown as such: nobody knows whether it is still true.
    return {
      locationId: l.locationId,
      light: 'red',
      label: 'Not known',
      lines: [
        'The agent cannot be reached: nothing is applied to the till meanwhile. Last known:',
        ...(lines.length > 0 ? lines : [l.lastChangeSequence === null ? 'Nothing applied yet.' : `update ${l.lastChangeSequence} applied${l.lastAppliedAt ? ` ${fmt(l.lastAppliedAt)}` : ''}.`]),
      ],
      settling: false,
    };
  }

  const upToDate = lines.length === 0 || (light === 'green' && label === null && lines.every((x) => x.startsWith('Not applied, by design')));
  if (upToDate) {
    lines.unshift(`Up to date: update ${l.lastChangeSequence} applied${l.lastAppliedAt ? ` ${fmt(l.lastAppliedAt)}` : ''}.`);
  }
  const finalLabel = label ?? (light === 'green' ? 'Up to date' : light === 'amber' ? 'Check' : 'Attention');
  return { locationId: l.locationId, light, label: light === 'red' && label !== null && label !== 'Paused' ? 'Attention' : finalLabel, lines, settling: settling && light === 'amber' };
}

/** The whole model: a light, its reasons worst first, one headline and a verdict per location. */
export function assessSeverity(state: AgentState, fmt: FormatTime): Severity {
  const reasons: Reason[] = [];
  const alerts = sortAlerts(state.alerts ?? []);
  const perLocation = state.locations.map((l) => assessLocation(l, state, fmt));
  const mine = perLocation.filter((_, i) => state.locations[i]!.siteRole !== 'other');
  const others = perLocation.length - mine.length;

  if (!state.reachable) {
    const since = state.unreachableSince ? ` since ${fmt(state.unreachableSince)}` : '';
    reasons.push({
      id: 'agent',
      light: 'red',
      text: `The agent cannot be reached${since}${state.unreachableWhy ? ` (${state.unreachableWhy})` : ''}: updates are not applied to the till and nothing can be changed until it is back.`,
    });
  }
  if (state.storageError) {
    reasons.push({ id: 'storage', light: 'red', text: `The agent cannot use its storage (${state.storageError}): updates cannot be stored or applied. Contact support.` });
  }
  for (const a of alerts) if (a.light) reasons.push({ id: `alert:${a.id}`, light: a.light, text: a.title });
  if (state.paused) {
    const held = state.locations.filter((l) => l.siteRole !== 'other').reduce((n, l) => n + l.waiting.length, 0);
    const who = state.pausedBy ? ` by ${state.pausedBy}` : '';
    const since = state.pausedAt ? ` since ${fmt(state.pausedAt)}` : '';
    reasons.push({
      id: 'paused',
      light: held > 0 ? 'red' : 'amber',
      text:
        `Applying updates is paused${who}${since} (deliveries are still received)` +
        (held > 0 ? `: ${plural(held, 'update is', 'updates are')} held and not on the till.` : '.'),
    });
  }
  if (state.staff) {
    if (state.staff.expired > 0) {
      reasons.push({ id: 'staff', light: 'red', text: `${plural(state.staff.expired, "employee's right to work has", "employees' right to work has")} expired or ends today — see Staff.` });
    } else if (state.staff.expiringSoon > 0) {
      reasons.push({ id: 'staff', light: 'amber', text: `${plural(state.staff.expiringSoon, "employee's right to work ends", "employees' right to work ends")} within ${state.staff.windowDays} days — see Staff.` });
    }
  }
  for (const n of state.neverReceived ?? []) {
    reasons.push({ id: `never:${n.locationId}`, light: 'amber', text: `${locationLabel({ locationId: n.locationId, locationName: n.name })} is configured but has never received an update from head office.` });
  }
  mine.forEach((s) => {
    if (s.light !== 'green' && (state.reachable || state.locationsCurrent)) {
      const l = state.locations.find((x) => x.locationId === s.locationId)!;
      reasons.push({ id: `location:${s.locationId}`, light: s.light, text: `${locationLabel(l)}: ${s.lines[0] ?? s.label}` });
    }
  });
  // A resume is news, not a problem: green, and the headline when nothing else needs saying. Not for
  // a window that lost the agent (what it last read may no longer hold); `status` without an agent
  // reads it from agent.db (the apply the agent stopped during).
  if (state.resuming && (state.reachable || state.locationsCurrent)) {
    reasons.push({ id: 'resuming', light: 'green', text: resumeText(state.resuming, !state.reachable ? 'stopped' : state.paused ? 'paused' : 'running') });
  }
  if (others > 0) {
    reasons.push({ id: 'other-locations', light: 'amber', text: `${plural(others, 'location', 'locations')} not configured for this site sent updates (stored, not applied).` });
  }

  reasons.sort((a, b) => RANK[b.light] - RANK[a.light]);
  const light = reasons.reduce<Light>((acc, r) => worstLight(acc, r.light), 'green');

  let headline: string;
  let label: string;
  if (!state.reachable) {
    label = 'Agent unreachable';
    headline = reasons[0]!.text;
  } else if (light === 'green') {
    const applying = perLocation.some((s) => s.label === 'Applying');
    const resuming = reasons.find((r) => r.id === 'resuming');
    // Green while updates are being applied is normal work, but not "up to date" yet.
    label = applying || resuming ? 'Applying' : 'Up to date';
    headline =
      mine.length === 0 && (state.neverReceived ?? []).length === 0
        ? 'No updates received yet from head office.'
        : resuming
          ? resuming.text
          : applying
          ? 'Applying the updates received; nothing to do.'
          : mine.length === 1
            ? 'The till is up to date.'
            : `All ${mine.length} locations are up to date.`;
  } else {
    label = state.paused ? 'Paused' : light === 'red' ? 'Attention' : 'Check';
    const settlingOnly = reasons.every((r) => r.id.startsWith('location:') && perLocation.find((s) => `location:${s.locationId}` === r.id)?.settling);
    if (settlingOnly) {
      const n = perLocation.filter((s) => s.settling).length;
      headline = `${n === 1 ? (mine.length === 1 ? 'New location' : 'One new location') : `${n} new locations`}: waiting up to ${state.baselineSettleSeconds ?? 60} s for head office's first publication.`;
    } else {
      const first = reasons[0]!;
      const more = reasons.length - 1;
      headline = `${first.text}${more > 0 ? ` (and ${plural(more, 'more thing', 'more things')} to check below)` : ''}`;
    }
  }
  if (mine.length === 0 && (state.neverReceived ?? []).length === 0 && state.reachable && light !== 'red') {
    // Nothing received at all: attention soon (head office has not been set up yet).
    return {
      light: 'amber',
      label: 'Check',
      headline: reasons.length > 0 ? `No updates received yet from head office. ${reasons[0]!.text}` : 'No updates received yet from head office.',
      reasons: [{ id: 'nothing', light: 'amber', text: 'No updates received yet from head office.' }, ...reasons],
      locations: perLocation,
      alerts,
      actionsEnabled: true,
    };
  }
  return { light, label, headline, reasons, locations: perLocation, alerts, actionsEnabled: state.reachable };
}

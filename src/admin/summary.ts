/**
 * Turns the status read model into what a manager reads: a traffic light and plain sentences. Pure and
 * free of Node imports, because the renderer bundles this same file (one wording for the window and
 * the tray).
 */

import type { LocationStatus } from '../store/read-models';
import { staleAdvice } from '../sync/stale-advice';

/** A location's sync state as it travels as JSON. */
export type StatusLocation = LocationStatus;

export type Light = 'green' | 'amber' | 'red';

export interface LocationSummary {
  readonly locationId: number;
  readonly light: Light;
  /** Plain sentences, most important first. */
  readonly lines: readonly string[];
  /** A new location collecting its first deliveries (amber only for that): the headline says so plainly. */
  readonly settling: boolean;
}

export interface Summary {
  readonly light: Light;
  readonly headline: string;
  readonly locations: readonly LocationSummary[];
  /** The operations alerts, worst first (banners on the Sync status tab). */
  readonly alerts: readonly OperationsAlert[];
}

/**
 * A problem reported by an operations service (tunnel, disk, clock, backups) that the window shows as
 * a banner on the Sync status tab. `light` is how it counts in the traffic light: only problems that
 * stop updates from arriving or being stored count (tunnel down, disk full); the others are shown
 * without changing the light (null).
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

/** Who paused and when, from agent.db's pause state, as the summary and the status API take it. */
export function pausedByAt(state: { readonly changedBy: string | null; readonly changedAt: string | null }): { pausedBy: string | null; pausedAt: string | null } {
  return { pausedBy: state.changedBy, pausedAt: state.changedAt };
}

export interface SummaryOptions {
  readonly now: Date;
  /** Problems from the operations services; those with a light count towards the header's light. */
  readonly alerts?: readonly OperationsAlert[];
  readonly paused: boolean;
  /** Who paused and when (agent.db's operations state), shown in the headline. */
  readonly pausedBy?: string | null;
  readonly pausedAt?: string | null;
  /** A gap older than this turns red: the missing update is probably not coming by itself. */
  readonly gapAlertMinutes: number;
  /** How long a new location's first deliveries are collected before the lowest is applied (sync.baselineSettleSeconds). */
  readonly baselineSettleSeconds?: number;
  /** How a time is shown (the window: the browser's locale; tests: fixed). */
  readonly formatTime: (iso: string) => string;
}

const RANK: Record<Light, number> = { green: 0, amber: 1, red: 2 };

function worst(a: Light, b: Light): Light {
  return RANK[a] >= RANK[b] ? a : b;
}

export function locationLabel(l: Pick<StatusLocation, 'locationId' | 'locationName'>): string {
  return l.locationName ? `${l.locationName} (${l.locationId})` : `Location ${l.locationId}`;
}

export function summariseLocation(l: StatusLocation, options: SummaryOptions): LocationSummary {
  const lines: string[] = [];
  let light: Light = 'green';
  let settling = false;
  const gapAlertMs = options.gapAlertMinutes * 60_000;
  const settleSeconds = options.baselineSettleSeconds ?? 60;
  for (const w of l.waiting) {
    const since = options.formatTime(w.receivedAt);
    if (w.reason === 'needs-adoption') {
      light = worst(light, 'red');
      lines.push(`Update ${w.changeSequence} is the first one seen here and waits for an operator to accept it (force-apply) — received ${since}.`);
    } else if (w.reason === 'settling') {
      // Nothing is on the till yet: amber, never "up to date" (the till still has no menu from head office).
      light = worst(light, 'amber');
      if (!settling) {
        settling = true;
        lines.push(
          `Waiting up to ${settleSeconds} s for head office's first publication: update ${w.changeSequence} arrived at ${since}; ` +
            'the till is updated once any earlier update has had time to arrive.',
        );
      }
    } else if (w.reason === 'fork') {
      light = worst(light, 'red');
      lines.push(`Update ${w.changeSequence} continues from ${w.parentChangeSequence}, which is not the update applied here — contact support before forcing it.`);
    } else {
      const age = options.now.getTime() - Date.parse(w.receivedAt);
      light = worst(light, age > gapAlertMs ? 'red' : 'amber');
      lines.push(
        `Update ${w.changeSequence} is waiting for update ${w.waitingFor ?? w.parentChangeSequence} from head office since ${since} — if it does not arrive, contact support.`,
      );
    }
  }
  const stale = staleAdvice(l);
  if (stale) {
    // Head office's real updates are being set aside: the till no longer follows head office.
    light = worst(light, 'red');
    lines.push(stale.charAt(0).toUpperCase() + stale.slice(1) + '.');
  }
  if (l.conflicts > 0) {
    light = worst(light, 'red');
    lines.push(
      l.conflicts === 1
        ? 'An update arrived again with different content under the same number — compare the two copies and keep one.'
        : `${l.conflicts} updates arrived again with different content under a number already used — compare the copies and keep one of each.`,
    );
  }
  if (l.warnings > 0) {
    light = worst(light, 'amber');
    lines.push(`${l.warnings === 1 ? 'One warning' : `${l.warnings} warnings`} from applied updates (some items were skipped).`);
  }
  if (l.lastChangeSequence === null && l.waiting.length === 0) {
    light = worst(light, 'amber');
    lines.push('Nothing applied yet.');
  }
  if (lines.length === 0) lines.push(`Up to date: update ${l.lastChangeSequence} applied ${l.lastAppliedAt ? options.formatTime(l.lastAppliedAt) : ''}.`.replace(' .', '.'));
  return { locationId: l.locationId, light, lines, settling: settling && light === 'amber' };
}

/** Alerts worst first: red, amber, then those that only inform; order kept otherwise. */
export function sortAlerts(alerts: readonly OperationsAlert[]): OperationsAlert[] {
  const rank = (a: OperationsAlert): number => (a.light === 'red' ? 0 : a.light === 'amber' ? 1 : 2);
  return alerts.map((a, i) => ({ a, i })).sort((x, y) => rank(x.a) - rank(y.a) || x.i - y.i).map((x) => x.a);
}

export function summarise(locations: readonly StatusLocation[], options: SummaryOptions): Summary {
  const perLocation = locations.map((l) => summariseLocation(l, options));
  const alerts = sortAlerts(options.alerts ?? []);
  // Alerts with a light mean updates may not be arriving: "up to date" would then overstate it.
  const counted = alerts.filter((a) => a.light !== null);
  let light: Light = perLocation.reduce<Light>((acc, s) => worst(acc, s.light), 'green');
  let headline: string;
  if (locations.length === 0) {
    light = 'amber';
    headline = 'No updates received yet from head office.';
  } else if (light === 'green') {
    headline =
      counted.length > 0
        ? 'Everything received so far is applied.'
        : locations.length === 1
          ? 'The till is up to date.'
          : `All ${locations.length} locations are up to date.`;
  } else if (perLocation.every((s) => s.light === 'green' || s.settling)) {
    const settling = perLocation.filter((s) => s.settling).length;
    headline = `${settling === 1 ? (locations.length === 1 ? 'New location' : 'One new location') : `${settling} new locations`}: waiting up to ${options.baselineSettleSeconds ?? 60} s for head office's first publication.`;
  } else {
    const behind = perLocation.filter((s) => s.light !== 'green').length;
    headline =
      light === 'red'
        ? `${behind} location${behind === 1 ? ' needs' : 's need'} attention.`
        : `${behind} location${behind === 1 ? ' has' : 's have'} something to check.`;
  }
  for (const a of counted) light = worst(light, a.light!);
  if (counted.length > 0) headline = `${counted.map((a) => a.title).join(' ')} ${headline}`;
  if (options.paused) {
    light = worst(light, 'amber');
    const who = options.pausedBy ? ` by ${options.pausedBy}` : '';
    const since = options.pausedAt ? ` since ${options.formatTime(options.pausedAt)}` : '';
    headline = `Applying updates is paused${who}${since} (deliveries are still received). ${headline}`;
  }
  return { light, headline, locations: perLocation, alerts };
}

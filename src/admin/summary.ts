/**
 * The status API's reply and the one way to read its severity: the window, the tray and the admin
 * service all call `severityOf` (src/domain/severity.ts decides; nothing here adds a rule). Pure and
 * free of Node imports, because the renderer bundles this same file.
 */

import { assessSeverity, type AgentState, type ApplyProgress, type FormatTime, type OperationsAlert, type ResumeNote, type Severity, type StaffSeverity } from '../domain/severity';
import type { LocationStatus } from '../store/read-models';
import type { RefusalSnapshot } from '../webhook/refusals';

export type { Light, LocationSeverity as LocationSummary, OperationsAlert, Severity as Summary, StaffSeverity, ApplyProgress, ResumeNote } from '../domain/severity';
export { locationLabel, sortAlerts } from '../domain/severity';

/** A location's sync state as it travels as JSON. */
export type StatusLocation = LocationStatus;

/** GET /api/status. */
export interface StatusReply {
  readonly generatedAt: string;
  readonly paused: boolean;
  /** Who paused and when (null when never paused). */
  readonly pausedBy?: string | null;
  readonly pausedAt?: string | null;
  readonly gapAlertMinutes: number;
  /** The ` --config FILE` a command needs to reach this agent ('' when none is needed). */
  readonly cliConfigArgument?: string;
  /** sync.baselineSettleSeconds: how long a new location's first deliveries are collected. */
  readonly baselineSettleSeconds: number;
  readonly locations: StatusLocation[];
  /** Configured locations that have never received anything. */
  readonly neverReceived?: { readonly locationId: number; readonly name: string | null }[];
  /** Refused webhook calls per reason (src/webhook/refusals.ts). */
  readonly refusals?: RefusalSnapshot;
  /** Banners from the operations services (tunnel, disk, clock, backups). */
  readonly alerts: OperationsAlert[];
  /** Right-to-work expiries (null: staff lookups not configured). */
  readonly staff?: StaffSeverity | null;
  /** The apply under way, items done of total (null: none). */
  readonly applying?: ApplyProgress | null;
  /** What this start found left by the previous run (an apply it stopped during, queued updates), until applied. */
  readonly resuming?: ResumeNote | null;
}

/** Who paused and when, from agent.db's pause state, as the summary and the status API take it. */
export function pausedByAt(state: { readonly changedBy: string | null; readonly changedAt: string | null }): { pausedBy: string | null; pausedAt: string | null } {
  return { pausedBy: state.changedBy, pausedAt: state.changedAt };
}

/** The model's input from a status reply (and, when the agent cannot be reached, since when and why). */
export function agentStateOf(
  status: StatusReply,
  now: Date,
  reach: { readonly reachable: boolean; readonly since?: string | null; readonly why?: string | null; readonly storageError?: string | null; readonly locationsCurrent?: boolean } = { reachable: true },
): AgentState {
  return {
    now,
    reachable: reach.reachable,
    unreachableSince: reach.since ?? null,
    unreachableWhy: reach.why ?? null,
    locationsCurrent: reach.locationsCurrent ?? false,
    storageError: reach.storageError ?? null,
    paused: status.paused,
    pausedBy: status.pausedBy ?? null,
    pausedAt: status.pausedAt ?? null,
    locations: status.locations,
    neverReceived: status.neverReceived ?? [],
    alerts: status.alerts,
    staff: status.staff ?? null,
    applying: status.applying ?? null,
    resuming: status.resuming ?? null,
    gapAlertMinutes: status.gapAlertMinutes,
    baselineSettleSeconds: status.baselineSettleSeconds,
  };
}

export function severityOf(status: StatusReply, now: Date, fmt: FormatTime, reach?: Parameters<typeof agentStateOf>[2]): Severity {
  return assessSeverity(agentStateOf(status, now, reach), fmt);
}

/** Configured locations with nothing received yet. */
export function neverReceivedOf(
  configured: Readonly<Record<string, { readonly name?: string | undefined }>>,
  locations: readonly { readonly locationId: number }[],
): { locationId: number; name: string | null }[] {
  const seen = new Set(locations.map((l) => l.locationId));
  return Object.keys(configured)
    .map(Number)
    .filter((id) => !seen.has(id))
    .sort((a, b) => a - b)
    .map((locationId) => ({ locationId, name: configured[String(locationId)]?.name ?? null }));
}

/** Right-to-work warnings counted for the model: expired or ending today, and ending within the window. */
export function staffSeverityOf(warnings: readonly { readonly residency: { readonly daysToExpiry: number | null } }[], windowDays: number): StaffSeverity {
  const expired = warnings.filter((w) => w.residency.daysToExpiry !== null && w.residency.daysToExpiry <= 0).length;
  return { expired, expiringSoon: warnings.length - expired, windowDays };
}

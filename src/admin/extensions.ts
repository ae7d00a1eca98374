/**
 * The place where other modules (operations: tunnel state, retention, disk warnings, diagnostics) add
 * to the status window without the admin server knowing them. A started AgentService that also has
 * these members is shown in the window's "Operations" section, under /api/panels/<name>. One that also
 * has `adminAlerts()` puts banners on the Sync status tab (and, for alerts with a light, into the
 * traffic light of the window and the tray).
 */
import type { OperationsAlert } from './summary';

export type { OperationsAlert };

export interface PanelItem {
  readonly label: string;
  /** Rendered as text, never as HTML. */
  readonly value: string;
  readonly level?: 'ok' | 'warn' | 'error';
}

export interface PanelAction {
  readonly id: string;
  readonly label: string;
  /** Asked before running; null runs at once. */
  readonly confirm: string | null;
}

export interface PanelView {
  readonly title: string;
  readonly items: readonly PanelItem[];
  readonly actions: readonly PanelAction[];
}

export interface AdminPanelProvider {
  readonly name: string;
  adminPanel(): Promise<PanelView> | PanelView;
  /** Runs an action; the message is shown to the manager. `actor` goes to the audit log. */
  runAdminAction(id: string, actor: string): Promise<{ message: string }> | { message: string };
}

export function isAdminPanelProvider(value: unknown): value is AdminPanelProvider {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Partial<AdminPanelProvider>;
  return typeof v.name === 'string' && typeof v.adminPanel === 'function' && typeof v.runAdminAction === 'function';
}

export interface AdminAlertProvider {
  readonly name: string;
  /** Problems to show now; called on every status read, so it must be cheap and must not do I/O that can block. */
  adminAlerts(): readonly OperationsAlert[];
}

export function isAdminAlertProvider(value: unknown): value is AdminAlertProvider {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Partial<AdminAlertProvider>;
  return typeof v.name === 'string' && typeof v.adminAlerts === 'function';
}

/**
 * Figures an operations service adds to GET /metrics (admin/metrics.ts), by name. The names, their
 * help text and their type are fixed here, so the scrape's contract (docs/monitoring.md, the shipped
 * alert rules and dashboard) has one source; a service reports only the values it knows.
 */
export const OPS_METRICS = {
  pos_sync_tunnel_up: { type: 'gauge', help: 'Whether the tunnel program runs and its last end-to-end check passed (1) or not (0); absent without a tunnel.' },
  pos_sync_tunnel_restarts_total: { type: 'counter', help: 'Times the tunnel program was restarted since the agent started.' },
  pos_sync_disk_free_bytes: { type: 'gauge', help: 'Free space on the disk holding the data folder, in bytes.' },
  pos_sync_disk_level: { type: 'gauge', help: "The disk check's verdict: 0 ok, 1 low, 2 critical (disk.warnFreeBytes, disk.warnFreePercent, disk.criticalFreeBytes); absent when unknown." },
  pos_sync_clock_skew_seconds: { type: 'gauge', help: "The system clock's largest observed offset from a server's clock, in seconds (positive: ours is behind)." },
  pos_sync_backup_last_age_seconds: { type: 'gauge', help: 'Age of the newest backup, in seconds; absent when there is none.' },
  pos_sync_backup_last_failed: { type: 'gauge', help: 'Whether the last backup attempt failed (1) or not (0).' },
} as const satisfies Record<string, { type: 'gauge' | 'counter'; help: string }>;

export type OpsMetricName = keyof typeof OPS_METRICS;

export interface AdminMetricsProvider {
  readonly name: string;
  /** Values known now (omitted or null: not known, not exported); called on every scrape, so cheap and without blocking I/O. */
  metricValues(now: Date): Partial<Record<OpsMetricName, number | null>>;
}

export function isAdminMetricsProvider(value: unknown): value is AdminMetricsProvider {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Partial<AdminMetricsProvider>;
  return typeof v.name === 'string' && typeof v.metricValues === 'function';
}

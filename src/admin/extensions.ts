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

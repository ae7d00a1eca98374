import { invocationConfigArgument } from '../config/invocation';
import type { Agent } from '../agent';
import type { StaffService } from '../employees/service';
import type { Logger } from '../log';
import { collectAlerts } from './routes/panels';
import { neverReceivedOf, pausedByAt, staffSeverityOf, type StaffSeverity, type StatusReply } from './summary';

/** What the status reply reads of the agent. */
export type StatusAgent = Pick<Agent, 'core' | 'config' | 'isPaused' | 'service' | 'refusals' | 'applyProgress' | 'resuming' | 'applyRetries'>;

/** Right-to-work expiries for the severity model, or null when staff lookups are not configured. */
export function staffSeverity(agent: Pick<Agent, 'service'>, log: Logger): StaffSeverity | null {
  const service = agent.service<StaffService>('staff');
  if (!service) return null;
  try {
    return staffSeverityOf(service.residencyWarnings(), service.settings.residencyWarningDays);
  } catch (err) {
    log.error('residency warnings:', err);
    return null;
  }
}

/** GET /api/status, and what the tray and /metrics read the same model from. */
export function buildStatusReply(agent: StatusAgent, panelServices: readonly string[], log: Logger, now: Date = new Date()): StatusReply {
  // A failed apply's retry time is the running agent's (its applier host), not agent.db's.
  const retries = new Map(agent.applyRetries().map((r) => [r.inboxId, r.retryAt]));
  const locations = agent.core.status().map((l) => (retries.size === 0 ? l : { ...l, waiting: l.waiting.map((w) => (retries.has(w.inboxId) ? { ...w, retryAt: retries.get(w.inboxId)! } : w)) }));
  return {
    generatedAt: now.toISOString(),
    paused: agent.isPaused,
    ...pausedByAt(agent.core.pause()),
    refusals: agent.refusals.snapshot(),
    gapAlertMinutes: agent.config.admin.gapAlertMinutes,
    cliConfigArgument: invocationConfigArgument(),
    baselineSettleSeconds: agent.config.sync.baselineSettleSeconds,
    locations,
    neverReceived: neverReceivedOf(agent.config.locations, locations),
    alerts: collectAlerts(agent, panelServices, log),
    staff: staffSeverity(agent, log),
    applying: agent.applyProgress,
    resuming: agent.resuming,
  };
}

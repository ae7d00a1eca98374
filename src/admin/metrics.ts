import fs from 'node:fs';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Agent } from '../agent';
import type { StaffService } from '../employees/service';
import type { Logger } from '../log';
import { storeFilePath } from '../store/database';
import { locationChainFigures, quarantinedSince, staffSyncRows } from '../store/metrics-queries';
import { appVersion } from '../version';
import { todayIn } from '../domain/dates';
import { assessLocation, type AgentState, type Light } from '../domain/severity';
import { describeError } from '../errors';
import { isAdminMetricsProvider, OPS_METRICS, type OpsMetricName } from './extensions';

/**
 * The agent's figures for a Prometheus scraper (GET /metrics, routes/metrics.ts), as a prom-client
 * registry. Everything is read when scraped, from what the agent keeps in memory (refusals, applies,
 * the operations services' last checks) and from index lookups (store/metrics-queries.ts): a scrape
 * never walks a table. Labels carry only location numbers, reasons and resource names: no personal
 * data. The names are the contract docs/monitoring.md, packaging/prometheus/alerts.yml and
 * packaging/grafana/estate.json rely on.
 */

export type MetricsAgent = Pick<Agent, 'core' | 'config' | 'refusals' | 'storedDeliveries' | 'onApplied' | 'service' | 'isPaused'>;

export interface MetricsOptions {
  readonly agent: MetricsAgent;
  readonly log: Logger;
  /** Services that may add figures (AdminMetricsProvider, extensions.ts). */
  readonly services: readonly string[];
  readonly now?: () => Date;
}

/** The lights as numbers, worst highest (pos_sync_location_light). */
const LIGHT_VALUES: Readonly<Record<Light, number>> = { green: 0, amber: 1, red: 2 };

const APPLY_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const FILES = { till: 'till', agent: 'agent', staff: 'staff' } as const;

function fileBytes(file: string): number | null {
  try {
    return fs.statSync(file).size;
  } catch {
    return null;
  }
}

function ageSeconds(now: Date, iso: string | null): number | null {
  if (iso === null) return null;
  const t = Date.parse(iso);
  return Number.isFinite(t) ? Math.max(0, (now.getTime() - t) / 1000) : null;
}

/**
 * The process's own figures (CPU, memory, event-loop lag, GC), made once per process: prom-client's
 * default metrics start an event-loop monitor and a GC observer that nothing can stop, so a registry
 * per admin service would leave one more of each running at every restart of that service.
 */
let processRegistry: Registry | null = null;

function processMetrics(): Registry {
  if (processRegistry === null) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry, prefix: 'pos_sync_process_' });
    // Gauges that prom-client names as counters (…_total): `promtool check metrics` refuses them, and
    // the same counts are kept by type in …_active_handles, …_active_requests, …_active_resources.
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
      processRegistry.removeSingleMetric(`pos_sync_process_${name}`);
    }
  }
  return processRegistry;
}

/** Empties a gauge or counter: every labelled series goes, and so does the one of a metric without labels. */
function clear(metric: Gauge | Counter): void {
  metric.reset();
  if ((metric as unknown as { labelNames: readonly string[] }).labelNames.length === 0) metric.remove();
}

/** Why a call to GET /metrics was refused (routes/metrics.ts), counted by reason. */
export type MetricsRefusal = 'host_not_allowed' | 'bearer_token';

export class AgentMetrics {
  /** This agent's figures and the process's, as one registry; closing it leaves the process's running. */
  readonly registry: Registry;
  private readonly refusedCounter: Counter;
  private readonly unsubscribe: () => void;
  private readonly collect: () => void;
  /** Residency counts, recomputed only when a staff sync or the date has moved (they read every record). */
  private residency: { key: string; expiring: number; expired: number } | null = null;

  constructor(private readonly options: MetricsOptions) {
    const { agent } = options;
    const now = options.now ?? (() => new Date());
    const registry = new Registry();
    const sqlite = (agent.core.agentDb.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;

    new Gauge({
      name: 'pos_sync_agent_info',
      help: 'Always 1; the labels say which agent build runs (version, Node.js, SQLite).',
      labelNames: ['version', 'node', 'sqlite'],
      registers: [registry],
    }).set({ version: appVersion(), node: process.versions.node, sqlite }, 1);

    const applyDuration = new Histogram({
      name: 'pos_sync_apply_duration_seconds',
      help: 'Time to apply one update to the till file, per location, since the agent started.',
      labelNames: ['location'],
      buckets: APPLY_BUCKETS,
      registers: [registry],
    });
    this.unsubscribe = agent.onApplied((u) => applyDuration.observe({ location: String(u.locationId) }, u.applyMs / 1000));

    const lastSequence = gauge(registry, 'pos_sync_last_applied_change_sequence', 'The ChangeSequence last applied to the till file, per location.', ['location']);
    const lastAge = gauge(registry, 'pos_sync_last_applied_age_seconds', 'Seconds since the last update was applied, per location; absent before the first.', ['location']);
    const pending = gauge(registry, 'pos_sync_pending_updates', 'Updates stored and not yet applied, per location.', ['location']);
    const gapUpdates = gauge(registry, 'pos_sync_gap_waiting_updates', 'Pending updates waiting behind a missing earlier update (a gap in the chain), per location.', ['location']);
    const gapAge = gauge(registry, 'pos_sync_gap_oldest_age_seconds', 'Seconds the oldest update behind a gap has waited, per location; 0 without a gap.', ['location']);
    const light = gauge(registry, 'pos_sync_location_light', "The status window's light for each location, from the same model (src/domain/severity.ts): 0 green, 1 amber, 2 red.", ['location']);
    const forSite = gauge(registry, 'pos_sync_location_for_site', "Whether the location is this site's (1), or one it stores updates for without applying them (0: not in a configured locations list).", ['location']);
    const paused = gauge(registry, 'pos_sync_applying_paused', 'Whether an operator paused applying (1) or not (0).', []);
    const quarantined = gauge(registry, 'pos_sync_quarantined_last_24h', 'Deliveries quarantined (refused as unreadable, stored for inspection) in the last 24 hours.', []);
    const files = gauge(registry, 'pos_sync_file_bytes', "Size of the agent's files in bytes: file is till (pos-sync.db), agent (agent.db) or staff (staff.db); wal is the write-ahead log.", ['file', 'part']);
    const staffAge = gauge(registry, 'pos_sync_staff_sync_age_seconds', 'Seconds since each staff resource was last refreshed from the employee interface.', ['resource']);
    const staffFailing = gauge(registry, 'pos_sync_staff_sync_failing', "Whether each staff resource's last refresh failed (1) or not (0).", ['resource']);
    const residency = gauge(registry, 'pos_sync_rights_to_work', "Current staff whose right to work (residency status) expires within employees.residencyWarningDays (state=expiring) or has expired (state=expired). Counts only.", ['state']);
    const scrapeErrors = new Counter({ name: 'pos_sync_metrics_collect_errors_total', help: 'Scrapes in which reading a figure failed (the figure is then left out; the log says why).', labelNames: ['area'], registers: [registry] });

    new Counter({
      name: 'pos_sync_webhook_deliveries_stored_total',
      help: 'Webhook deliveries accepted and stored since the agent started.',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(agent.storedDeliveries);
      },
    });
    new Counter({
      name: 'pos_sync_webhook_refused_total',
      help: 'Webhook calls refused since the agent started, by reason (the refusal id, e.g. missing_bearer_token, origin_not_allowed, payload_too_large).',
      labelNames: ['reason'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [reason, n] of Object.entries(agent.refusals.snapshot().total)) this.inc({ reason }, n);
      },
    });

    const guarded = (area: string, read: () => void): void => {
      try {
        read();
      } catch (err) {
        scrapeErrors.inc({ area });
        options.log.warn(`metrics: reading ${area} failed: ${describeError(err)}`);
      }
    };

    const opsGauges = new Map<OpsMetricName, Gauge | Counter>();
    for (const [name, spec] of Object.entries(OPS_METRICS) as [OpsMetricName, (typeof OPS_METRICS)[OpsMetricName]][]) {
      opsGauges.set(name, spec.type === 'gauge' ? new Gauge({ name, help: spec.help, registers: [registry] }) : new Counter({ name, help: spec.help, registers: [registry] }));
    }
    this.refusedCounter = new Counter({
      name: 'pos_sync_metrics_refused_total',
      help: 'Calls to GET /metrics refused since the agent started, by reason (bearer_token: missing or wrong token; host_not_allowed: a foreign Host header).',
      labelNames: ['reason'],
      registers: [registry],
    });
    const scrapeTimestamp = gauge(registry, 'pos_sync_scrape_timestamp_seconds', "When this scrape was collected (the agent's clock), in Unix seconds.", []);

    // Filled together before each render, so the figures of one scrape describe the same moment.
    this.collect = () => {
      const at = now();
      // A gauge without labels is absent until set again: prom-client's reset() sets it to 0, which
      // would read as a fact (a tunnel down, a backup just taken) where nothing is known.
      for (const g of [lastSequence, lastAge, pending, gapUpdates, gapAge, light, forSite, quarantined, files, staffAge, staffFailing, residency, ...opsGauges.values()]) clear(g);
      paused.set(agent.isPaused ? 1 : 0);
      const core = agent.core;
      if (core.isOpen) {
        guarded('chain', () => {
          for (const f of locationChainFigures(core.agentDb, core.tillDb)) {
            const location = String(f.locationId);
            if (f.lastChangeSequence !== null) lastSequence.set({ location }, f.lastChangeSequence);
            const age = ageSeconds(at, f.lastAppliedAt);
            if (age !== null) lastAge.set({ location }, age);
            pending.set({ location }, f.pending);
            gapUpdates.set({ location }, f.gapUpdates);
            gapAge.set({ location }, ageSeconds(at, f.oldestGapReceivedAt) ?? 0);
          }
        });
        guarded('severity', () => {
          // The window's verdict per location, as the window decides it: alerts follow the same lights.
          const locations = core.status();
          const state: AgentState = {
            now: at,
            reachable: true,
            locationsCurrent: true,
            paused: agent.isPaused,
            locations,
            gapAlertMinutes: agent.config.admin.gapAlertMinutes,
            baselineSettleSeconds: agent.config.sync.baselineSettleSeconds,
          };
          for (const l of locations) {
            const location = String(l.locationId);
            light.set({ location }, LIGHT_VALUES[assessLocation(l, state, (iso) => iso).light]);
            forSite.set({ location }, l.siteRole === 'other' ? 0 : 1);
          }
        });
        guarded('quarantine', () => quarantined.set(quarantinedSince(core.agentDb, new Date(at.getTime() - 86_400_000).toISOString())));
        guarded('staff', () => {
          if (!agent.config.employees) return;
          for (const r of staffSyncRows(core.staffDb)) {
            const refreshed = ageSeconds(at, r.refreshed_at);
            if (refreshed !== null) staffAge.set({ resource: r.resource }, refreshed);
            staffFailing.set({ resource: r.resource }, r.last_error === null ? 0 : 1);
          }
          const counts = this.residencyCounts(at);
          if (counts) {
            residency.set({ state: 'expiring' }, counts.expiring);
            residency.set({ state: 'expired' }, counts.expired);
          }
        });
      }
      for (const [name, kind] of Object.entries(FILES)) {
        const file = storeFilePath(agent.config.dataDir, kind);
        const main = fileBytes(file);
        if (main !== null) files.set({ file: name, part: 'main' }, main);
        files.set({ file: name, part: 'wal' }, fileBytes(`${file}-wal`) ?? 0);
      }
      for (const name of options.services) {
        const service = agent.service(name);
        if (!isAdminMetricsProvider(service)) continue;
        guarded(name, () => {
          for (const [metric, value] of Object.entries(service.metricValues(at))) {
            const target = opsGauges.get(metric as OpsMetricName);
            if (!target || typeof value !== 'number' || !Number.isFinite(value)) continue;
            if (target instanceof Gauge) target.set(value);
            else target.inc(value);
          }
        });
      }
      scrapeTimestamp.set(at.getTime() / 1000);
    };
    this.registry = Registry.merge([processMetrics(), registry]);
  }

  /** Counts a refused call to GET /metrics. */
  refused(reason: MetricsRefusal): void {
    this.refusedCounter.inc({ reason });
  }

  private residencyCounts(at: Date): { expiring: number; expired: number } | null {
    const staff = this.options.agent.service('staff') as unknown as Pick<StaffService, 'residencyWarnings'> | undefined;
    if (!staff) return null;
    const employees = staffSyncRows(this.options.agent.core.staffDb).find((r) => r.resource === 'employees');
    const key = `${employees?.refreshed_at ?? ''}|${todayIn(this.options.agent.config.defaultTimezone, at)}`;
    if (this.residency?.key !== key) {
      const warnings = staff.residencyWarnings();
      const expired = warnings.filter((w) => (w.residency.daysToExpiry ?? 0) < 0).length;
      this.residency = { key, expired, expiring: warnings.length - expired };
    }
    return this.residency;
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  render(): Promise<string> {
    this.collect();
    return this.registry.metrics();
  }

  close(): void {
    this.unsubscribe();
    this.registry.clear();
  }
}

function gauge(registry: Registry, name: string, help: string, labelNames: string[]): Gauge {
  return new Gauge({ name, help, labelNames, registers: [registry] });
}

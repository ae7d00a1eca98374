import fs from 'node:fs';
import type { AdminAlertProvider, AdminMetricsProvider, AdminPanelProvider, OperationsAlert, OpsMetricName, PanelView } from '../admin/extensions';
import type { Agent, AgentService } from '../agent';
import type { Config } from '../config/schema';
import { storeFilePath } from '../store/database';
import { AppError, describeError } from '../errors';
import type { Logger } from '../log';
import { diskAlerts, diskPanel, formatBytes, localTime } from './panels';
import type { DiskLevel, DiskState } from './states';

/** How worried to be about free space (pure). */
export function classifyDisk(freeBytes: number, totalBytes: number, limits: Config['disk']): DiskLevel {
  if (freeBytes < limits.criticalFreeBytes) return 'critical';
  const percent = totalBytes > 0 ? (freeBytes / totalBytes) * 100 : 100;
  if (freeBytes < limits.warnFreeBytes || percent < limits.warnFreePercent) return 'low';
  return 'ok';
}

function sizeOf(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}

/** Free space on the data folder's disk (fs.statfs: available to this user), and the database's size. */
export type StatFs = (dir: string) => Pick<fs.StatsFs, 'bavail' | 'bsize' | 'blocks'>;

export function checkDisk(config: Readonly<Config>, now: Date = new Date(), statfs: StatFs = (dir) => fs.statfsSync(dir)): DiskState {
  // The three files (till, agent, staff) and their write-ahead logs: a small till file beside a
  // large agent.db WAL understated what the data folder holds.
  const files = (['till', 'agent', 'staff'] as const).map((kind) => storeFilePath(config.dataDir, kind));
  const base = { databaseBytes: files.reduce((n, f) => n + sizeOf(f), 0), walBytes: files.reduce((n, f) => n + sizeOf(`${f}-wal`), 0), checkedAt: now.toISOString() };
  let stats: ReturnType<StatFs>;
  try {
    stats = statfs(config.dataDir);
  } catch (err) {
    return { ...base, level: 'unknown', freeBytes: null, totalBytes: null, message: `cannot read free disk space: ${describeError(err)}` };
  }
  const freeBytes = Number(stats.bavail) * Number(stats.bsize);
  const totalBytes = Number(stats.blocks) * Number(stats.bsize);
  const level = classifyDisk(freeBytes, totalBytes, config.disk);
  const message =
    level === 'ok'
      ? null
      : `${level === 'critical' ? 'disk almost full' : 'disk space low'}: ${formatBytes(freeBytes)} free of ${formatBytes(totalBytes)} on the disk holding ${config.dataDir}` +
        ' — free some space: when the disk is full, updates from head office are refused (they will be resent) and backups fail';
  return { ...base, level, freeBytes, totalBytes, message };
}

/** Checks free space on a schedule and logs when it changes level (AgentService 'disk'). */
export class DiskService implements AgentService, AdminPanelProvider, AdminAlertProvider, AdminMetricsProvider {
  readonly name = 'disk';
  private timer: NodeJS.Timeout | null = null;
  private last: DiskState | null = null;

  constructor(
    private readonly config: Readonly<Config>,
    private readonly log: Logger,
    private readonly probe: (config: Readonly<Config>) => DiskState = checkDisk,
  ) {}

  async start(_agent: Agent): Promise<void> {
    this.check();
    this.timer = setInterval(() => this.check(), this.config.disk.checkIntervalMinutes * 60_000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  state(): DiskState {
    return this.last ?? this.check();
  }

  adminPanel(): PanelView {
    return diskPanel(this.state(), this.config.disk, localTime);
  }

  runAdminAction(id: string, _actor: string): { message: string } {
    if (id !== 'check') throw new AppError('not_found', 404, `disk space has no action ${id}`);
    const state = this.check();
    return { message: state.freeBytes === null ? (state.message ?? 'Free space cannot be read.') : `${formatBytes(state.freeBytes)} free${state.level === 'ok' ? '' : ` — ${state.level === 'critical' ? 'almost full' : 'low'}`}.` };
  }

  adminAlerts(): OperationsAlert[] {
    return diskAlerts(this.state());
  }

  /** As of the last check (every disk.checkIntervalMinutes): a scrape does not touch the disk. */
  metricValues(): Partial<Record<OpsMetricName, number | null>> {
    const s = this.state();
    const level = { ok: 0, low: 1, critical: 2, unknown: null }[s.level];
    return { pos_sync_disk_free_bytes: s.freeBytes, pos_sync_disk_level: level };
  }

  check(): DiskState {
    const next = this.probe(this.config);
    if (next.level !== this.last?.level) {
      if (next.level === 'ok') {
        if (this.last) this.log.info('disk space is fine again');
      } else if (next.level === 'critical') this.log.error(next.message);
      else this.log.warn(next.message);
    }
    this.last = next;
    return next;
  }
}

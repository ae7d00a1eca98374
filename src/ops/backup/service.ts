import type { AdminAlertProvider, AdminMetricsProvider, AdminPanelProvider, OperationsAlert, OpsMetricName, PanelView } from '../../admin/extensions';
import type { Agent, AgentService } from '../../agent';
import type { Config } from '../../config/schema';
import { AppError, describeError } from '../../errors';
import type { Logger } from '../../log';
import { backupAlerts, backupPanel, formatBytes, localTime } from '../panels';
import { backupDir } from '../paths';
import type { BackupFile, BackupState } from '../states';

import { listBackups } from './files';
import { backupDatabase } from './write';

/** The backup schedule while the agent runs, with its panel and alerts in the status window. */

/**
 * When the next scheduled backup is due (pure). Daily mode: the first `time` (machine-local) after the
 * last backup; a time missed while the machine was off or asleep makes it due at once. Interval mode:
 * `intervalHours` after the last one. No backup yet: due now.
 */
export function nextBackupDue(last: Date | null, options: { time: string; intervalHours: number | null }, now: Date): Date {
  if (last === null) return now;
  if (options.intervalHours !== null) return new Date(last.getTime() + options.intervalHours * 3_600_000);
  const [hh, mm] = options.time.split(':').map(Number) as [number, number];
  const due = new Date(last);
  due.setHours(hh, mm, 0, 0);
  if (due.getTime() <= last.getTime()) due.setDate(due.getDate() + 1);
  return due;
}

/** Takes the scheduled backups while the agent runs (AgentService 'backup'). */
export class BackupService implements AgentService, AdminPanelProvider, AdminAlertProvider, AdminMetricsProvider {
  readonly name = 'backup';
  private agent: Agent | null = null;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<BackupFile | null> | null = null;
  private lastError: string | null = null;

  constructor(
    private readonly config: Readonly<Config>,
    private readonly log: Logger,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  async start(agent: Agent): Promise<void> {
    this.agent = agent;
    this.timer = setInterval(() => void this.tick(), this.config.backup.checkIntervalMinutes * 60_000);
    this.timer.unref();
    // A backup missed while the machine was off is taken soon after start, not at the next check.
    setImmediate(() => void this.tick());
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running?.catch(() => null);
    this.agent = null;
  }

  /** Lists the backup folder (a few entries: backup.keep sets) on each scrape. */
  metricValues(now: Date): Partial<Record<OpsMetricName, number | null>> {
    const s = this.state();
    return {
      pos_sync_backup_last_age_seconds: s.lastBackup ? Math.max(0, (now.getTime() - Date.parse(s.lastBackup.takenAt)) / 1000) : null,
      pos_sync_backup_last_failed: s.lastError === null ? 0 : 1,
    };
  }

  state(): BackupState {
    const dir = backupDir(this.config);
    const lastBackup = listBackups(dir)[0] ?? null;
    return {
      dir,
      lastBackup,
      nextDueAt: nextBackupDue(lastBackup ? new Date(lastBackup.takenAt) : null, this.config.backup, this.clock()).toISOString(),
      lastError: this.lastError,
      running: this.running !== null,
    };
  }

  adminPanel(): PanelView {
    return backupPanel(this.state(), this.config.backup.keep, this.clock(), localTime);
  }

  async runAdminAction(id: string, actor: string): Promise<{ message: string }> {
    if (id !== 'backup-now') throw new AppError('not_found', 404, `backups have no action ${id}`);
    this.log.info(`backup requested from the status window by ${actor}`);
    const backup = await this.backupNow();
    if (!backup) throw new AppError('backup_failed', 500, `the backup failed: ${this.lastError ?? 'the database is not open'}`);
    return { message: `Backup written: ${backup.file} (${formatBytes(backup.bytes)}).` };
  }

  adminAlerts(): OperationsAlert[] {
    return backupAlerts(this.state(), this.clock());
  }

  /** Takes a backup now (the window's button and the schedule). */
  async backupNow(): Promise<BackupFile | null> {
    if (this.running) return this.running;
    const core = this.agent?.core;
    if (!core?.isOpen) return null;
    const sources = { agent: core.agentDb, till: core.tillDb, staff: this.config.backup.includeStaff ? core.staffDb : null };
    this.running = backupDatabase(sources, backupDir(this.config), this.config.backup.keep, this.clock())
      .then((b) => {
        this.lastError = null;
        this.log.info(`backup written: ${b.file} (${b.bytes} bytes${this.config.backup.includeStaff ? ', staff cache included' : ''})`);
        return b;
      })
      .catch((err: unknown) => {
        this.lastError = describeError(err);
        this.log.error(`backup failed: ${this.lastError}`);
        return null;
      })
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  private async tick(): Promise<void> {
    if (!this.agent || this.running) return;
    const now = this.clock();
    const last = listBackups(backupDir(this.config))[0];
    if (nextBackupDue(last ? new Date(last.takenAt) : null, this.config.backup, now).getTime() <= now.getTime()) await this.backupNow();
  }
}

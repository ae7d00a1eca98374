import path from 'node:path';
import type { AdminPanelProvider, PanelItem, PanelView } from '../admin/extensions';
import type { Agent, AgentService } from '../agent';
import type { Config } from '../config/schema';
import { AppError } from '../errors';
import type { Logger } from '../log';
import { defaultDiagnosticsFile, writeDiagnostics, type DiagnosticsResult } from './diagnostics';
import { formatBytes, localTime } from './panels';

/**
 * The "Support" panel of the status window (AgentService 'ops'): the diagnostics button, and what the
 * other operations panels cannot say because their service is not running (no tunnel configured,
 * backups or retention switched off).
 */
export class SupportService implements AgentService, AdminPanelProvider {
  readonly name = 'ops';
  private lastDiagnostics: (DiagnosticsResult & { at: string }) | null = null;
  private writing: Promise<DiagnosticsResult> | null = null;

  constructor(
    private readonly config: Readonly<Config>,
    private readonly log: Logger,
  ) {}

  async start(_agent: Agent): Promise<void> {}

  async stop(): Promise<void> {
    await this.writing?.catch(() => null);
  }

  /** Writes the support zip (the same writer as `pos-sync-agent diagnose`); one at a time. */
  async writeDiagnostics(): Promise<DiagnosticsResult> {
    if (this.writing) return this.writing;
    const now = new Date();
    this.writing = writeDiagnostics(this.config, defaultDiagnosticsFile(this.config, now), now)
      .then((result) => {
        this.lastDiagnostics = { ...result, at: now.toISOString() };
        this.log.info(`diagnostics written: ${result.file} (${result.bytes} bytes)`);
        return result;
      })
      .finally(() => {
        this.writing = null;
      });
    return this.writing;
  }

  adminPanel(): PanelView {
    const items: PanelItem[] = [];
    if (!this.config.tunnel) {
      items.push({
        label: 'Tunnel',
        value: this.config.admin.publicWebhookUrl
          ? `not configured — head office reaches this PC through ${this.config.admin.publicWebhookUrl} (set up by IT)`
          : 'not configured — head office can only reach this PC if IT has set up another way in',
      });
    }
    if (!this.config.backup.enabled) items.push({ label: 'Backups', value: 'switched off in the configuration', level: 'warn' });
    if (!this.config.retention.enabled) items.push({ label: 'Retention', value: 'switched off in the configuration: nothing is pruned', level: 'warn' });
    items.push({ label: 'Diagnostics folder', value: path.join(this.config.dataDir, 'diagnostics') });
    items.push({
      label: 'Last diagnostics',
      value: this.lastDiagnostics ? `${this.lastDiagnostics.file} (${formatBytes(this.lastDiagnostics.bytes)}, ${localTime(this.lastDiagnostics.at)})` : 'none written since the agent started',
    });
    return {
      title: 'Support',
      items,
      actions: [{ id: 'write-diagnostics', label: 'Write diagnostics', confirm: null }],
    };
  }

  async runAdminAction(id: string, actor: string): Promise<{ message: string }> {
    if (id !== 'write-diagnostics') throw new AppError('not_found', 404, `the support panel has no action ${id}`);
    this.log.info(`diagnostics requested from the status window by ${actor}`);
    const result = await this.writeDiagnostics();
    return { message: `Diagnostics written to ${result.file} (${formatBytes(result.bytes)}). Send this file to support; it holds no personal data.` };
  }
}

import type { Agent, AgentService } from '../agent';
import type { Config } from '../config/schema';
import { clockTime } from '../domain/local-time';
import { redactor, type Logger } from '../log';
import type { AgentMetrics } from './metrics';
import { defaultRendererDir, startAdminServer, type RunningAdminServer } from './server';
import { buildStatusReply } from './status-reply';
import { UiSettingsStore, type UiSettings } from './settings';
import { severityOf, type Summary } from './summary';
import { rotateToken, TokenSource, tokenFilePath } from './token';
import type { SecretsBridge } from './routes/secrets';

/**
 * AgentMetrics, loaded on first use: only a site with a metrics token pays for prom-client and its
 * dependencies, which otherwise stay a resident cost of every idle agent (docs/performance.md).
 */
function loadMetrics(): typeof AgentMetrics {
  return (require('./metrics') as typeof import('./metrics')).AgentMetrics;
}

/** Services whose panel (if they implement AdminPanelProvider) the window's Operations section shows. */
export const DEFAULT_PANEL_SERVICES: readonly string[] = ['exposure', 'tunnel', 'disk', 'backup', 'retention', 'clock', 'ops'];

export interface AdminServiceOptions {
  readonly shell?: 'browser' | 'electron';
  /** Told the one-time login URL once the server listens (headless: printed to the console). */
  readonly announce?: (loginUrl: string) => void;
  readonly rendererDir?: string;
  /** Services that may add a panel to the window (see extensions.ts). */
  readonly panelServices?: readonly string[];
  readonly onSettingsChanged?: (settings: UiSettings) => void;
  /** Desktop app: secrets set in the window go through the shell (routes/secrets.ts). */
  readonly secrets?: SecretsBridge;
}

/**
 * The status window's server as an agent service ('admin'): a loopback-only listener separate from
 * the webhook, with its own per-install token.
 */
export class AdminService implements AgentService {
  readonly name = 'admin';
  private running: RunningAdminServer | null = null;
  private agent: Agent | null = null;
  private settingsStore: UiSettingsStore | null = null;
  private metrics: AgentMetrics | null = null;

  constructor(
    private readonly log: Logger,
    private readonly options: AdminServiceOptions = {},
  ) {}

  private get config(): Readonly<Config> {
    if (!this.agent) throw new Error('the admin service is not started');
    return this.agent.config;
  }

  async start(agent: Agent): Promise<void> {
    this.agent = agent;
    // Re-read when `admin-url --rotate` replaces it; each token is redacted from every log line.
    const tokens = new TokenSource(tokenFilePath(this.config.dataDir, this.config.admin.tokenFile), (token) => redactor.add(token));
    this.settingsStore = new UiSettingsStore(this.config.dataDir);
    const metricsToken = this.config.metrics.bearerToken;
    const panelServices = this.options.panelServices ?? DEFAULT_PANEL_SERVICES;
    // Off until a metrics token is set: no figures are collected and /metrics is an unknown path.
    this.metrics = metricsToken === null ? null : new (loadMetrics())({ agent, log: this.log, services: panelServices });
    if (metricsToken !== null) redactor.add(metricsToken);
    this.running = await startAdminServer(
      {
        agent,
        token: () => tokens.current(),
        settings: this.settingsStore,
        rendererDir: this.options.rendererDir ?? defaultRendererDir(),
        shell: this.options.shell ?? 'browser',
        log: this.log,
        panelServices,
        ...(this.metrics && metricsToken !== null ? { metrics: { token: metricsToken, contentType: this.metrics.contentType, render: () => this.metrics!.render(), refused: (reason) => this.metrics!.refused(reason) } } : {}),
        ...(this.options.onSettingsChanged ? { onSettingsChanged: this.options.onSettingsChanged } : {}),
        ...(this.options.secrets ? { secrets: this.options.secrets } : {}),
      },
      { host: this.config.admin.host, port: this.config.admin.port, fresh: this.config.admin.newAddressEachStart },
    );
    if (this.metrics && this.config.metrics.throughTunnel) {
      await agent.forwardMetrics(Number(new URL(this.running.url).port));
      this.log.info('GET /metrics is also answered on the webhook listener (metrics.throughTunnel)');
    }
    // The log gets the address without the token; only `announce` sees the login URL.
    this.log.info(`status window at ${this.running.url} (open the login address printed on the console)`);
    this.options.announce?.(this.running.loginUrl);
  }

  /** The server's address without the token. */
  get url(): string | null {
    return this.running?.url ?? null;
  }

  /** A fresh one-time login link (see security.ts); for the Electron window and the console only. */
  get loginUrl(): string | null {
    return this.running?.loginUrl ?? null;
  }

  /**
   * A one-time login link for whoever asked on the control channel (ops/control-access.ts); `rotate`
   * first replaces the token, as `admin-url --rotate` does, so every open session and unused link ends.
   */
  loginLink(rotate: boolean): { url: string; expiresAt: Date } | null {
    if (!this.running) return null;
    if (rotate) rotateToken(tokenFilePath(this.config.dataDir, this.config.admin.tokenFile));
    return this.running.loginLink();
  }

  get settings(): UiSettings | null {
    return this.settingsStore?.get() ?? null;
  }

  /** Changes manager settings from outside the window (the tray's "Start at login"). */
  updateSettings(patch: Partial<UiSettings>): UiSettings | null {
    if (!this.settingsStore) return null;
    const next = this.settingsStore.update(patch);
    this.options.onSettingsChanged?.(next);
    return next;
  }

  /** The severity model for the tray (the same reply and model as the window). */
  summary(now: Date = new Date()): Summary | null {
    if (!this.agent || !this.agent.core.isOpen) return null;
    const reply = buildStatusReply(this.agent, this.options.panelServices ?? DEFAULT_PANEL_SERVICES, this.log, now);
    return severityOf(reply, now, clockTime);
  }

  async stop(): Promise<void> {
    if (this.metrics && this.agent?.config.metrics.throughTunnel) await this.agent.forwardMetrics(null).catch(() => undefined);
    await this.running?.close();
    this.running = null;
    this.metrics?.close();
    this.metrics = null;
  }
}

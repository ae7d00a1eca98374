import type { AdminAlertProvider, OperationsAlert } from '../admin/extensions';
import { cliCommand } from '../config/invocation';
import type { AgentService } from '../agent';
import type { Config } from '../config/schema';
import type { Logger } from '../log';
import { webhookExposure } from '../webhook/exposure';

export const EXPOSURE_ALERT: OperationsAlert = {
  id: 'exposure',
  light: 'red',
  title: 'Anyone who finds this address can change your prices.',
  text: 'The webhook is reachable from outside this PC without a token (webhook.allowUnauthenticated is on). Ask head office for a bearer token and set webhook.bearerToken.',
};

/**
 * The site chose to take updates without a token on a loopback-only webhook: every account and program
 * on this PC (and whoever a tunnel set up outside the agent lets in) can change prices. Red as well.
 */
export const LOCAL_OPEN_ALERT: OperationsAlert = {
  id: 'exposure',
  light: 'red',
  title: 'Any program or account on this PC can change your prices.',
  // Read when shown, not at load: the commands carry the --config this process was started with
  // (set by the entry point after this module is loaded), so they reach this site as printed.
  get text(): string {
    return (
      `The webhook takes updates without a token (webhook.allowUnauthenticated is on). Give head office the token from \`${cliCommand('secrets show webhook.bearerToken')}\` ` +
      `(make one with \`${cliCommand('secrets generate webhook.bearerToken')}\` first if there is none), then turn webhook.allowUnauthenticated off.`
    );
  },
};

/** Keeps the red alert up while the receiver takes updates without a token (AgentService 'exposure'). */
export class ExposureService implements AgentService, AdminAlertProvider {
  readonly name = 'exposure';

  constructor(
    private readonly config: Readonly<Config>,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    const e = webhookExposure(this.config);
    if (e.openToAnyone) this.log.warn(`webhook open to anyone: ${e.because.join(', ')}, no bearer token, webhook.allowUnauthenticated is true`);
    else if (this.config.webhook.bearerToken === null && this.config.webhook.allowUnauthenticated) {
      this.log.warn('webhook takes updates without a token (webhook.allowUnauthenticated is true): any account or program on this PC can change prices');
    }
  }

  async stop(): Promise<void> {}

  adminAlerts(): OperationsAlert[] {
    if (webhookExposure(this.config).openToAnyone) return [EXPOSURE_ALERT];
    return this.config.webhook.bearerToken === null && this.config.webhook.allowUnauthenticated ? [LOCAL_OPEN_ALERT] : [];
  }
}

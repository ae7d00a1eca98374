import type { AdminAlertProvider, OperationsAlert } from '../admin/extensions';
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

/** Keeps the red alert up while the receiver is open to anyone (AgentService 'exposure'). */
export class ExposureService implements AgentService, AdminAlertProvider {
  readonly name = 'exposure';

  constructor(
    private readonly config: Readonly<Config>,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    const e = webhookExposure(this.config);
    if (e.openToAnyone) this.log.warn(`webhook open to anyone: ${e.because.join(', ')}, no bearer token, webhook.allowUnauthenticated is true`);
  }

  async stop(): Promise<void> {}

  adminAlerts(): OperationsAlert[] {
    return webhookExposure(this.config).openToAnyone ? [EXPOSURE_ALERT] : [];
  }
}

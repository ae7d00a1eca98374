import type { Config } from './config/schema';
import { AgentCore } from './core';
import { describeError } from './errors';
import type { Logger } from './log';
import { startWebhookServer, type RunningServer } from './webhook/server';

/** Something the agent starts after the core and stops before closing it (admin UI, staff sync, tunnel...). */
export interface AgentService {
  readonly name: string;
  start(agent: Agent): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Composes the running agent: core (database, inbox, applier), the webhook receiver, the applier's
 * schedule, and any extra services. Start and stop; nothing else lives here.
 */
export class Agent {
  readonly core: AgentCore;
  webhook: RunningServer | null = null;
  private pollTimer: NodeJS.Timeout | null = null;
  private drainScheduled = false;
  private readonly started: AgentService[] = [];
  /** Until every part has started, the webhook answers 503 "starting": no 200 from a half-started agent. */
  private ready = false;

  constructor(
    readonly config: Readonly<Config>,
    readonly log: Logger,
    private readonly services: readonly AgentService[] = [],
  ) {
    this.core = new AgentCore(config, log);
  }

  /** A started service by name (the admin UI finds the staff service this way). */
  service<T extends AgentService>(name: string): T | undefined {
    return this.started.find((s) => s.name === name) as T | undefined;
  }

  get isPaused(): boolean {
    return this.core.paused;
  }

  async start(): Promise<void> {
    const { config, log } = this;
    if (config.webhook.expectedOrigin === null) log.warn('webhook.expectedOrigin is not set: the Origin header of incoming calls is not checked');
    if (config.webhook.bearerToken === null) log.info('webhook.bearerToken is not set: calls need no Authorization header');
    // Finish whatever a previous run (or a crash) left pending before taking new deliveries.
    this.scheduleDrain();
    this.webhook = await startWebhookServer({
      config: config.webhook,
      inbox: this.core.inbox,
      log,
      isReady: () => this.ready,
      onStored: (outcome) => {
        if (outcome.decision === 'new') this.core.applier.remember(outcome.inboxId, outcome.body);
        this.scheduleDrain();
      },
    });
    log.info(`webhook receiver listening at ${this.webhook.url}`);
    this.pollTimer = setInterval(() => this.scheduleDrain(), config.sync.pollIntervalMs);
    this.pollTimer.unref();
    for (const service of this.services) {
      await service.start(this);
      this.started.push(service);
    }
    this.ready = true;
  }

  /** Pause applying (deliveries are still stored and acknowledged); resume picks up where it was. */
  setPaused(paused: boolean): void {
    this.core.paused = paused;
    this.log.info(paused ? 'applying updates paused by operator' : 'applying updates resumed');
    if (!paused) this.scheduleDrain();
  }

  /** Coalesces many "something arrived" cues into one drain on the next turn of the event loop. */
  scheduleDrain(): void {
    if (this.drainScheduled || this.core.paused) return;
    this.drainScheduled = true;
    setImmediate(() => {
      this.drainScheduled = false;
      if (this.core.paused || !this.core.db.open) return;
      try {
        this.core.drain();
      } catch (err) {
        this.log.error(`applier: ${describeError(err)}`);
      }
    });
  }

  async stop(): Promise<void> {
    this.ready = false;
    if (this.pollTimer) clearInterval(this.pollTimer);
    for (const service of this.started.reverse()) {
      try {
        await service.stop();
      } catch (err) {
        this.log.error(`stopping ${service.name}: ${describeError(err)}`);
      }
    }
    this.started.length = 0;
    await this.webhook?.close();
    this.webhook = null;
    this.core.close();
  }
}

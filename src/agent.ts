import v8 from 'node:v8';
import { sitePolicyOf, type Config } from './config/schema';
import { AgentCore, importDelivery } from './core';
import { AppError, describeError } from './errors';
import type { Logger } from './log';
import { sweepBodyFiles, writeBodyFile } from './store/body-files';
import { preparedStatement } from './store/database';
import type { ThreadHeap } from './threads/thread-client';
import { quarantineBudget, type ReceiptOutcome } from './store/inbox';
import type { InboxClient } from './store/inbox-client';
import type { AppliedUpdate, ApplyProgress } from './sync/applier';
import { APPLIER_REST_AFTER_MS, ApplierHost } from './sync/applier-host';
import { leftOverAtStart } from './sync/resume';
import { resumeText, type ResumeNote } from './domain/wording';
import { applyingMark, clearApplying, setResumeNote } from './store/operations-state';
import { RefusalCounter } from './webhook/refusals';
import { ReceiverHost } from './webhook/receiver-host';
import type { LoopDelay } from './webhook/receiver-protocol';

/** Something the agent starts after the core and stops before closing it (admin UI, staff sync, tunnel...). */
export interface AgentService {
  readonly name: string;
  start(agent: Agent): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Composes the running agent: core (the three files), the webhook's thread (receiver and inbox), the
 * applier thread and its schedule, and any extra services (on this, the main thread). The webhook's
 * thread writes only agent.db and never waits for an apply; every change to the menu (deliveries,
 * imports, force-applies) goes through the one applier thread.
 */
export class Agent {
  readonly core: AgentCore;
  readonly applier: ApplierHost;
  /** The webhook receiver and the inbox, on a thread of their own (src/webhook/receiver-worker.ts). */
  private receiver: ReceiverHost | null = null;
  /** Refused webhook calls, counted per reason and minute (webhook/refusals.ts). */
  readonly refusals: RefusalCounter;
  private pollTimer: NodeJS.Timeout | null = null;
  private refusalTimer: NodeJS.Timeout | null = null;
  /** Told of every update the applier thread applies (an import collects what its drain applied). */
  private readonly appliedListeners = new Set<(update: AppliedUpdate) => void>();
  private readonly started: AgentService[] = [];
  private stopping = false;
  private stored = 0;
  /** Large imports whose body file is being written on this thread (see sweepBodyFiles). */
  private importsInFlight = 0;
  /** What this start found left by the previous run, until a drain has applied it (src/sync/resume.ts). */
  private resume: ResumeNote | null = null;

  constructor(
    readonly config: Readonly<Config>,
    readonly log: Logger,
    private readonly services: readonly AgentService[] = [],
    /** How long the applier thread stays after its last request (tests shorten it). */
    applierRestAfterMs: number = APPLIER_REST_AFTER_MS,
  ) {
    this.core = new AgentCore(config, log, { applier: 'none' });
    this.refusals = new RefusalCounter(log);
    this.applier = new ApplierHost(
      { dataDir: config.dataDir, policy: config.sync.baseline, baselineSettleMs: config.sync.baselineSettleSeconds * 1000, timezones: { locations: config.locations, defaultTimezone: config.defaultTimezone }, priority: config.sync.applyPriority, site: sitePolicyOf(config) },
      log,
      {
        applied: (u) => {
          this.progress = null;
          this.core.logApplied(u);
          for (const listener of this.appliedListeners) listener(u);
        },
        failed: (locationId, inboxId, message) => {
          this.progress = null;
          log.error(`applying update #${inboxId} for location ${locationId} failed; will retry: ${message}`);
        },
        reconciled: (inboxId) => log.warn(`update #${inboxId} was applied to the till before a stop; its inbox record is now complete`),
        // The thread ended mid-apply: recorded as that update's failure, as the applier records one
        // (the 'applying' note cleared: it failed, it was not cut short by a stop).
        interrupted: (message) => {
          const mark = applyingMark(this.core.agentDb);
          if (!mark) return null;
          this.core.agentDb.transaction(() => {
            clearApplying(this.core.agentDb);
            preparedStatement<[string, number]>(this.core.agentDb, "UPDATE inbox SET note = ? WHERE id = ? AND state = 'pending'").run(`apply failed: ${message}`, mark.inboxId);
          }).immediate();
          return { locationId: mark.locationId, inboxId: mark.inboxId };
        },
        progress: (p) => {
          this.progress = p.done >= p.total ? null : p;
          for (const listener of this.progressListeners) listener(p);
        },
      },
      applierRestAfterMs,
    );
  }

  /** Where deliveries and imports are stored: the webhook's thread holds the inbox (its own agent.db connection). */
  get inbox(): InboxClient {
    if (!this.receiver) throw new AppError('agent_not_started', 503, 'the agent is not running');
    return this.receiver.inbox;
  }

  /** Where the receiver listens (its URL, path included); null until it does. */
  get webhook(): { readonly url: string } | null {
    const url = this.receiver?.url ?? null;
    return url === null ? null : { url };
  }

  /** The receiver thread's event-loop delay between a `start` and a `stop` (benchmarks, diagnostics). */
  /** Each thread's V8 heap, the main thread's included (npm run bench: what each thread costs). */
  async threadHeaps(): Promise<Record<string, ThreadHeap | null>> {
    const main = v8.getHeapStatistics();
    return {
      main: { totalHeapBytes: main.total_heap_size, usedHeapBytes: main.used_heap_size, externalBytes: main.external_memory },
      receiver: (await this.receiver?.heapStatistics()) ?? null,
      applier: await this.applier.heapStatistics(),
    };
  }

  async receiverLoopDelay(action: 'start' | 'stop'): Promise<LoopDelay | null> {
    if (!this.receiver) throw new AppError('agent_not_started', 503, 'the webhook receiver is not running');
    return this.receiver.loopDelay(action);
  }

  /** Deliveries the webhook receiver stored since this start (accepted calls; refusals are in `refusals`). */
  get storedDeliveries(): number {
    return this.stored;
  }

  /** Tells `listener` of every update the applier thread applies from now on; returns the unsubscribe. */
  onApplied(listener: (update: AppliedUpdate) => void): () => void {
    this.appliedListeners.add(listener);
    return () => void this.appliedListeners.delete(listener);
  }

  /** Has the webhook's listener answer GET /metrics by forwarding to the status window's server on `adminPort` (null: stop; metrics.throughTunnel). */
  async forwardMetrics(adminPort: number | null): Promise<void> {
    await this.receiver?.setMetricsTarget(adminPort);
  }

  /** The apply under way (items written of its total), null between applies. */
  private progress: ApplyProgress | null = null;
  /** Told of each progress report of the applier thread (an import prints them). */
  readonly progressListeners = new Set<(p: ApplyProgress) => void>();

  /** When each update whose apply failed is tried again by itself (the status reply shows it). */
  applyRetries(): { inboxId: number; retryAt: string }[] {
    return this.applier.retries();
  }

  get applyProgress(): ApplyProgress | null {
    return this.progress;
  }

  /** A started service by name (the admin UI finds the staff service this way). */
  service<T extends AgentService>(name: string): T | undefined {
    return this.started.find((s) => s.name === name) as T | undefined;
  }

  /** Durable (agent.db): survives a restart, and the CLI's import honours it. */
  get isPaused(): boolean {
    return this.core.isOpen && this.core.paused;
  }

  async start(): Promise<void> {
    const { config, log } = this;
    if (config.webhook.expectedOrigin === null) log.warn('webhook.expectedOrigin is not set: the Origin header of incoming calls is not checked');
    if (config.webhook.bearerToken === null) log.info('webhook.bearerToken is not set: calls need no Authorization header');
    if (this.core.paused) log.warn('applying updates is paused (by an operator, before this start): deliveries are stored but not applied');
    // Body files no row names: a crash came between writing one and committing its row (the sender
    // was not answered 200 and sends again). Only here, before the receiver writes any.
    this.sweepBodyFiles();
    await this.applier.start();
    // An apply the previous run stopped during, or updates it left queued: said now (the log), and in
    // `status` and the window until the first drain has applied them.
    this.resume = leftOverAtStart(this.core.agentDb, this.core.tillDb, this.core.status(), new Date());
    setResumeNote(this.core.agentDb, this.resume);
    if (this.resume) log.info(resumeText(this.resume, this.core.paused ? 'paused' : 'running'));
    // Finish whatever a previous run (or a crash) left pending before taking new deliveries. That
    // drain sees agent.db as it is now: the poll looks for changes after this point only.
    this.seenDataVersion = this.core.agentDb.pragma('data_version', { simple: true }) as number;
    this.scheduleDrain();
    this.receiver = new ReceiverHost({
      config: config.webhook,
      dataDir: config.dataDir,
      quarantine: quarantineBudget(config),
      log,
      refusals: this.refusals,
      onStored: () => {
        this.stored += 1;
        this.scheduleDrain();
      },
      // The thread that ended may have left the file of a body it was receiving (its sender got no
      // 200 and sends again): gone before the new thread receives any, as at a start.
      beforeRestart: () => this.sweepBodyFiles(),
    });
    try {
      await this.receiver.start();
    } catch (err) {
      // A receiver that could not listen (a busy port) must not keep the process alive.
      await this.receiver.close();
      this.receiver = null;
      throw err;
    }
    this.refusalTimer = setInterval(() => this.refusals.roll(), 15_000);
    this.refusalTimer.unref();
    log.info(`webhook receiver listening at ${this.receiver.url}`);
    this.pollTimer = setInterval(() => {
      if (this.workWaiting()) this.scheduleDrain();
    }, config.sync.pollIntervalMs);
    this.pollTimer.unref();
    for (const service of this.services) {
      await service.start(this);
      this.started.push(service);
    }
    // Until every part has started, the webhook answers 503 "starting": no 200 from a half-started agent.
    await this.receiver.setReady(true);
  }

  /** Pause applying (deliveries are still stored and acknowledged); resume picks up where it was. */
  setPaused(paused: boolean, actor = 'operator', reason: string | null = null): void {
    if (!this.core.setPaused(paused, actor, reason)) return;
    this.log.info(paused ? `applying updates paused by ${actor}` : `applying updates resumed by ${actor}`);
    this.scheduleDrain();
  }

  /**
   * Removes body files no row names: a crash (of the agent, or of the webhook thread) came between
   * writing one and committing its row, and the sender was not answered 200 and sends again. Only
   * while no receipt is under way: at a start, and before a new webhook thread listens unless an
   * import is writing its file here.
   */
  private sweepBodyFiles(): void {
    const { config, log } = this;
    // An import writing its file on this thread: that file is no row's yet. Swept at the next chance.
    if (this.importsInFlight > 0) return;
    try {
      const swept = sweepBodyFiles(this.core.agentDb, config.dataDir);
      if (swept.removed > 0) log.info(`removed ${swept.removed} body file${swept.removed === 1 ? '' : 's'} that no update names (an interrupted receipt, whose sender was not answered and sends again, or a pruned body)`);
      if (swept.held.length > 0) log.warn(`could not remove ${swept.held.length} body file${swept.held.length === 1 ? '' : 's'} that no update names, e.g. ${swept.held[0]}: another program has it open; it is removed at a later start`);
    } catch (err) {
      log.error(`body files: ${describeError(err)}`);
    }
  }

  /** Asks the applier thread to apply what it can; many cues coalesce into one drain. */
  scheduleDrain(): void {
    if (this.stopping) return;
    this.applier.drain().then(
      () => this.resumeDone(),
      (err: unknown) => {
        // A thread that ended is logged once, where its end is noticed (ApplierHost).
        if (err instanceof AppError && err.id === 'applier_stopped') return;
        this.log.error(`applier: ${describeError(err)}`);
      },
    );
  }

  /** agent.db's data_version at the last poll (it changes whenever another connection commits). */
  private seenDataVersion: number | null = null;

  /**
   * The poll's question, asked on this thread so that an agent with nothing to do lets the applier
   * thread rest: has another connection changed agent.db since the last poll (a delivery, a CLI
   * import, acknowledged warnings, a resolved conflict, whose counts the till's pos_sync_state
   * shows), or is an update waiting that is due without such a change (applying not paused; a
   * baseline's settle deadline, a failure to retry: ApplierHost.waitingDue)? Updates that wait for a
   * missing parent are not: the thread rests through a chain gap.
   */
  private workWaiting(): boolean {
    try {
      const db = this.core.agentDb;
      const version = db.pragma('data_version', { simple: true }) as number;
      const changed = version !== this.seenDataVersion;
      this.seenDataVersion = version;
      if (changed) return true;
      if (this.core.paused || !this.applier.waitingDue(Date.now())) return false;
      return preparedStatement(db, "SELECT 1 FROM inbox WHERE state = 'pending' LIMIT 1").get() !== undefined;
    } catch (err) {
      // Storage trouble: let the applier thread meet it and report it as it does.
      this.log.error(`poll: ${describeError(err)}`);
      return true;
    }
  }

  /** What this start is resuming (shown by `status` and the window), null once applied. */
  get resuming(): ResumeNote | null {
    return this.resume;
  }

  /**
   * After a drain: one that ran unpaused has applied what the previous run left, unless the
   * interrupted update failed again (it stays "resuming", beside the failure, until it is applied or
   * set aside).
   */
  private resumeDone(): void {
    if (!this.resume || this.stopping || !this.core.isOpen || this.core.paused) return;
    try {
      const i = this.resume.interrupted;
      if (i && preparedStatement(this.core.agentDb, "SELECT 1 FROM inbox WHERE location_id = ? AND change_sequence = ? AND state = 'pending'").get(i.locationId, i.changeSequence)) return;
      this.resume = null;
      setResumeNote(this.core.agentDb, null);
      this.log.info('finished resuming what the agent left when it stopped');
    } catch (err) {
      this.log.error(`resume note: ${describeError(err)}`);
    }
  }

  /** Applies what the chain allows now and resolves when done (tests, the CLI's hand-off). */
  drainNow(): Promise<AppliedUpdate[]> {
    return this.applier.drain();
  }

  /** A manual delivery: stored like a webhook call (agent.db), then applied by the applier thread. */
  async importPayload(raw: Buffer, actor: string): Promise<{ outcome: ReceiptOutcome; applied: AppliedUpdate[] }> {
    const bytes = raw.length;
    // Everything applied from the store until this drain ends, whichever drain applied it: a poll or
    // a delivery's drain may take the import's update first (the drains coalesce).
    const applied: AppliedUpdate[] = [];
    const listener = (u: AppliedUpdate): void => void applied.push(u);
    this.appliedListeners.add(listener);
    try {
      const outcome = await this.storeImport(raw, actor);
      this.core.auditImport(outcome, bytes, actor);
      await this.applier.drain();
      return { outcome, applied };
    } finally {
      this.appliedListeners.delete(listener);
    }
  }

  /**
   * An import is stored as a webhook call would be: a body of at least webhook.fileBodyFromBytes goes
   * to a file of its own first and is checked in slices on the webhook thread, so deliveries arriving
   * meanwhile are answered during its check instead of after it.
   */
  private async storeImport(raw: Buffer, actor: string): Promise<ReceiptOutcome> {
    const delivery = importDelivery(raw, actor);
    // Before the file is written: an agent that is not running refuses without leaving one behind.
    const inbox = this.inbox;
    if (raw.length < this.config.webhook.fileBodyFromBytes) return inbox.receive(delivery);
    // Counted while its file is named by no row yet: a sweep then would take it (sweepBodyFiles).
    this.importsInFlight += 1;
    try {
      const file = await writeBodyFile(this.config.dataDir, raw);
      const { raw: _inMemory, ...rest } = delivery;
      return await inbox.receiveFile({ ...rest, file });
    } finally {
      this.importsInFlight -= 1;
    }
  }

  forceApply(inboxId: number, actor: string, reason: string): Promise<{ forced: AppliedUpdate; then: AppliedUpdate[] }> {
    return this.applier.forceApply(inboxId, actor, reason);
  }

  acknowledgeWarnings(actor: string, locationId: number | null): number {
    const n = this.core.acknowledgeWarnings(actor, locationId);
    // The till's pos_sync_state.warnings is refreshed by the applier thread.
    this.scheduleDrain();
    return n;
  }

  async stop(): Promise<void> {
    await this.receiver?.setReady(false).catch(() => undefined);
    if (this.pollTimer) clearInterval(this.pollTimer);
    if (this.refusalTimer) clearInterval(this.refusalTimer);
    for (const service of this.started.reverse()) {
      try {
        await service.stop();
      } catch (err) {
        this.log.error(`stopping ${service.name}: ${describeError(err)}`);
      }
    }
    this.started.length = 0;
    await this.receiver?.close();
    this.receiver = null;
    this.refusals.close();
    this.stopping = true;
    await this.applier.close();
    this.core.close();
  }
}

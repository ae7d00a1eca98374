import fs from 'node:fs';
import os from 'node:os';
import { sitePolicyOf, type Config } from './config/schema';
import { todayIn, type IsoDate } from './domain/dates';
import { cachedLocationTimezone, locationDescription } from './employees/locations';
import { AppError } from './errors';
import type { Logger } from './log';
import { Applier, type AppliedUpdate, type ApplyProgress } from './sync/applier';
import { preparedStatement, type Db } from './store/database';
import { Inbox, quarantineBudget, quarantineLimits, type ReceiptOutcome } from './store/inbox';
import { pauseState, setPaused, type PauseState } from './store/operations-state';
import { acknowledgeWarnings, locationStatuses, recentDeliveries, type LocationStatus, type TillAnswer } from './store/queries';
import { lookupPlu } from './till/lookup';
import { notYetOnTillNotes } from './domain/wording';
import { configuredTimezone, locationToday } from './till/location-time';
import { closeStore, openStore, type StoreConnections } from './store/store';

/** Who did an operator action, for the audit log. */
export function operatorName(): string {
  try {
    return `${os.userInfo().username}@${os.hostname()}`;
  } catch {
    return 'operator';
  }
}

export interface CoreOptions {
  /**
   * in-process: this process applies (the CLI when no agent runs, tests); none: another thread does
   * (`serve` runs the applier in a worker thread, src/sync/applier-host.ts).
   */
  readonly applier?: 'in-process' | 'none';
  /**
   * A data folder an older version left: `upgrade` it (the agent's start, the default), or `refuse` it
   * (`site_not_upgraded`) and change nothing: every CLI command that opens the folder (docs/operations.md,
   * "Upgrade"; src/store/upgrade.ts).
   */
  readonly olderData?: 'upgrade' | 'refuse';
}

/**
 * The agent without its servers: the three data files, the inbox and (in-process) the applier, and
 * the operations the CLI, the admin API and the status window share. Opening it splits a 0.1 data
 * folder once, migrates the files (or, for a command, refuses a folder an older agent left: see
 * CoreOptions.olderData), or refuses files written by a newer agent.
 */
export class AgentCore {
  readonly store: StoreConnections;
  readonly inbox: Inbox;
  /** Told of the in-process applier's progress (items written of the total), e.g. by `import`. */
  readonly progressListeners = new Set<(p: ApplyProgress) => void>();
  /** Null when another thread applies (see CoreOptions). */
  readonly applier: Applier | null;

  constructor(
    readonly config: Readonly<Config>,
    readonly log: Logger,
    options: CoreOptions = {},
  ) {
    const inProcess = (options.applier ?? 'in-process') === 'in-process';
    this.store = openStore(config.dataDir, {
      olderData: options.olderData ?? 'upgrade',
      onSplit: (r) =>
        log.info(
          `data folder split into pos-sync.db (till), agent.db and staff.db: ${r.inboxRows} stored updates, ${r.priceRanges} price ranges, ` +
            `${r.staffEmployees} cached employees moved; the 0.1 file is kept as ${r.backupFile}`,
        ),
      // The receiver's connection never checkpoints agent.db on the HTTP loop; the applier thread does.
      autoCheckpoint: inProcess ? {} : { agent: false },
    });
    this.inbox = new Inbox(this.store.agent, quarantineLimits(config.dataDir, quarantineBudget(config)));
    this.applier = inProcess
      ? new Applier(
          this.store.till,
          this.store.agent,
          config.sync.baseline,
          {
            applied: (u) => this.logApplied(u),
            failed: (locationId, inboxId, err) => log.error(`applying update #${inboxId} for location ${locationId} failed; will retry:`, err),
            progress: (p) => {
              for (const listener of this.progressListeners) listener(p);
            },
          },
          config.sync.baselineSettleSeconds * 1000,
          (locationId) => configuredTimezone(config, locationId),
          Date.now,
          sitePolicyOf(config),
        )
      : null;
  }

  /** The till's file (menu rows and views). Read here; written only by the applier. */
  get tillDb(): Db {
    return this.store.till;
  }

  /** agent.db: inbox, deliveries, quarantine, warnings, audit, operations state. */
  get agentDb(): Db {
    return this.store.agent;
  }

  /** staff.db: the staff cache. */
  get staffDb(): Db {
    return this.store.staff;
  }

  get isOpen(): boolean {
    return this.store.agent.open;
  }

  logApplied(u: AppliedUpdate): void {
    this.log.info(
      `applied location ${u.locationId} change ${u.changeSequence}${u.baseline ? ' (baseline)' : ''}${u.forced ? ' (forced)' : ''}: ` +
        `${u.rowsWritten} ranges written, ${u.warnings} warnings, ${u.applyMs.toFixed(0)} ms`,
    );
  }

  close(): void {
    closeStore(this.store);
  }

  /** Stored in agent.db: every process sees it and it survives a restart. */
  get paused(): boolean {
    return this.pause().paused;
  }

  pause(): PauseState {
    return pauseState(this.store.agent);
  }

  setPaused(paused: boolean, actor: string, reason: string | null = null): boolean {
    return setPaused(this.store.agent, paused, actor, new Date(), reason);
  }

  private requireApplier(): Applier {
    if (!this.applier) throw new AppError('applier_elsewhere', 500, 'this process does not apply updates; ask the running agent');
    return this.applier;
  }

  /** Applies whatever the chain allows now (nothing while paused), and refreshes the till's counters. */
  drain(): AppliedUpdate[] {
    const applier = this.requireApplier();
    const applied = applier.drain();
    applier.refreshTillCounters();
    return applied;
  }

  /** Stores a manual delivery through the same path as a webhook call (agent.db only), audited. */
  storeImport(raw: Buffer, actor: string): ReceiptOutcome {
    const outcome = this.inbox.receive(importDelivery(raw, actor));
    this.auditImport(outcome, raw.length, actor);
    return outcome;
  }

  /** The audit record of an operator's import (who, what was stored or refused, how large). */
  auditImport(outcome: ReceiptOutcome, bytes: number, actor: string): void {
    preparedStatement(this.store.agent, 'INSERT INTO audit_log (at, actor, action, details) VALUES (?, ?, ?, ?)').run(
      new Date().toISOString(),
      actor,
      'import',
      JSON.stringify(
        outcome.kind === 'stored'
          ? { inboxId: outcome.inboxId, decision: outcome.decision, locationId: outcome.envelope.LocationID, changeSequence: outcome.envelope.ChangeSequence, bytes }
          : { quarantineId: outcome.quarantineId, error: outcome.error, bytes },
      ),
    );
  }

  /** The manual delivery support sends: stored, then applied here (in-process applier only). */
  importPayload(raw: Buffer, actor: string): { outcome: ReceiptOutcome; applied: AppliedUpdate[] } {
    this.requireApplier();
    const outcome = this.storeImport(raw, actor);
    return { outcome, applied: this.drain() };
  }

  importFile(file: string, actor: string): { outcome: ReceiptOutcome; applied: AppliedUpdate[] } {
    return this.importPayload(readImportFile(file), actor);
  }

  forceApply(inboxId: number, actor: string, reason: string): { forced: AppliedUpdate; then: AppliedUpdate[] } {
    const applier = this.requireApplier();
    const forced = applier.forceApply(inboxId, actor, reason);
    return { forced, then: this.drain() };
  }

  /**
   * Per-location sync state. A location is named by the webhook's LocationName, else the config's
   * `locations.<id>.name`, else the Description the employee interface's Locations list gives.
   */
  status(): LocationStatus[] {
    return locationStatuses(this.store.till, this.store.agent, this.config.sync.baseline, this.config.sync.baselineSettleSeconds * 1000, Date.now(), sitePolicyOf(this.config)).map((s) => ({
      ...s,
      locationName: s.locationName ?? this.config.locations[String(s.locationId)]?.name ?? locationDescription(this.store.staff, s.locationId),
    }));
  }

  acknowledgeWarnings(actor: string, locationId: number | null): number {
    const n = acknowledgeWarnings(this.store.agent, actor, locationId);
    this.applier?.refreshTillCounters();
    return n;
  }

  /** The location's timezone: configured, else from its Country in the cached /Locations list (staff sync), else the default. */
  timezoneFor(locationId: number): string {
    return this.config.locations[String(locationId)]?.timezone ?? cachedLocationTimezone(this.store.staff, locationId) ?? this.config.defaultTimezone;
  }

  /**
   * Today for a location, as the till's _today views see it (its UTC offsets in the till file), else in
   * its timezone; for the default timezone when no location is given.
   */
  today(locationId: number | null): IsoDate {
    if (locationId === null) return todayIn(this.config.defaultTimezone);
    return locationToday(this.store.till, locationId) ?? todayIn(this.timezoneFor(locationId));
  }

  /**
   * What the till charges for a PLU. `date` is the one date every item is answered for, or null when
   * the items are answered for different dates (no date or location asked: each location's own today,
   * and the locations' todays differ); each item carries its own date either way.
   */
  lookup(plu: string, options: { locationId?: number | null; date?: string | null } = {}): { date: string | null; items: TillAnswer[] } {
    const locationId = options.locationId ?? null;
    const wanted = plu.trim();
    if (options.date || locationId !== null) {
      const date = options.date ?? this.today(locationId);
      return { date, items: lookupPlu(this.store.till, wanted, date, locationId) };
    }
    // "Today" is each location's own (its timezone, as the till's _today views have it): asked for no
    // location, every location that has the PLU is answered for its own today.
    const locations = (this.store.till.prepare('SELECT DISTINCT location_id FROM items WHERE plu = ? ORDER BY location_id').all(wanted) as { location_id: number }[]).map((r) => r.location_id);
    const items = locations.flatMap((id) => lookupPlu(this.store.till, wanted, this.today(id), id));
    const dates = [...new Set(items.map((i) => i.date))];
    // One date for the answer only when it is every item's; none found: today in the default timezone.
    return { date: dates.length === 0 ? this.today(null) : dates.length === 1 ? dates[0]! : null, items };
  }

  /**
   * Per location with updates head office has sent that are not on the till yet, what to say beside
   * an answer read from the till (notYetOnTillNote): the price check's and Coming up's, in the CLI.
   */
  notYetOnTillNotes(): Map<number, string> {
    return notYetOnTillNotes(this.status(), this.paused);
  }

  deliveries(limit = 100, beforeId: number | null = null): ReturnType<typeof recentDeliveries> {
    return recentDeliveries(this.store.agent, limit, beforeId);
  }
}

/** An operator's import travels the webhook's path, marked as an import by whom. */
export function importDelivery(raw: Buffer, actor: string): { raw: Buffer; sender: string; source: 'import'; contentType: string } {
  return { raw, sender: `import by ${actor}`, source: 'import', contentType: 'application/json' };
}

export function readImportFile(file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    throw new AppError('file_unreadable', 400, `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

import fs from 'node:fs';
import os from 'node:os';
import type { Config } from './config/schema';
import { todayIn, type IsoDate } from './domain/dates';
import { cachedLocationTimezone, locationDescription } from './employees/locations';
import { AppError } from './errors';
import type { Logger } from './log';
import { Applier, type AppliedUpdate } from './sync/applier';
import { databasePath, openDatabase, type Db } from './store/database';
import { Inbox, type ReceiptOutcome } from './store/inbox';
import { acknowledgeWarnings, locationStatuses, lookupPlu, recentDeliveries, type LocationStatus, type TillAnswer } from './store/queries';

/** Who did an operator action, for the audit log. */
export function operatorName(): string {
  try {
    return `${os.userInfo().username}@${os.hostname()}`;
  } catch {
    return 'operator';
  }
}

/**
 * The agent without its servers: the database, the inbox and the applier, and the operations the
 * CLI, the admin API and the status window share. Opening it migrates the database (or refuses one
 * written by a newer agent).
 */
export class AgentCore {
  readonly db: Db;
  readonly inbox: Inbox;
  readonly applier: Applier;
  /**
   * While paused (tray or window), deliveries are still stored and acknowledged but nothing is
   * applied; an operator's force-apply still applies the one update it names.
   */
  paused = false;

  constructor(
    readonly config: Readonly<Config>,
    readonly log: Logger,
  ) {
    this.db = openDatabase(databasePath(config.dataDir));
    this.inbox = new Inbox(this.db);
    this.applier = new Applier(this.db, config.sync.baseline, {
      applied: (u) =>
        log.info(
          `applied location ${u.locationId} change ${u.changeSequence}${u.baseline ? ' (baseline)' : ''}${u.forced ? ' (forced)' : ''}: ` +
            `${u.rowsWritten} ranges written, ${u.warnings} warnings, ${u.applyMs.toFixed(0)} ms`,
        ),
      failed: (locationId, inboxId, err) => log.error(`applying update #${inboxId} for location ${locationId} failed; will retry:`, err),
    }, config.sync.baselineSettleSeconds * 1000);
  }

  close(): void {
    if (!this.db.open) return;
    try {
      // Keeps the query planner's statistics current for the till's lookups (SQLite's advice).
      this.db.pragma('optimize');
    } catch {
      // Best effort: a failing disk must not stop a shutdown.
    }
    this.db.close();
  }

  /** Applies whatever the chain allows now. */
  drain(): AppliedUpdate[] {
    return this.paused ? [] : this.applier.drain();
  }

  /** The manual delivery support sends: stored through the same path as a webhook call, then applied. */
  importPayload(raw: Buffer, actor: string): { outcome: ReceiptOutcome; applied: AppliedUpdate[] } {
    const outcome = this.inbox.receive({ raw, sender: `import by ${actor}`, source: 'import', contentType: 'application/json' });
    this.db
      .prepare('INSERT INTO audit_log (at, actor, action, details) VALUES (?, ?, ?, ?)')
      .run(
        new Date().toISOString(),
        actor,
        'import',
        JSON.stringify(
          outcome.kind === 'stored'
            ? { inboxId: outcome.inboxId, decision: outcome.decision, locationId: outcome.envelope.LocationID, changeSequence: outcome.envelope.ChangeSequence, bytes: raw.length }
            : { quarantineId: outcome.quarantineId, error: outcome.error, bytes: raw.length },
        ),
      );
    if (outcome.kind === 'stored' && outcome.decision === 'new') this.applier.remember(outcome.inboxId, outcome.body);
    return { outcome, applied: this.drain() };
  }

  importFile(file: string, actor: string): { outcome: ReceiptOutcome; applied: AppliedUpdate[] } {
    let raw: Buffer;
    try {
      raw = fs.readFileSync(file);
    } catch (err) {
      throw new AppError('file_unreadable', 400, `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    return this.importPayload(raw, actor);
  }

  forceApply(inboxId: number, actor: string, reason: string): { forced: AppliedUpdate; then: AppliedUpdate[] } {
    const forced = this.applier.forceApply(inboxId, actor, reason);
    return { forced, then: this.drain() };
  }

  /**
   * Per-location sync state. A location is named by the webhook's LocationName, else the config's
   * `locations.<id>.name`, else the Description the employee interface's Locations list gives.
   */
  status(): LocationStatus[] {
    return locationStatuses(this.db, this.config.sync.baseline, this.config.sync.baselineSettleSeconds * 1000).map((s) => ({
      ...s,
      locationName: s.locationName ?? this.config.locations[String(s.locationId)]?.name ?? locationDescription(this.db, s.locationId),
    }));
  }

  acknowledgeWarnings(actor: string, locationId: number | null): number {
    return acknowledgeWarnings(this.db, actor, locationId);
  }

  /** The location's timezone: configured, else from its Country in the cached /Locations list (staff sync), else the default. */
  timezoneFor(locationId: number): string {
    return this.config.locations[String(locationId)]?.timezone ?? cachedLocationTimezone(this.db, locationId) ?? this.config.defaultTimezone;
  }

  /** Today for a location (in its timezone), or for the default timezone when none is given. */
  today(locationId: number | null): IsoDate {
    return todayIn(locationId === null ? this.config.defaultTimezone : this.timezoneFor(locationId));
  }

  lookup(plu: string, options: { locationId?: number | null; date?: string | null } = {}): { date: string; items: TillAnswer[] } {
    const locationId = options.locationId ?? null;
    const date = options.date ?? this.today(locationId);
    return { date, items: lookupPlu(this.db, plu.trim(), date, locationId) };
  }

  deliveries(limit = 100, beforeId: number | null = null): ReturnType<typeof recentDeliveries> {
    return recentDeliveries(this.db, limit, beforeId);
  }
}

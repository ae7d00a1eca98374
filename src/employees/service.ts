import type { Config } from '../config/schema';
import { todayIn } from '../domain/dates';
import { AppError, describeError } from '../errors';
import { silentLogger, type Logger } from '../log';
import type { Db } from '../store/database';
import { StaffCache, type EmployeeRow, type SearchRow } from './cache';
import { EmployeeClient, type AttemptEvent, type EmployeesConfig } from './client';
import { EmployeeApiError } from './errors';
import { locationDescription, resolveLocationTimezone, type ResolvedTimezone } from './locations';
import {
  STAFF_RESOURCES,
  type AccrualView,
  type CachedLocation,
  type EmploymentView,
  type Freshness,
  type ManagerView,
  type ResidencyWarning,
  type SearchResult,
  type StaffDetail,
  type StaffLink,
  type StaffResource,
  type StaffSummary,
  type SubmitReport,
  type SyncReport,
} from './model';
import { searchTerms } from './search';
import { syncStaff } from './sync';
import { accrualView, residencyView } from './views';
import { staffSyncText } from '../domain/wording';

const RESIDENCY_KEYS = ['SettledStatus', 'SettledStatusShareCode', 'PreSettledStatus', 'PreSettledStatusExpiryDate', 'TemporaryLeaveToRemain', 'TemporaryLeaveToRemainExpiryDate'];

export interface StaffServiceOptions {
  /** Use this database now (the CLI); otherwise start() takes the agent's. */
  readonly db?: Db;
  /** Clock for tests. */
  readonly now?: () => Date;
}

/**
 * The staff lookups as one service: the status window (via `agent.service('staff')`) and the CLI
 * call these methods. While started it runs the scheduled sync every employees.syncIntervalMinutes.
 * Reads come from the local cache, so they work while the site is offline; each says how fresh its
 * data is. Methods that need the cache throw AppError 'staff_not_started' before start()/a db.
 * It is one of the agent's services (src/agent.ts AgentService) by shape: start() takes only the part
 * of the running agent it uses, the staff database, so this layer needs nothing above it.
 */
export class StaffService {
  readonly name = 'staff';
  readonly settings: EmployeesConfig;
  private cacheStore: StaffCache | null = null;
  private readonly stopping = new AbortController();
  private client: EmployeeClient;
  private running: Promise<SyncReport> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly now: () => Date;
  private linkState: StaffLink = { problem: null, since: null, retry: null };

  constructor(
    readonly config: Readonly<Config>,
    readonly log: Logger = silentLogger,
    options: StaffServiceOptions = {},
  ) {
    if (!config.employees) throw new AppError('staff_not_configured', 400, 'the employee interface is not configured: add an "employees" section to the configuration (docs/staff.md)');
    this.settings = config.employees;
    this.now = options.now ?? (() => new Date());
    this.client = new EmployeeClient(this.settings, { log, signal: this.stopping.signal, onAttempt: (e) => this.observe(e) });
    if (options.db) this.cacheStore = new StaffCache(options.db, this.settings.fieldNames);
  }

  /** Opens the cache on the agent's database and starts the sync schedule (first sync right away). */
  async start(agent: { readonly core: { readonly staffDb: Db } }): Promise<void> {
    this.cacheStore ??= new StaffCache(agent.core.staffDb, this.settings.fieldNames);
    const minutes = this.settings.syncIntervalMinutes;
    if (minutes <= 0) {
      this.log.info('staff sync: no schedule (employees.syncIntervalMinutes is 0); run `staff sync` to refresh');
      return;
    }
    const tick = (): void => {
      this.sync().then(
        (r) => this.log.info(`staff sync in ${r.ms} ms: ${staffSyncText(r.mode, r.counts, null)}${r.errors.length ? `; ${r.errors.length} failed` : ''}`),
        (err: unknown) => this.log.warn(`staff sync failed: ${describeError(err)}`),
      );
    };
    this.timer = setInterval(tick, minutes * 60_000);
    this.timer.unref();
    setImmediate(tick);
  }

  /** Stops the schedule, cancels calls in flight and waits for a running sync to finish. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.stopping.abort();
    await this.running?.catch(() => undefined);
  }

  /** The client, for scripts and tests that call an endpoint directly. */
  get api(): EmployeeClient {
    return this.client;
  }

  private get cache(): StaffCache {
    if (!this.cacheStore || !this.cacheStore.db.open) throw new AppError('staff_not_started', 503, 'the staff service is not started');
    return this.cacheStore;
  }

  /** Pulls everything now (delta where possible; `full` forces a full pull). Concurrent calls share one run. */
  sync(options: { full?: boolean } = {}): Promise<SyncReport> {
    if (this.running) return this.running;
    const run = syncStaff(this.client, this.cache, this.settings, { full: options.full, now: this.now, log: this.log }).finally(() => {
      this.running = null;
    });
    this.running = run;
    return run;
  }

  /**
   * The employee service as the latest attempt for staff data (employees, employments, holiday balance)
   * found it: the window's banner follows this while a sync retries. Reference lists are left out.
   */
  get link(): StaffLink {
    return this.linkState;
  }

  /** Ends the wait of a call that is waiting to try again: its next attempt starts now. False when none waits. */
  retryNow(): boolean {
    return this.client.retryNow() > 0;
  }

  private observe(event: AttemptEvent): void {
    // The banner is about the staff data: a reference list that fails is that list's failure, shown
    // on its own line (freshness, the sync's errors), not "offline"; its answers clear nothing either.
    if (event.reference) return;
    if (event.kind === 'answered') {
      this.linkState = { problem: null, since: null, retry: null };
      return;
    }
    const since = this.linkState.since ?? this.now().toISOString();
    if (event.kind === 'retrying') {
      this.linkState = { ...this.linkState, since, retry: { attempt: event.attempt, of: event.of, at: null } };
      return;
    }
    const retry = event.next ? { attempt: event.next.attempt, of: event.next.of, at: event.next.at.toISOString() } : null;
    this.linkState = { problem: event.error.message, since, retry };
  }

  /** True while a sync runs. */
  get syncing(): boolean {
    return this.running !== null;
  }

  /** How fresh each cached resource is (all five, including never-synced ones). */
  freshness(): Freshness[] {
    return STAFF_RESOURCES.map((r) => this.freshnessOf(r));
  }

  private freshnessOf(resource: StaffResource): Freshness {
    const state = this.cache.syncState(resource);
    const refreshedAt = state?.refreshed_at ?? null;
    const ageMinutes = refreshedAt === null ? null : Math.max(0, Math.floor((this.now().getTime() - Date.parse(refreshedAt)) / 60_000));
    const interval = this.settings.syncIntervalMinutes > 0 ? this.settings.syncIntervalMinutes : 24 * 60;
    return {
      resource,
      refreshedAt,
      ageMinutes,
      stale: ageMinutes === null || ageMinutes > 2 * interval,
      lastAttemptAt: state?.last_attempt_at ?? null,
      lastError: state?.last_error ?? null,
      lastMode: state?.last_mode ?? null,
      records: state?.records ?? 0,
    };
  }

  /** The EmployeeID of the employee with this number (any case), current or former; null when none is cached. */
  employeeIdByNumber(employeeNumber: string): number | null {
    return this.cache.employeeIdByNumber(employeeNumber);
  }

  /** How fresh the cached employees are (what every staff answer rests on). */
  employeesFreshness(): Freshness {
    return this.freshnessOf('employees');
  }

  /** Case- and accent-insensitive partial search on name or employee number; current staff first. */
  search(query: string, limit = 20): SearchResult {
    const capped = Math.max(1, Math.min(500, Math.floor(limit)));
    const rows = this.cache.search(searchTerms(query), query, capped + 1);
    return { query, results: rows.slice(0, capped).map(toSummary), truncated: rows.length > capped, freshness: this.freshnessOf('employees') };
  }

  /** One person: employment, manager, IR35, furlough, contract hours, residency (with warning), last accrual. Null if unknown. */
  show(employeeId: number): StaffDetail | null {
    const row = this.cache.employee(employeeId);
    if (!row) return null;
    const raw = JSON.parse(row.raw) as Record<string, unknown>;
    const employments: EmploymentView[] = this.cache.employments(row.employee_id, row.employee_number).map((e) => ({
      reportsTo: e.reports_to,
      reportsToEmployeeNumber: e.reports_to_employee_number,
      reportsToFAID: e.reports_to_faid,
      ir35: e.ir35 === null ? null : e.ir35 === 1,
      raw: JSON.parse(e.raw) as Record<string, unknown>,
    }));
    const cachedAccrual = this.cache.accrual(employeeId);
    return {
      employeeId: row.employee_id,
      employeeNumber: row.employee_number,
      name: row.display_name,
      former: row.former === 1,
      formerSince: row.former_since,
      ir35: row.ir35 === null ? (employments.find((e) => e.ir35 !== null)?.ir35 ?? null) : row.ir35 === 1,
      furloughed: row.furloughed === null ? null : row.furloughed === 1,
      contractHours: row.contract_hours,
      employments,
      manager: this.managerOf(employments),
      residency: residencyView(this.residencyFields(row, raw), todayIn(this.config.defaultTimezone, this.now()), this.settings.residencyWarningDays),
      accrual: cachedAccrual ? accrualView(cachedAccrual.raw, cachedAccrual.fetchedAt, 'cache') : null,
      raw,
      freshness: this.freshnessOf('employees'),
    };
  }

  private managerOf(employments: readonly EmploymentView[]): ManagerView | null {
    const e = employments.find((x) => x.reportsTo !== null || x.reportsToEmployeeNumber !== null);
    if (!e) return null;
    const known = e.reportsToEmployeeNumber ? this.cache.employeeByNumber(e.reportsToEmployeeNumber) : null;
    return { name: e.reportsTo ?? known?.display_name ?? null, employeeNumber: e.reportsToEmployeeNumber, employeeId: known?.employee_id ?? null };
  }

  /** The record's own residency fields when it has any, else what this agent last submitted. */
  private residencyFields(row: EmployeeRow, raw: Record<string, unknown>): Record<string, unknown> {
    if (RESIDENCY_KEYS.some((k) => raw[k] !== undefined && raw[k] !== null && raw[k] !== '')) return raw;
    return this.cache.submittedResidency(row.employee_number) ?? {};
  }

  /** Current staff whose residency expiry is within employees.residencyWarningDays or has passed, soonest first. */
  residencyWarnings(): ResidencyWarning[] {
    const today = todayIn(this.config.defaultTimezone, this.now());
    const out: ResidencyWarning[] = [];
    for (const { row, submitted } of this.cache.residencyCandidates()) {
      const raw = JSON.parse(row.raw) as Record<string, unknown>;
      const fields = RESIDENCY_KEYS.some((k) => raw[k] !== undefined && raw[k] !== null && raw[k] !== '') ? raw : submitted ? (JSON.parse(submitted) as Record<string, unknown>) : {};
      const residency = residencyView(fields, today, this.settings.residencyWarningDays);
      if (residency.warning) out.push({ employee: toSummary(row), residency });
    }
    return out.sort((a, b) => (a.residency.daysToExpiry ?? 0) - (b.residency.daysToExpiry ?? 0));
  }

  /**
   * Holiday balance. Fetched live unless one fetched within employees.accrualMaxAgeMinutes is cached
   * (`refresh` always fetches). When the service cannot be reached, the cached one is returned with
   * source 'cache', its time and the reason; with nothing cached the error is thrown. Null: the
   * service has no accrual record for this person.
   */
  async accrual(employeeId: number, options: { refresh?: boolean } = {}): Promise<AccrualView | null> {
    const cached = this.cache.accrual(employeeId);
    if (cached && !options.refresh) {
      const ageMinutes = (this.now().getTime() - Date.parse(cached.fetchedAt)) / 60_000;
      if (ageMinutes < this.settings.accrualMaxAgeMinutes) return accrualView(cached.raw, cached.fetchedAt, 'cache');
    }
    try {
      const records = await this.client.accrual(employeeId);
      const record = records[0];
      if (!record) return null;
      const fetchedAt = this.now().toISOString();
      this.cache.storeAccrual(employeeId, record, fetchedAt);
      return accrualView(record, fetchedAt, 'live');
    } catch (err) {
      if (cached && err instanceof EmployeeApiError) return accrualView(cached.raw, cached.fetchedAt, 'cache', err.message);
      throw err;
    }
  }

  /**
   * Validates and POSTs employees (section 2 rules). Throws EmployeeValidationError listing every
   * field error (nothing sent), or EmployeeApiError. Residency fields sent are remembered for expiry warnings.
   */
  async submit(employees: unknown): Promise<SubmitReport> {
    const result = await this.client.postEmployees(employees);
    if (Array.isArray(employees) && this.cacheStore?.db.open) {
      this.cacheStore.storeSubmittedResidency(employees.filter((e): e is Record<string, unknown> => typeof e === 'object' && e !== null), this.now().toISOString());
    }
    return { sent: result.sent, status: result.status, response: result.body };
  }

  /** All cached locations (from GET /Locations). */
  locations(): CachedLocation[] {
    return this.cache.locations();
  }

  /** The Description of a LocationID from the cached /Locations list, or null. */
  locationName(locationId: number): string | null {
    return locationDescription(this.cache.db, locationId);
  }

  /** The configured timezone, else one derived from the cached Country, else the default; says which and why. */
  locationTimezone(locationId: number): ResolvedTimezone {
    return resolveLocationTimezone(this.config, this.cache.db, locationId);
  }

  /** Deletes all cached staff data (employees, employments, reference lists, accruals, submitted residency). */
  purge(): Record<string, number> {
    return this.cache.purge();
  }
}

function toSummary(r: SearchRow): StaffSummary {
  return {
    employeeId: r.employee_id,
    employeeNumber: r.employee_number,
    name: r.display_name,
    former: r.former === 1,
    furloughed: r.furloughed === null ? null : r.furloughed === 1,
  };
}

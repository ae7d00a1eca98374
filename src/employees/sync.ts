import { silentLogger, type Logger } from '../log';
import type { StaffCache } from './cache';
import type { EmployeeClient, EmployeesConfig } from './client';
import { EmployeeApiError } from './errors';
import type { StaffResource, SyncReport } from './model';
import { LIMITS, type EmployeeRecord, type EmploymentRecord } from './schemas';

/**
 * One sync run: pulls each resource and stores it in one transaction per pull. A resource that fails
 * (network, timeout, malformed answer) keeps its previous cache and its error is recorded; the others
 * still refresh. Employees and employments come first: the lookups rest on them, and nothing in the
 * specification makes them depend on a reference list, so a reference list that is slow or fails
 * cannot hold them back. Employees are pulled incrementally (delta=true&dateFrom=...) when the site
 * allows it and a recent full pull exists; otherwise, or when the service refuses delta, in full.
 * Employments always in full (below).
 */

export interface SyncOptions {
  /** Force a full pull of employees and employments. */
  readonly full?: boolean;
  readonly now?: () => Date;
  readonly log?: Logger;
}

const HOUR_MS = 3_600_000;

/** Whether this run may be a delta, and from which date (the spec's dateFrom is a day, YYYY-MM-DD). */
export function planPull(
  state: { pulled_from: string | null; last_full_at: string | null } | null,
  config: Pick<EmployeesConfig, 'deltaSync' | 'fullSyncEveryHours'>,
  now: Date,
  forceFull = false,
): { mode: 'full' } | { mode: 'delta'; dateFrom: string } {
  if (forceFull || !config.deltaSync || !state?.pulled_from || !state.last_full_at) return { mode: 'full' };
  const lastFull = Date.parse(state.last_full_at);
  if (config.fullSyncEveryHours > 0 && now.getTime() - lastFull >= config.fullSyncEveryHours * HOUR_MS) return { mode: 'full' };
  // A day earlier than the last pull's start: dateFrom has day granularity and the service's day may
  // be in another timezone. Re-reading a day's changes is harmless (upserts).
  const from = new Date(Date.parse(state.pulled_from) - 24 * HOUR_MS);
  return { mode: 'delta', dateFrom: from.toISOString().slice(0, 10) };
}

/** A delta the service does not understand comes back as a client error: fall back to a full pull. */
function deltaRefused(err: unknown): boolean {
  return err instanceof EmployeeApiError && err.failure === 'http' && (err.httpStatus === 400 || err.httpStatus === 404 || err.httpStatus === 422 || err.httpStatus === 501);
}

/** Section 8 limits on what we store: kept as received (never truncated), flagged in the report. */
export function limitWarnings(resource: StaffResource, records: readonly Record<string, unknown>[]): string[] {
  const checks: Record<StaffResource, [string, number][]> = {
    employees: [],
    employments: [['ReportsTo', LIMITS.ReportsTo]],
    divisions: [['AccountingSystemCode', LIMITS.AccountingSystemCode]],
    sources: [['SourceDescription', LIMITS.SourceDescription]],
    locations: [
      ['Description', LIMITS.LocationDescription],
      ['AccountingSystemCode', LIMITS.AccountingSystemCode],
    ],
  };
  const out: string[] = [];
  records.forEach((r, i) => {
    for (const [field, max] of checks[resource]) {
      const v = r[field];
      if (typeof v === 'string' && [...v].length > max) out.push(`${resource} record ${i}: ${field} is ${[...v].length} characters, over the documented ${max}`);
    }
  });
  return out;
}

export async function syncStaff(client: EmployeeClient, cache: StaffCache, config: EmployeesConfig, options: SyncOptions = {}): Promise<SyncReport> {
  const clock = options.now ?? (() => new Date());
  const log = options.log ?? silentLogger;
  const started = clock();
  const startedAt = started.toISOString();
  const t0 = performance.now();
  const counts: Record<StaffResource, number> = { employees: 0, employments: 0, divisions: 0, sources: 0, locations: 0 };
  const errors: { resource: StaffResource; message: string }[] = [];
  const warnings: string[] = [];
  let mode: 'full' | 'delta' = 'full';

  // Once the service cannot be reached at all, the resources after it are not asked: each would go
  // through its own retries and keep the window waiting for nothing. They keep their cache and record
  // the same reason. A resource that went unanswered (every attempt timed out or lost its connection)
  // may be that endpoint's problem alone, so the next one is still asked; the service counts as
  // unreachable when the resource before it went unanswered too, or at once when nothing at its
  // address took the connection (refused, name not found) or the agent is stopping.
  let unreachable: string | null = null;
  let unanswered = false;
  const run = async (resource: StaffResource, pull: () => Promise<{ mode: 'full' | 'delta'; count: number }>): Promise<void> => {
    const pulledFrom = clock().toISOString();
    if (unreachable !== null) {
      errors.push({ resource, message: unreachable });
      cache.recordFailure(resource, clock().toISOString(), unreachable);
      return;
    }
    try {
      const result = await pull();
      unanswered = false;
      counts[resource] = result.count;
      cache.recordSuccess(resource, pulledFrom, clock().toISOString(), result.mode);
    } catch (err) {
      const message = (err as Error).message;
      if (err instanceof EmployeeApiError && (err.failure === 'network' || err.failure === 'timeout')) {
        if (unanswered || err.addressUnreachable || err.cancelled) unreachable = `not asked: ${message}`;
        unanswered = true;
      } else {
        unanswered = false;
      }
      errors.push({ resource, message });
      cache.recordFailure(resource, clock().toISOString(), message);
      log.warn(`staff sync: ${resource}: ${message}`);
    }
  };

  await run('employees', async () => {
    const plan = planPull(cache.syncState('employees'), config, started, options.full);
    let pulled: { all: EmployeeRecord[]; current: EmployeeRecord[]; mode: 'full' | 'delta' } | null = null;
    if (plan.mode === 'delta') {
      try {
        const all = await client.employees({ delta: true, dateFrom: plan.dateFrom, showFormer: true });
        const current = await client.employees({ delta: true, dateFrom: plan.dateFrom, showFormer: false });
        pulled = { all, current, mode: 'delta' };
      } catch (err) {
        if (!deltaRefused(err)) throw err;
        log.warn(`staff sync: the service refused a delta pull (${(err as Error).message}); pulling in full`);
      }
    }
    if (!pulled) {
      const all = await client.employees({ showFormer: true });
      const current = await client.employees({ showFormer: false });
      pulled = { all, current, mode: 'full' };
    }
    mode = pulled.mode;
    const currentIds = new Set(pulled.current.map((r) => r.EmployeeID));
    // A person only in the current-staff answer (a service that filters differently) is still stored.
    const allIds = new Set(pulled.all.map((r) => r.EmployeeID));
    const all = [...pulled.all, ...pulled.current.filter((r) => !allIds.has(r.EmployeeID))];
    return { mode: pulled.mode, count: cache.storeEmployees(all, currentIds, pulled.mode, clock().toISOString()) };
  });

  // Employments always in full: the specification gives an Employment no identifier, so a delta
  // naming one of a person's jobs cannot say which of the cached ones it replaces; replacing all of the
  // person's with it dropped their other jobs until the next full pull.
  await run('employments', async () => {
    const records: EmploymentRecord[] = await client.employments({ showFormer: true });
    warnings.push(...limitWarnings('employments', records));
    return { mode: 'full', count: cache.storeEmployments(records, clock().toISOString()) };
  });

  // The reference lists, each on its own: one that fails keeps its previous copy (the location names
  // and timezones the agent shows keep coming from it) and the next one is still asked.
  await run('locations', async () => {
    const records = await client.locations();
    warnings.push(...limitWarnings('locations', records));
    return { mode: 'full', count: cache.storeLocations(records) };
  });
  await run('divisions', async () => {
    const records = await client.divisions();
    warnings.push(...limitWarnings('divisions', records));
    return { mode: 'full', count: cache.storeDivisions(records) };
  });
  await run('sources', async () => {
    const records = await client.employeeSources();
    warnings.push(...limitWarnings('sources', records));
    return { mode: 'full', count: cache.storeSources(records) };
  });

  const finishedAt = clock().toISOString();
  return { mode, startedAt, finishedAt, ms: Math.round(performance.now() - t0), counts, errors, warnings };
}

/**
 * What the staff lookups return: plain JSON-able objects the CLI prints and the status window renders.
 * Every answer that comes from the local cache says how fresh it is, because the site may be offline.
 */

/** How old the cached data behind an answer is. */
export interface Freshness {
  /** The resource (employees, employments, divisions, sources, locations). */
  readonly resource: StaffResource;
  /** When the last successful pull of this resource finished (ISO instant), or null if never. */
  readonly refreshedAt: string | null;
  /** Whole minutes since refreshedAt, or null if never refreshed. */
  readonly ageMinutes: number | null;
  /** True when older than twice the sync interval (or never refreshed). */
  readonly stale: boolean;
  /** Last attempt, successful or not. */
  readonly lastAttemptAt: string | null;
  /** The last failed attempt's message, cleared by a success. */
  readonly lastError: string | null;
  /** full or delta: how the last successful pull was made. */
  readonly lastMode: 'full' | 'delta' | null;
  readonly records: number;
}

/**
 * The employee service as this agent's calls for staff data find it right now (not stored: it starts
 * clear at each start). The window shows its "offline" banner from the first failed attempt, while
 * retries go on. Calls for the reference lists (divisions, sources, locations) do not change it.
 */
export interface StaffLink {
  /** The last attempt's failure (technical text, for support), or null when the last attempt was answered. */
  readonly problem: string | null;
  /** When the current run of failures began (ISO instant), or null. */
  readonly since: string | null;
  /**
   * While a call tries again: the next attempt and how many there are in all; `at` is when it starts
   * (ISO instant), null while it is under way. Null when no retry is pending (answered, or given up).
   */
  readonly retry: { readonly attempt: number; readonly of: number; readonly at: string | null } | null;
}

export type StaffResource = 'employees' | 'employments' | 'divisions' | 'sources' | 'locations';

export const STAFF_RESOURCES: readonly StaffResource[] = ['employees', 'employments', 'divisions', 'sources', 'locations'];

/** One search hit. */
export interface StaffSummary {
  readonly employeeId: number;
  readonly employeeNumber: string | null;
  readonly name: string;
  readonly former: boolean;
  readonly furloughed: boolean | null;
}

export interface SearchResult {
  readonly query: string;
  readonly results: readonly StaffSummary[];
  /** True when there were more matches than the limit. */
  readonly truncated: boolean;
  readonly freshness: Freshness;
}

export type ResidencyStatusName = 'settled' | 'pre-settled' | 'temporary leave to remain';

export interface ResidencyView {
  /** The status that is "yes", or null when none is. */
  readonly status: ResidencyStatusName | null;
  readonly shareCode: string | null;
  /** YYYY-MM-DD, or null when no expiry date is known. */
  readonly expiryDate: string | null;
  /** Days from today to expiry (negative when already expired), or null. */
  readonly daysToExpiry: number | null;
  /** A sentence for the manager when expiry is within the warning window or passed; otherwise null. */
  readonly warning: string | null;
}

export interface EmploymentView {
  readonly reportsTo: string | null;
  readonly reportsToEmployeeNumber: string | null;
  readonly reportsToFAID: string | null;
  readonly ir35: boolean | null;
  /** The record as received (its full field list is not in the specification). */
  readonly raw: Record<string, unknown>;
}

/** A manager, resolved from ReportsToEmployeeNumber against the cache where possible. */
export interface ManagerView {
  readonly name: string | null;
  readonly employeeNumber: string | null;
  /** The manager's EmployeeID when the cache knows them. */
  readonly employeeId: number | null;
}

export interface StaffDetail {
  readonly employeeId: number;
  readonly employeeNumber: string | null;
  readonly name: string;
  readonly former: boolean;
  /** When this agent first saw the person as former (ISO instant), or null. */
  readonly formerSince: string | null;
  readonly ir35: boolean | null;
  readonly furloughed: boolean | null;
  /** FurLoughContractHours: hours normally worked per week. */
  readonly contractHours: number | null;
  readonly employments: readonly EmploymentView[];
  readonly manager: ManagerView | null;
  readonly residency: ResidencyView;
  /** The last accrual fetched for this person, if any (use StaffService.accrual for a live one). */
  readonly accrual: AccrualView | null;
  readonly raw: Record<string, unknown>;
  readonly freshness: Freshness;
}

/** A holiday balance. Calculation fields are null (not applicable) for non-flexible staff, never 0. */
export interface AccrualView {
  readonly employeeId: number;
  readonly units: number;
  readonly unitType: string;
  /** "12.5 Days" etc. */
  readonly balanceText: string;
  readonly flexible: boolean | null;
  readonly avgHoursPerDay: number | null;
  readonly avgHoursPerWeek: number | null;
  readonly avgDaysPerWeek: number | null;
  /** DayRate as the service sent it (text, so money is never a float here). */
  readonly dayRate: string | null;
  /** StartDateTime of the record (when the service computed it). */
  readonly asOf: string | null;
  /** When this agent fetched it (ISO instant). */
  readonly fetchedAt: string;
  /** live: fetched just now; cache: the service could not be reached, this is the last one we had. */
  readonly source: 'live' | 'cache';
  /** Why the cached value is shown, when source is cache. */
  readonly liveError: string | null;
  readonly raw: Record<string, unknown>;
}

export interface SyncReport {
  readonly mode: 'full' | 'delta';
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly ms: number;
  readonly counts: Readonly<Record<StaffResource, number>>;
  /** Per-resource failures; the other resources are still refreshed. */
  readonly errors: readonly { resource: StaffResource; message: string }[];
  /** Records stored despite exceeding a documented field limit (kept as received, flagged). */
  readonly warnings: readonly string[];
}

/** Someone whose residency expiry is within the warning window or has passed. */
export interface ResidencyWarning {
  readonly employee: StaffSummary;
  readonly residency: ResidencyView;
}

/** The answer to a submission (POST Employees), after validation passed. */
export interface SubmitReport {
  readonly sent: number;
  readonly status: number;
  /** The service's answer as received (its shape is not stated in the spec). */
  readonly response: unknown;
}

export interface CachedLocation {
  readonly locationId: number;
  readonly description: string;
  readonly country: string | null;
  readonly area: string | null;
  readonly accountingSystemCode: string | null;
}

import { preparedStatement, type Db } from '../store/database';
import type { CachedLocation, StaffResource } from './model';
import type { DivisionRecord, EmployeeRecord, EmployeeSourceRecord, EmploymentRecord, LocationRecord } from './schemas';
import { likeEscape, normaliseForSearch } from './search';

/** Names of the record fields the specification does not show (employees.fieldNames). */
export interface FieldNames {
  readonly employeeNumber: string;
  readonly firstName: string;
  readonly lastName: string;
  readonly knownAs: string;
}

export const DEFAULT_FIELD_NAMES: FieldNames = { employeeNumber: 'EmployeeNumber', firstName: 'FirstName', lastName: 'LastName', knownAs: 'KnownAs' };

export interface EmployeeRow {
  employee_id: number;
  employee_number: string | null;
  display_name: string;
  former: number;
  former_since: string | null;
  ir35: number | null;
  furloughed: number | null;
  contract_hours: number | null;
  raw: string;
  refreshed_at: string;
}

export interface EmploymentRow {
  employee_id: number | null;
  employee_number: string | null;
  reports_to: string | null;
  reports_to_employee_number: string | null;
  reports_to_faid: string | null;
  ir35: number | null;
  raw: string;
}

export interface SyncStateRow {
  resource: StaffResource;
  refreshed_at: string | null;
  pulled_from: string | null;
  last_full_at: string | null;
  last_mode: 'full' | 'delta' | null;
  last_attempt_at: string | null;
  last_error: string | null;
  records: number;
}

export interface SearchRow {
  employee_id: number;
  employee_number: string | null;
  display_name: string;
  former: number;
  furloughed: number | null;
}

function text(value: unknown): string | null {
  if (typeof value === 'string') return value.trim() === '' ? null : value.trim();
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return null;
}

const flag = (value: boolean | null | undefined): number | null => (value === true ? 1 : value === false ? 0 : null);

/** The name a manager sees, from whichever name fields the record has. */
export function displayNameOf(record: Readonly<Record<string, unknown>>, names: FieldNames): string {
  const first = text(record[names.firstName]);
  const last = text(record[names.lastName]);
  const knownAs = text(record[names.knownAs]);
  const full = [knownAs && first && knownAs !== first ? `${first} (${knownAs})` : (first ?? knownAs), last].filter(Boolean).join(' ');
  return full !== '' ? full : `Employee ${String(record.EmployeeID)}`;
}

export function searchTextOf(record: Readonly<Record<string, unknown>>, names: FieldNames): string {
  return normaliseForSearch(
    [text(record[names.firstName]), text(record[names.knownAs]), text(record[names.lastName]), text(record[names.employeeNumber])].filter(Boolean).join(' '),
  );
}

/**
 * The staff cache in the agent's database (migration 002). Every pull is written in one transaction,
 * so a failed or malformed pull leaves the previous contents whole.
 */
/** How long residency fields this agent submitted outlive a full pull that does not list the person. */
export const SUBMITTED_RESIDENCY_GRACE_MS = 24 * 60 * 60 * 1000;

export class StaffCache {
  private readonly searchStatements = new Map<number, ReturnType<Db['prepare']>>();

  constructor(
    readonly db: Db,
    readonly names: FieldNames = DEFAULT_FIELD_NAMES,
  ) {}

  /**
   * Stores a pull of employees. `all` is the answer with showFormer=true, `currentIds` the EmployeeIDs
   * of the answer with showFormer=false: a person in the first but not the second is former (the
   * record's own fields for that are not shown in the spec). A full pull also removes people the
   * service no longer returns at all.
   */
  storeEmployees(all: readonly EmployeeRecord[], currentIds: ReadonlySet<number>, mode: 'full' | 'delta', now: string): number {
    const upsert = this.db.prepare(`
      INSERT INTO staff_employees (employee_id, employee_number, display_name, search_text, former, former_since, ir35, furloughed, contract_hours, raw, refreshed_at)
      VALUES (@id, @number, @name, @search, @former, CASE WHEN @former = 1 THEN @now END, @ir35, @furloughed, @hours, @raw, @now)
      ON CONFLICT (employee_id) DO UPDATE SET
        employee_number = excluded.employee_number, display_name = excluded.display_name, search_text = excluded.search_text,
        former = excluded.former,
        former_since = CASE WHEN excluded.former = 0 THEN NULL ELSE coalesce(staff_employees.former_since, excluded.former_since) END,
        ir35 = excluded.ir35, furloughed = excluded.furloughed, contract_hours = excluded.contract_hours,
        raw = excluded.raw, refreshed_at = excluded.refreshed_at`);
    this.db.transaction(() => {
      if (mode === 'full') {
        this.db.exec('CREATE TEMP TABLE IF NOT EXISTS staff_seen (employee_id INTEGER PRIMARY KEY)');
        this.db.exec('DELETE FROM temp.staff_seen');
        const seen = this.db.prepare('INSERT OR IGNORE INTO temp.staff_seen (employee_id) VALUES (?)');
        for (const r of all) seen.run(r.EmployeeID);
        this.db.exec('DELETE FROM staff_employees WHERE employee_id NOT IN (SELECT employee_id FROM temp.staff_seen)');
        this.db.exec('DELETE FROM staff_accrual WHERE employee_id NOT IN (SELECT employee_id FROM temp.staff_seen)');

        this.db.exec('DELETE FROM temp.staff_seen');
      }
      for (const r of all) {
        upsert.run({
          id: r.EmployeeID,
          number: text(r[this.names.employeeNumber]),
          name: displayNameOf(r, this.names),
          search: searchTextOf(r, this.names),
          former: currentIds.has(r.EmployeeID) ? 0 : 1,
          ir35: flag(r.IR35),
          furloughed: flag(r.IsEmployeeFurlough),
          hours: typeof r.FurLoughContractHours === 'number' ? r.FurLoughContractHours : null,
          raw: JSON.stringify(r),
          now,
        });
      }
      if (mode === 'full') {
        // What this agent submitted for someone the service no longer returns goes with them (or a
        // later person given the same number would show it), unless submitted within
        // SUBMITTED_RESIDENCY_GRACE_MS: the service may not list a person it has just been sent yet.
        this.db
          .prepare(
            `DELETE FROM staff_submitted_residency WHERE submitted_at < ?
               AND employee_number NOT IN (SELECT employee_number FROM staff_employees WHERE employee_number IS NOT NULL)`,
          )
          .run(new Date(Date.parse(now) - SUBMITTED_RESIDENCY_GRACE_MS).toISOString());
      }
    }).immediate();
    return all.length;
  }

  /** A full pull of employments replaces every one (they are never pulled by delta: sync.ts). */
  storeEmployments(records: readonly EmploymentRecord[], now: string): number {
    const insert = this.db.prepare(`INSERT INTO staff_employments
      (employee_id, employee_number, reports_to, reports_to_employee_number, reports_to_faid, ir35, raw, refreshed_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
    this.db.transaction(() => {
      this.db.exec('DELETE FROM staff_employments');
      for (const r of records) {
        insert.run(
          typeof r.EmployeeID === 'number' ? r.EmployeeID : null,
          text(r[this.names.employeeNumber]),
          text(r.ReportsTo),
          text(r.ReportsToEmployeeNumber),
          text(r.ReportsToFAID),
          flag(r.IR35),
          JSON.stringify(r),
          now,
        );
      }
    }).immediate();
    return records.length;
  }

  storeDivisions(records: readonly DivisionRecord[]): number {
    const insert = this.db.prepare('INSERT OR REPLACE INTO staff_divisions (division_id, division_name, accounting_system_code, division_guid, raw) VALUES (?, ?, ?, ?, ?)');
    this.db.transaction(() => {
      this.db.exec('DELETE FROM staff_divisions');
      for (const r of records) insert.run(r.DivisionId, r.DivisionName, text(r.AccountingSystemCode), text(r.DivisionGUID), JSON.stringify(r));
    }).immediate();
    return records.length;
  }

  storeSources(records: readonly EmployeeSourceRecord[]): number {
    const insert = this.db.prepare('INSERT INTO staff_sources (source_description, raw) VALUES (?, ?)');
    this.db.transaction(() => {
      this.db.exec('DELETE FROM staff_sources');
      for (const r of records) insert.run(r.SourceDescription, JSON.stringify(r));
    }).immediate();
    return records.length;
  }

  storeLocations(records: readonly LocationRecord[]): number {
    const insert = this.db.prepare(
      'INSERT OR REPLACE INTO staff_locations (location_id, description, country, area, accounting_system_code, location_guid, raw) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    this.db.transaction(() => {
      this.db.exec('DELETE FROM staff_locations');
      for (const r of records) insert.run(r.LocationID, r.Description, text(r.Country), text(r.Area), text(r.AccountingSystemCode), text(r.LocationGUID), JSON.stringify(r));
    }).immediate();
    return records.length;
  }

  recordSuccess(resource: StaffResource, pulledFrom: string, finishedAt: string, mode: 'full' | 'delta'): void {
    const total = this.countOf(resource);
    this.db
      .prepare(
        `INSERT INTO staff_sync_state (resource, refreshed_at, pulled_from, last_full_at, last_mode, last_attempt_at, last_error, records)
         VALUES (@resource, @finishedAt, @pulledFrom, CASE WHEN @mode = 'full' THEN @pulledFrom END, @mode, @pulledFrom, NULL, @total)
         ON CONFLICT (resource) DO UPDATE SET refreshed_at = excluded.refreshed_at, pulled_from = excluded.pulled_from,
           last_full_at = coalesce(excluded.last_full_at, staff_sync_state.last_full_at), last_mode = excluded.last_mode,
           last_attempt_at = excluded.last_attempt_at, last_error = NULL, records = excluded.records`,
      )
      .run({ resource, finishedAt, pulledFrom, mode, total });
  }

  recordFailure(resource: StaffResource, at: string, message: string): void {
    this.db
      .prepare(
        `INSERT INTO staff_sync_state (resource, last_attempt_at, last_error) VALUES (?, ?, ?)
         ON CONFLICT (resource) DO UPDATE SET last_attempt_at = excluded.last_attempt_at, last_error = excluded.last_error`,
      )
      .run(resource, at, message);
  }

  // The reads and single writes below answer the window's and the CLI's requests: prepared once per
  // connection (preparedStatement), not on every request.
  syncState(resource: StaffResource): SyncStateRow | null {
    return (preparedStatement(this.db, 'SELECT * FROM staff_sync_state WHERE resource = ?').get(resource) as SyncStateRow | undefined) ?? null;
  }

  countOf(resource: StaffResource): number {
    const table = { employees: 'staff_employees', employments: 'staff_employments', divisions: 'staff_divisions', sources: 'staff_sources', locations: 'staff_locations' }[resource];
    return (preparedStatement(this.db, `SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  }

  /**
   * People whose name, preferred name or number contains every term (terms already normalised).
   * Ordering: current staff first, an exact employee number, then names starting with the first
   * term, then by name. A scan of a normalised column: measured in bench/staff.ts.
   */
  search(terms: readonly string[], rawQuery: string, limit: number): SearchRow[] {
    if (terms.length === 0) return [];
    let statement = this.searchStatements.get(terms.length);
    if (!statement) {
      const where = terms.map(() => "search_text LIKE ? ESCAPE '\\'").join(' AND ');
      statement = preparedStatement(this.db, `
        SELECT employee_id, employee_number, display_name, former, furloughed FROM staff_employees
        WHERE ${where}
        ORDER BY former, (lower(employee_number) = ?) DESC, (search_text LIKE ? ESCAPE '\\' OR search_text LIKE ? ESCAPE '\\') DESC, display_name, employee_id
        LIMIT ?`);
      this.searchStatements.set(terms.length, statement);
    }
    const first = likeEscape(terms[0]!);
    return statement.all([...terms.map((t) => `%${likeEscape(t)}%`), rawQuery.trim().toLowerCase(), `${first}%`, `% ${first}%`, limit]) as SearchRow[];
  }

  employee(employeeId: number): EmployeeRow | null {
    return (preparedStatement(this.db, 'SELECT * FROM staff_employees WHERE employee_id = ?').get(employeeId) as EmployeeRow | undefined) ?? null;
  }

  /** An employee number typed by a person: any case; a current employee before a former one. */
  employeeIdByNumber(employeeNumber: string): number | null {
    const row = preparedStatement(this.db, 'SELECT employee_id FROM staff_employees WHERE employee_number = ? COLLATE NOCASE ORDER BY former, employee_id LIMIT 1').get(employeeNumber) as
      | { employee_id: number }
      | undefined;
    return row?.employee_id ?? null;
  }

  employeeByNumber(employeeNumber: string): EmployeeRow | null {
    return (preparedStatement(this.db, 'SELECT * FROM staff_employees WHERE employee_number = ? ORDER BY former LIMIT 1').get(employeeNumber) as EmployeeRow | undefined) ?? null;
  }

  employments(employeeId: number, employeeNumber: string | null): EmploymentRow[] {
    return preparedStatement(this.db, 'SELECT * FROM staff_employments WHERE employee_id = ? OR (employee_id IS NULL AND employee_number = ?) ORDER BY id').all(
      employeeId,
      employeeNumber,
    ) as EmploymentRow[];
  }

  /** Employees with any residency fields, in the record as received or as submitted by this agent. */
  residencyCandidates(): { row: EmployeeRow; submitted: string | null }[] {
    const rows = preparedStatement(
      this.db,
      `SELECT e.*, s.fields AS submitted FROM staff_employees e LEFT JOIN staff_submitted_residency s ON s.employee_number = e.employee_number
       WHERE e.former = 0 AND (s.fields IS NOT NULL OR e.raw LIKE '%ExpiryDate%')`,
    ).all() as (EmployeeRow & { submitted: string | null })[];
    return rows.map((r) => ({ row: r, submitted: r.submitted }));
  }

  submittedResidency(employeeNumber: string | null): Record<string, unknown> | null {
    if (employeeNumber === null) return null;
    const row = preparedStatement(this.db, 'SELECT fields FROM staff_submitted_residency WHERE employee_number = ?').get(employeeNumber) as { fields: string } | undefined;
    return row ? (JSON.parse(row.fields) as Record<string, unknown>) : null;
  }

  storeSubmittedResidency(elements: readonly Record<string, unknown>[], at: string): void {
    const upsert = preparedStatement(this.db, 'INSERT OR REPLACE INTO staff_submitted_residency (employee_number, fields, submitted_at) VALUES (?, ?, ?)');
    const keys = ['SettledStatus', 'SettledStatusShareCode', 'PreSettledStatus', 'PreSettledStatusExpiryDate', 'TemporaryLeaveToRemain', 'TemporaryLeaveToRemainExpiryDate'];
    this.db.transaction(() => {
      for (const e of elements) {
        const fields = Object.fromEntries(keys.filter((k) => k in e).map((k) => [k, e[k]]));
        if (typeof e.EmployeeNumber === 'string' && Object.keys(fields).length > 0) upsert.run(e.EmployeeNumber, JSON.stringify(fields), at);
      }
    }).immediate();
  }

  accrual(employeeId: number): { raw: Record<string, unknown>; fetchedAt: string } | null {
    const row = preparedStatement(this.db, 'SELECT raw, fetched_at FROM staff_accrual WHERE employee_id = ?').get(employeeId) as { raw: string; fetched_at: string } | undefined;
    return row ? { raw: JSON.parse(row.raw) as Record<string, unknown>, fetchedAt: row.fetched_at } : null;
  }

  storeAccrual(employeeId: number, raw: Record<string, unknown>, fetchedAt: string): void {
    preparedStatement(this.db, 'INSERT OR REPLACE INTO staff_accrual (employee_id, fetched_at, raw) VALUES (?, ?, ?)').run(employeeId, fetchedAt, JSON.stringify(raw));
  }

  locations(): CachedLocation[] {
    return (preparedStatement(this.db, 'SELECT location_id, description, country, area, accounting_system_code FROM staff_locations ORDER BY location_id').all() as LocationRow[]).map(toLocation);
  }

  location(locationId: number): CachedLocation | null {
    const row = preparedStatement(this.db, 'SELECT location_id, description, country, area, accounting_system_code FROM staff_locations WHERE location_id = ?').get(locationId) as
      | LocationRow
      | undefined;
    return row ? toLocation(row) : null;
  }

  /**
   * Deletes every cached staff record and the sync history (docs/staff.md, "Personal data"), then
   * rebuilds staff.db (VACUUM) and empties its write-ahead log, so no page of either file still holds
   * the deleted data (a DELETE alone only marks pages free).
   */
  purge(): Record<string, number> {
    const tables = ['staff_employees', 'staff_employments', 'staff_divisions', 'staff_sources', 'staff_locations', 'staff_accrual', 'staff_submitted_residency', 'staff_sync_state'];
    const removed: Record<string, number> = {};
    this.db.pragma('secure_delete = ON');
    this.db.transaction(() => {
      for (const t of tables) removed[t] = this.db.prepare(`DELETE FROM ${t}`).run().changes;
    }).immediate();
    this.db.exec('VACUUM');
    this.db.pragma('wal_checkpoint(TRUNCATE)');
    return removed;
  }
}

interface LocationRow {
  location_id: number;
  description: string;
  country: string | null;
  area: string | null;
  accounting_system_code: string | null;
}

function toLocation(r: LocationRow): CachedLocation {
  return { locationId: r.location_id, description: r.description, country: r.country, area: r.area, accountingSystemCode: r.accounting_system_code };
}

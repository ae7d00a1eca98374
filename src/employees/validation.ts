import { daysInMonth } from '../domain/dates';
import { LIMITS } from './schemas';

/**
 * Checks a POST Employees body before anything is sent. Every offending field is reported (not just
 * the first), so a manager can fix a file in one go; when any field is wrong nothing is sent.
 */

export interface FieldError {
  /** Position of the element in the array (0-based), or null for the body as a whole. */
  readonly index: number | null;
  readonly employeeNumber: string | null;
  /** The field name, e.g. PreSettledStatusExpiryDate. */
  readonly field: string;
  readonly message: string;
}

export type PostValidation =
  | { readonly ok: true; readonly elements: Record<string, unknown>[] }
  | { readonly ok: false; readonly errors: FieldError[] };

export const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;

const RESIDENCY_FLAGS = ['SettledStatus', 'PreSettledStatus', 'TemporaryLeaveToRemain'] as const;
const EXPIRY_FIELDS = ['PreSettledStatusExpiryDate', 'TemporaryLeaveToRemainExpiryDate'] as const;

/** Fields with a documented maximum length (section 8), checked wherever we send them. */
const LENGTH_LIMITS: Readonly<Record<string, number>> = {
  ReportsTo: LIMITS.ReportsTo,
  AccountingSystemCode: LIMITS.AccountingSystemCode,
  Description: LIMITS.LocationDescription,
  SourceDescription: LIMITS.SourceDescription,
};

/** yes, no or empty, compared case-insensitively (the samples write "Yes"). */
export function yesNoValue(value: unknown): 'yes' | 'no' | '' | null {
  if (typeof value !== 'string') return null;
  const lower = value.toLowerCase();
  return lower === 'yes' || lower === 'no' || lower === '' ? lower : null;
}

export function isYes(value: unknown): boolean {
  return yesNoValue(value) === 'yes';
}

/**
 * Parses the specification's `yyyy-MMM-dd` (e.g. 2027-Mar-05): a real calendar date, month names in
 * English, matched case-insensitively. Returns the canonical text and the ISO date, or null.
 */
export function parseYearMonthNameDay(text: string): { canonical: string; iso: string } | null {
  const m = /^(\d{4})-([A-Za-z]{3})-(\d{2})$/.exec(text);
  if (!m) return null;
  const year = Number(m[1]);
  const monthIndex = MONTHS.findIndex((name) => name.toLowerCase() === m[2]!.toLowerCase());
  const day = Number(m[3]);
  if (monthIndex < 0 || day < 1 || day > daysInMonth(year, monthIndex + 1)) return null;
  const mm = String(monthIndex + 1).padStart(2, '0');
  return { canonical: `${m[1]}-${MONTHS[monthIndex]}-${m[3]}`, iso: `${m[1]}-${mm}-${m[3]}` };
}

/** ISO date to the specification's request format: 2027-03-05 -> 2027-Mar-05. */
export function toYearMonthNameDay(iso: string): string {
  const [y, m, d] = iso.split('-');
  return `${y}-${MONTHS[Number(m) - 1]}-${d}`;
}

function validateElement(element: unknown, index: number): { errors: FieldError[]; normalised: Record<string, unknown> | null } {
  const errors: FieldError[] = [];
  if (typeof element !== 'object' || element === null || Array.isArray(element)) {
    return { errors: [{ index, employeeNumber: null, field: '(element)', message: 'each employee must be a JSON object' }], normalised: null };
  }
  const record = element as Record<string, unknown>;
  const employeeNumber = typeof record.EmployeeNumber === 'string' ? record.EmployeeNumber : null;
  const fail = (field: string, message: string): void => {
    errors.push({ index, employeeNumber, field, message });
  };
  const normalised: Record<string, unknown> = { ...record };

  if (typeof record.EmployeeNumber !== 'string' || record.EmployeeNumber.trim() === '') {
    fail('EmployeeNumber', 'is required and must be non-empty text');
  }

  for (const flag of RESIDENCY_FLAGS) {
    const value = record[flag];
    if (value === undefined || value === null) continue;
    if (yesNoValue(value) === null) fail(flag, `must be yes, no or empty (got ${JSON.stringify(value)})`);
  }
  const yesFlags = RESIDENCY_FLAGS.filter((flag) => isYes(record[flag]));
  if (yesFlags.length > 1) {
    for (const flag of yesFlags) {
      fail(flag, `only one of SettledStatus, PreSettledStatus and TemporaryLeaveToRemain may be yes (yes here: ${yesFlags.join(', ')})`);
    }
  }

  const shareCode = record.SettledStatusShareCode;
  if (shareCode !== undefined && shareCode !== null) {
    if (typeof shareCode !== 'string') fail('SettledStatusShareCode', 'must be text of digits (a JSON number loses leading zeros)');
    else if (shareCode !== '' && !new RegExp(`^\\d{1,${LIMITS.SettledStatusShareCodeDigits}}$`).test(shareCode)) {
      fail('SettledStatusShareCode', `must be up to ${LIMITS.SettledStatusShareCodeDigits} digits (got ${shareCode.length} characters${/\D/.test(shareCode) ? ', not all digits' : ''})`);
    }
  }

  for (const field of EXPIRY_FIELDS) {
    const value = record[field];
    if (value === undefined || value === null || value === '') continue;
    if (typeof value !== 'string') {
      fail(field, 'must be a date written yyyy-MMM-dd, e.g. 2027-Mar-05');
      continue;
    }
    const parsed = parseYearMonthNameDay(value);
    if (!parsed) fail(field, `must be a real date written yyyy-MMM-dd, e.g. 2027-Mar-05 (got ${JSON.stringify(value)})`);
    // The canonical month capitalisation, whatever case the file used.
    else normalised[field] = parsed.canonical;
  }

  for (const [field, max] of Object.entries(LENGTH_LIMITS)) {
    const value = record[field];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string') fail(field, 'must be text');
    else if ([...value].length > max) fail(field, `must be at most ${max} characters (got ${[...value].length})`);
  }
  return { errors, normalised: errors.length === 0 ? normalised : null };
}

/** Validates the whole body (a JSON array of employees). */
export function validateEmployeesForPost(body: unknown): PostValidation {
  if (!Array.isArray(body)) {
    return { ok: false, errors: [{ index: null, employeeNumber: null, field: '(body)', message: 'must be a JSON array of employee objects' }] };
  }
  if (body.length === 0) {
    return { ok: false, errors: [{ index: null, employeeNumber: null, field: '(body)', message: 'contains no employees' }] };
  }
  const errors: FieldError[] = [];
  const elements: Record<string, unknown>[] = [];
  body.forEach((element, index) => {
    const result = validateElement(element, index);
    errors.push(...result.errors);
    if (result.normalised) elements.push(result.normalised);
  });
  return errors.length > 0 ? { ok: false, errors } : { ok: true, elements };
}

/** One line per error, for the CLI and logs. */
export function describeFieldError(e: FieldError): string {
  const where = e.index === null ? '' : `employee ${e.index + 1}${e.employeeNumber ? ` (${e.employeeNumber})` : ''}: `;
  return `${where}${e.field} ${e.message}`;
}

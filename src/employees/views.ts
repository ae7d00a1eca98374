import { addDays, isIsoDate, toDayNumber, type IsoDate } from '../domain/dates';
import type { AccrualView, ResidencyStatusName, ResidencyView } from './model';
import { isYes, parseYearMonthNameDay } from './validation';

/**
 * Pure presentation rules of the lookups: residency warnings, holiday balances, location timezones.
 */

/**
 * An expiry date as the service or a file may write it: the request format yyyy-MMM-dd, an ISO date,
 * or an ISO date-time (response formats are not shown in the spec). Returns YYYY-MM-DD or null.
 */
export function parseExpiryDate(value: unknown): IsoDate | null {
  if (typeof value !== 'string' || value.trim() === '') return null;
  const text = value.trim();
  const named = parseYearMonthNameDay(text);
  if (named) return named.iso as IsoDate;
  const isoPrefix = text.slice(0, 10);
  if (isIsoDate(isoPrefix) && (text.length === 10 || text[10] === 'T' || text[10] === ' ')) return isoPrefix;
  return null;
}

/**
 * Which residency status applies and whether its expiry is near. The specification says the expiry
 * dates exist "to warn customers of nearing expiry": we warn from `windowDays` before the date, and
 * after it has passed.
 */
export function residencyView(fields: Readonly<Record<string, unknown>>, today: IsoDate, windowDays: number): ResidencyView {
  let status: ResidencyStatusName | null = null;
  let expiryField: string | null = null;
  if (isYes(fields.SettledStatus)) status = 'settled';
  else if (isYes(fields.PreSettledStatus)) {
    status = 'pre-settled';
    expiryField = 'PreSettledStatusExpiryDate';
  } else if (isYes(fields.TemporaryLeaveToRemain)) {
    status = 'temporary leave to remain';
    expiryField = 'TemporaryLeaveToRemainExpiryDate';
  }
  const shareCode = typeof fields.SettledStatusShareCode === 'string' && fields.SettledStatusShareCode !== '' ? fields.SettledStatusShareCode : null;
  const expiryDate = expiryField ? parseExpiryDate(fields[expiryField]) : null;
  const daysToExpiry = expiryDate ? toDayNumber(expiryDate) - toDayNumber(today) : null;
  let warning: string | null = null;
  if (status && expiryDate && daysToExpiry !== null) {
    if (daysToExpiry < 0) warning = `${status} status expired on ${expiryDate} (${-daysToExpiry} days ago)`;
    else if (daysToExpiry === 0) warning = `${status} status expires today (${expiryDate})`;
    else if (daysToExpiry <= windowDays) warning = `${status} status expires on ${expiryDate}, in ${daysToExpiry} day${daysToExpiry === 1 ? '' : 's'}`;
  }
  return { status, shareCode, expiryDate, daysToExpiry, warning };
}

/** The last day whose expiry falls inside the window, for SQL-free filtering. */
export function warningHorizon(today: IsoDate, windowDays: number): IsoDate {
  return addDays(today, windowDays);
}

function toNumber(value: unknown): number | null {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value.trim())) return Number(value);
  return null;
}

/** Yes / No (any case) to a boolean; anything else unknown. */
export function yesNoFlag(value: unknown): boolean | null {
  if (typeof value === 'boolean') return value;
  if (typeof value !== 'string') return null;
  const v = value.trim().toLowerCase();
  return v === 'yes' || v === 'true' ? true : v === 'no' || v === 'false' ? false : null;
}

/**
 * A holiday balance for display. For non-flexible staff the service sets the calculation fields to
 * "0" (the spec's rule): they do not apply, so they become null ("not applicable"), never 0 hours.
 */
export function accrualView(
  raw: Readonly<Record<string, unknown>>,
  fetchedAt: string,
  source: 'live' | 'cache',
  liveError: string | null = null,
): AccrualView {
  const flexible = yesNoFlag(raw.IsFlexible);
  const applies = flexible !== false;
  const units = toNumber(raw.Units) ?? 0;
  const unitType = typeof raw.UnitType === 'string' && raw.UnitType.trim() !== '' ? raw.UnitType.trim() : 'units';
  const dayRate = raw.DayRate === undefined || raw.DayRate === null ? null : String(raw.DayRate);
  return {
    employeeId: Number(raw.EmployeeID),
    units,
    unitType,
    balanceText: `${formatUnits(units)} ${unitType}`,
    flexible,
    avgHoursPerDay: applies ? toNumber(raw.AvgSummary) : null,
    avgHoursPerWeek: applies ? toNumber(raw.AvgTime) : null,
    avgDaysPerWeek: applies ? toNumber(raw.AvgDays) : null,
    dayRate: applies ? dayRate : null,
    asOf: typeof raw.StartDateTime === 'string' ? raw.StartDateTime : null,
    fetchedAt,
    source,
    liveError,
    raw: { ...raw },
  };
}

function formatUnits(units: number): string {
  return Number.isInteger(units) ? String(units) : units.toFixed(2).replace(/0$/, '');
}

/**
 * The IANA timezone of a location's Country (GET /Locations): UK, Ireland and Jersey are in the
 * specification; "more may be added", so the other Crown Dependencies and common spellings are
 * recognised too. Unknown: null (the caller keeps the default timezone and says so).
 */
export function timezoneForCountry(country: string | null | undefined): string | null {
  if (!country) return null;
  const key = country.trim().toLowerCase().replace(/[^a-z ]/g, '').replace(/\s+/g, ' ');
  switch (key) {
    case 'uk':
    case 'gb':
    case 'united kingdom':
    case 'great britain':
    case 'england':
    case 'scotland':
    case 'wales':
    case 'northern ireland':
      return 'Europe/London';
    case 'ireland':
    case 'ie':
    case 'roi':
    case 'republic of ireland':
    case 'eire':
      return 'Europe/Dublin';
    case 'jersey':
    case 'je':
      return 'Europe/Jersey';
    case 'guernsey':
    case 'gg':
      return 'Europe/Guernsey';
    case 'isle of man':
    case 'im':
      return 'Europe/Isle_of_Man';
    default:
      return null;
  }
}

/**
 * Calendar dates as `YYYY-MM-DD` text, always in the location's own timezone (the spec: "All dates and
 * times are in the timezone of the location"). We never turn them into instants; arithmetic goes
 * through a day number (days since 1970-01-01 on the proleptic Gregorian calendar) so that DST and the
 * machine's timezone cannot shift a date.
 */

import { offsetAt } from './utc-offsets';

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

export type IsoDate = string & { readonly __isoDate: unique symbol };

/** The ends of the date domain. 9999-12-31 is head office's usual "no end"; nothing lies beyond either. */
export const FIRST_DATE = '0001-01-01' as IsoDate;
export const LAST_DATE = '9999-12-31' as IsoDate;

/** Written as YYYY-MM-DD, whether or not it is a date in the calendar (isIsoDate says that). */
export function hasIsoDateShape(text: unknown): text is string {
  return typeof text === 'string' && ISO_DATE.test(text);
}

export function isIsoDate(text: unknown): text is IsoDate {
  if (typeof text !== 'string') return false;
  const m = ISO_DATE.exec(text);
  if (!m) return false;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (month < 1 || month > 12 || day < 1) return false;
  return day <= daysInMonth(year, month);
}

/** Whether a calendar date is inside the domain: isIsoDate also takes the year 0000, before its start. */
export function inDateDomain(date: IsoDate): boolean {
  return date >= FIRST_DATE;
}

export function parseIsoDate(text: string): IsoDate {
  if (!isIsoDate(text)) throw new RangeError(`not a calendar date (YYYY-MM-DD): ${JSON.stringify(text)}`);
  return text;
}

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

export function daysInMonth(year: number, month: number): number {
  return month === 2 && isLeapYear(year) ? 29 : (MONTH_DAYS[month - 1] as number);
}

/*
 * Day numbers use integer civil-calendar arithmetic (H. Hinnant's days_from_civil / civil_from_days)
 * rather than Date objects: an apply computes one for every date it reads, and a Date for each would
 * be an allocation on the apply's hot path (`npm run bench:profile` shows where its time goes).
 * test/unit/domain checks them against Date.
 */

export function toDayNumber(date: IsoDate): number {
  const y0 = (date.charCodeAt(0) - 48) * 1000 + (date.charCodeAt(1) - 48) * 100 + (date.charCodeAt(2) - 48) * 10 + (date.charCodeAt(3) - 48);
  const m = (date.charCodeAt(5) - 48) * 10 + (date.charCodeAt(6) - 48);
  const d = (date.charCodeAt(8) - 48) * 10 + (date.charCodeAt(9) - 48);
  const y = m <= 2 ? y0 - 1 : y0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

export function fromDayNumber(day: number): IsoDate {
  const z = day + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  return `${String(y).padStart(4, '0')}-${m < 10 ? '0' : ''}${m}-${d < 10 ? '0' : ''}${d}` as IsoDate;
}

export function addDays(date: IsoDate, days: number): IsoDate {
  return fromDayNumber(toDayNumber(date) + days);
}

/** Today's date in an IANA timezone, e.g. the location's, independent of the machine's timezone. */
export function todayIn(timeZone: string, now: Date = new Date()): IsoDate {
  const ms = now.getTime();
  return fromDayNumber(Math.floor((ms + offsetAt(timeZone, ms) * 60_000) / 86_400_000));
}

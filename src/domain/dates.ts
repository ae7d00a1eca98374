/**
 * Calendar dates as `YYYY-MM-DD` text, always in the location's own timezone (the spec: "All dates and
 * times are in the timezone of the location"). We never turn them into instants; arithmetic goes
 * through a day number (days since 1970-01-01 on the proleptic Gregorian calendar) so that DST and the
 * machine's timezone cannot shift a date.
 */

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

export type IsoDate = string & { readonly __isoDate: unique symbol };

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

export function parseIsoDate(text: string): IsoDate {
  if (!isIsoDate(text)) throw new RangeError(`not a calendar date (YYYY-MM-DD): ${JSON.stringify(text)}`);
  return text;
}

export function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

export function toDayNumber(date: IsoDate): number {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return Math.round(Date.UTC(y, m - 1, d) / 86_400_000);
}

export function fromDayNumber(day: number): IsoDate {
  return new Date(day * 86_400_000).toISOString().slice(0, 10) as IsoDate;
}

export function addDays(date: IsoDate, days: number): IsoDate {
  return fromDayNumber(toDayNumber(date) + days);
}

/** Today's date in an IANA timezone, e.g. the location's, independent of the machine's timezone. */
export function todayIn(timeZone: string, now: Date = new Date()): IsoDate {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).formatToParts(now);
  const get = (type: string): string => parts.find((p) => p.type === type)?.value ?? '';
  return parseIsoDate(`${get('year')}-${get('month')}-${get('day')}`);
}

export function isValidTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone });
    return true;
  } catch {
    return false;
  }
}

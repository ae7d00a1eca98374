/**
 * Day arithmetic for the simulator and its reference model. Deliberately separate from
 * src/domain/dates.ts: the reference model must not share code with what it checks.
 */
const DAY_MS = 86_400_000;

export function dayOf(date: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!m) throw new RangeError(`not a date: ${date}`);
  return Math.round(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) / DAY_MS);
}

export function dateOf(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

/** Today in an IANA timezone (the bench and load runs put "today" inside the generated ranges). */
export function todayInZone(timeZone: string, now = new Date()): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(now);
}

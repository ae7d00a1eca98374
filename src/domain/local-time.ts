/** A clock field as two digits: 7 -> `07`. */
export function pad2(n: number): string {
  return String(n).padStart(2, '0');
}

/**
 * How the CLI shows a stored time: the machine's local time with its UTC offset, e.g.
 * `2026-11-22 22:05:03 +00:00`. Stored times are UTC ISO strings, which a manager reading `status` at
 * 23:30 in summer would take for an hour ago; the offset keeps a pasted line unambiguous for support.
 * `--json` keeps the ISO strings. The zone is the process's (the TZ variable, else the system's).
 */
export function timeWithZone(iso: string | null | undefined): string {
  if (!iso) return '-';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  // getTimezoneOffset is minutes *behind* UTC (London in summer: -60), so the sign flips.
  const offset = -date.getTimezoneOffset();
  const sign = offset < 0 ? '-' : '+';
  const abs = Math.abs(offset);
  return (
    `${date.getFullYear()}-${pad2(date.getMonth() + 1)}-${pad2(date.getDate())} ` +
    `${pad2(date.getHours())}:${pad2(date.getMinutes())}:${pad2(date.getSeconds())} ${sign}${pad2(Math.floor(abs / 60))}:${pad2(abs % 60)}`
  );
}

/**
 * The hour and minute of a stored time on the machine's clock, 24-hour: `07:05`, as the tray and the
 * severity lines show it. From Date's local fields rather than `toLocaleTimeString`, which in the
 * agent's process would page in ICU's date formatting for good.
 */
export function clockTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${pad2(date.getHours())}:${pad2(date.getMinutes())}`;
}

/**
 * The till file's integer columns hold 64-bit values, but many tills read them into 32-bit signed
 * integers (money as INT, an ODBC driver's default INTEGER binding), which wraps anything above
 * 2,147,483,647: 2147483648 reads as -2147483648. A value an update carries beyond that is stored as
 * sent, and the update gets a warning naming the field and the view column, so the site finds out
 * before a till charges a wrapped price (docs/pos-database.md, "Integer ranges").
 */

/** The largest value a 32-bit signed integer holds. */
export const INT32_MAX = 2_147_483_647;

/** Whether a till reading the value into a 32-bit signed integer would misread it. */
export function beyond32Bits(value: number): boolean {
  return value > INT32_MAX || value < -INT32_MAX - 1;
}

/**
 * The warning for a value beyond 32 bits: `field` as head office sends it, `shown` the value as the
 * till file stores it (for money, the amount; the minor units are given too), `column` where a till
 * reads it.
 */
export function wideIntegerMessage(field: string, shown: string, stored: number, column: string): string {
  const units = shown === String(stored) ? '' : ` (${stored} minor units)`;
  return `${field} ${shown}${units} is beyond ${INT32_MAX}, the largest 32-bit integer; stored, but a till that reads ${column} as a 32-bit integer misreads it`;
}

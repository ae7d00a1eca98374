/** A span of constant UTC offset in a timezone. */
export interface OffsetInterval {
  /** Start, inclusive, in UTC epoch milliseconds (whole minutes). */
  readonly fromMs: number;
  /** End, exclusive. */
  readonly toMs: number;
  /** Minutes east of UTC: London in summer 60, New York in winter -300. */
  readonly offsetMinutes: number;
}

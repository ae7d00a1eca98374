import { addDays, todayIn } from '../domain/dates';
import { preparedStatement, type Db } from '../store/database';

export interface DailyStats {
  /** YYYY-MM-DD in the agent's default timezone, oldest first, one per day even when empty. */
  readonly days: string[];
  readonly delivered: number[];
  readonly rejected: number[];
  /** Mean and max time to apply the updates received that day, ms; null when none was applied. */
  readonly applyMsMean: (number | null)[];
  readonly applyMsMax: (number | null)[];
}

/**
 * Deliveries and apply times per day over the last `days` days, for the chart. Reads only rows of that
 * window (indexed by received_at), so the cost does not grow with history.
 */
export function dailyStats(db: Db, days: number, timeZone: string, now: Date = new Date()): DailyStats {
  // Calendar days back from today: a day is not a fixed length (clock changes), so stepping back a
  // fixed period from now skips a day near midnight after a change.
  const today = todayIn(timeZone, now);
  const uniqueDays: string[] = [];
  for (let i = days - 1; i >= 0; i--) uniqueDays.push(addDays(today, -i));
  // A day of slack either side covers timezone offsets; rows outside the listed days are dropped below.
  const since = new Date(now.getTime() - (days + 1) * 86_400_000).toISOString();
  const rows = db
    .prepare<[string], { received_at: string; outcome: string; apply_ms: number | null }>(
      `SELECT d.received_at, d.outcome, CASE WHEN d.outcome = 'accepted' AND i.state = 'applied' THEN i.apply_ms END AS apply_ms
       FROM deliveries d LEFT JOIN inbox i ON i.id = d.inbox_id WHERE d.received_at >= ?`,
    )
    .all(since);
  const index = new Map(uniqueDays.map((d, i) => [d, i]));
  const delivered = uniqueDays.map(() => 0);
  const rejected = uniqueDays.map(() => 0);
  const applySum = uniqueDays.map(() => 0);
  const applyCount = uniqueDays.map(() => 0);
  const applyMax: (number | null)[] = uniqueDays.map(() => null);
  for (const r of rows) {
    const i = index.get(todayIn(timeZone, new Date(r.received_at)));
    if (i === undefined) continue;
    if (r.outcome === 'rejected') rejected[i]! += 1;
    else delivered[i]! += 1;
    if (r.apply_ms !== null) {
      applySum[i]! += r.apply_ms;
      applyCount[i]! += 1;
      applyMax[i] = Math.max(applyMax[i] ?? 0, r.apply_ms);
    }
  }
  return {
    days: uniqueDays,
    delivered,
    rejected,
    applyMsMean: applySum.map((s, i) => (applyCount[i]! > 0 ? Math.round((s / applyCount[i]!) * 10) / 10 : null)),
    applyMsMax: applyMax.map((m) => (m === null ? null : Math.round(m * 10) / 10)),
  };
}

/**
 * A cheap fingerprint of everything the window shows from the database; the live view pushes an
 * event when it changes (the CLI in another process can change the data too, so we look, not listen).
 */
export function changeFingerprint(agent: Db, till: Db): string {
  // Polled by every open window: prepared once per connection (see preparedStatement).
  const row = preparedStatement<[], { d: number; a: number; p: number; w: number }>(
    agent,
    `SELECT (SELECT coalesce(max(id), 0) FROM deliveries) AS d,
            (SELECT coalesce(max(id), 0) FROM audit_log) AS a,
            (SELECT count(*) FROM inbox WHERE state = 'pending') AS p,
            (SELECT count(*) FROM update_warnings WHERE acknowledged_at IS NULL) AS w`,
  ).get()!;
  const applied = preparedStatement<[], { l: string }>(till, `SELECT coalesce(group_concat(location_id || ':' || coalesce(last_change_sequence, '-'), ','), '') AS l FROM locations`).get()!;
  return `${row.d}|${row.a}|${row.p}|${row.w}|${applied.l}`;
}

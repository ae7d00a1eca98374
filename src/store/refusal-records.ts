import type { Db } from './database';

/**
 * How many refused calls a day are recorded one by one. Each refusal of the first
 * REFUSALS_RECORDED_PER_DAY of a UTC day gets its delivery history row (and, when its body was read,
 * its quarantine row); beyond that, so that nobody, a holder of the token included, can fill the disk
 * with refusals, the day keeps one tally instead: a quarantine row and a delivery history row that
 * count the further refusals by reason and add up their sizes, updated in place
 * (docs/operations.md, "Refused bodies cannot fill the disk").
 */
export const REFUSALS_RECORDED_PER_DAY = 2_000;

/** The tally's quarantine row is known by this error id (no refusal of a body has it). */
export const TALLY_ERROR_ID = 'refusals_not_recorded';

const TALLY_PREFIX = 'further refusals this day (UTC), not recorded one by one (the day reached REFUSALS_RECORDED_PER_DAY); by reason: ';

/** The tally's reason: its counts by error id, most first. */
export function tallyReason(counts: ReadonlyMap<string, number>): string {
  const parts = [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([id, n]) => `${id} ${n}`);
  return `${TALLY_PREFIX}${parts.join(', ')}`;
}

/** The counts a tally's reason holds (tallyReason read back, at the first refusal after a restart). */
export function readTallyReason(reason: string): Map<string, number> {
  const counts = new Map<string, number>();
  if (!reason.startsWith(TALLY_PREFIX)) return counts;
  for (const part of reason.slice(TALLY_PREFIX.length).split(', ')) {
    const match = /^(\S+) (\d+)$/.exec(part);
    if (match) counts.set(match[1]!, Number(match[2]));
  }
  return counts;
}

/** What is known of a day's refusals (kept per connection; read from agent.db at the day's first refusal). */
interface Day {
  readonly day: string;
  /** Refusals of this day recorded one by one. */
  recorded: number;
  tally: { quarantineId: number; deliveryId: number; bytes: number; counts: Map<string, number> } | null;
}

/** One refusal, as the tally counts it. */
export interface Refusal {
  readonly receivedAt: string;
  readonly source: string;
  readonly errorId: string;
  readonly bytes: number;
  readonly httpStatus: number;
}

/**
 * Decides, inside the transaction that records a refusal, whether it is recorded one by one, and
 * otherwise counts it in the day's tally. One per agent.db connection that records refusals.
 */
export class RefusalRecords {
  private current: Day | null = null;
  private readonly recordedSince;
  private readonly findTally;
  private readonly insertTallyQuarantine;
  private readonly insertTallyDelivery;
  private readonly updateTallyQuarantine;
  private readonly updateTallyDelivery;

  constructor(
    db: Db,
    private readonly perDay: number = REFUSALS_RECORDED_PER_DAY,
  ) {
    this.recordedSince = db.prepare<[string], { n: number }>(
      "SELECT count(*) AS n FROM deliveries WHERE received_at >= ? AND outcome = 'rejected'",
    );
    this.findTally = db.prepare<[string, string], { quarantine_id: number; delivery_id: number; bytes: number; reason: string }>(
      `SELECT q.id AS quarantine_id, d.id AS delivery_id, q.body_bytes AS bytes, q.reason
       FROM quarantine q JOIN deliveries d ON d.quarantine_id = q.id
       WHERE q.received_at >= ? AND q.error_id = ? ORDER BY q.id LIMIT 1`,
    );
    this.insertTallyQuarantine = db.prepare(
      `INSERT INTO quarantine (received_at, sender, source, content_type, body, body_bytes, body_sha256, error_id, field, reason)
       VALUES (@receivedAt, NULL, @source, NULL, x'', @bytes, '', @errorId, NULL, @reason)`,
    );
    this.insertTallyDelivery = db.prepare(
      `INSERT INTO deliveries (received_at, sender, source, body_bytes, inbox_id, quarantine_id, outcome, http_status,
                               location_id, change_sequence, reason)
       VALUES (@receivedAt, NULL, @source, @bytes, NULL, @quarantineId, 'rejected', @status, NULL, NULL, @reason)`,
    );
    this.updateTallyQuarantine = db.prepare('UPDATE quarantine SET body_bytes = @bytes, reason = @reason WHERE id = @id');
    this.updateTallyDelivery = db.prepare('UPDATE deliveries SET body_bytes = @bytes, reason = @reason, http_status = @status WHERE id = @id');
  }

  /** This refusal's day, read from agent.db when it is a new one (after a start, or at midnight UTC). */
  private dayOf(receivedAt: string): Day {
    const day = receivedAt.slice(0, 10);
    if (this.current?.day === day) return this.current;
    const since = `${day}T00:00:00.000Z`;
    const found = this.findTally.get(since, TALLY_ERROR_ID);
    const tally = found
      ? { quarantineId: found.quarantine_id, deliveryId: found.delivery_id, bytes: found.bytes, counts: readTallyReason(found.reason) }
      : null;
    const rows = this.recordedSince.get(since)!.n;
    this.current = { day, recorded: tally ? rows - 1 : rows, tally };
    return this.current;
  }

  /**
   * Inside the recording transaction: true when this refusal is recorded one by one (counted as
   * such); false when the day's record is full and it was counted in the day's tally instead.
   */
  admit(refusal: Refusal): boolean {
    const day = this.dayOf(refusal.receivedAt);
    if (day.recorded < this.perDay) {
      day.recorded += 1;
      return true;
    }
    this.count(day, refusal);
    return false;
  }

  /** The day's tally rows, for a refusal that was not recorded one by one (admit() returned false). */
  tallyIds(receivedAt: string): { quarantineId: number; deliveryId: number } {
    const tally = this.dayOf(receivedAt).tally!;
    return { quarantineId: tally.quarantineId, deliveryId: tally.deliveryId };
  }

  private count(day: Day, refusal: Refusal): void {
    // Ids are the agent's own words; a space would not read back (readTallyReason).
    const id = refusal.errorId.replace(/\s/g, '_');
    if (day.tally === null) {
      const counts = new Map([[id, 1]]);
      const reason = tallyReason(counts);
      const quarantineId = Number(
        this.insertTallyQuarantine.run({ receivedAt: refusal.receivedAt, source: refusal.source, bytes: refusal.bytes, errorId: TALLY_ERROR_ID, reason }).lastInsertRowid,
      );
      const deliveryId = Number(
        this.insertTallyDelivery.run({ receivedAt: refusal.receivedAt, source: refusal.source, bytes: refusal.bytes, quarantineId, status: refusal.httpStatus, reason })
          .lastInsertRowid,
      );
      day.tally = { quarantineId, deliveryId, bytes: refusal.bytes, counts };
      return;
    }
    const tally = day.tally;
    tally.counts.set(id, (tally.counts.get(id) ?? 0) + 1);
    tally.bytes += refusal.bytes;
    const reason = tallyReason(tally.counts);
    this.updateTallyQuarantine.run({ id: tally.quarantineId, bytes: tally.bytes, reason });
    this.updateTallyDelivery.run({ id: tally.deliveryId, bytes: tally.bytes, reason, status: refusal.httpStatus });
  }

  /**
   * What is known is read again: after a transaction that called admit() was rolled back, or when
   * another connection may have recorded refusals of its own (Inbox checks SQLite's data_version).
   */
  forget(): void {
    this.current = null;
  }
}

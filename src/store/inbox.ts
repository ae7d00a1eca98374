import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { readBody, readBodyFromSteps, readStoredBody, sameMeaning, sameMeaningSteps, type EnvelopeHeader, type ReadBody, type ReadBodyResult } from '../domain/body';
import { envelopeIdsOf, envelopeIdsSteps, type EnvelopeIds } from '../domain/envelope-ids';
import type { EnvelopeError } from '../domain/payload';
import { classifyReceipt, type ReceiptDecision } from '../domain/sequence';
import { crashPoint } from '../crash-points';
import { isStorageFailure } from '../errors';
import { BodyFileSource, bodyFilePath, removeBodyFile, type BodyFile } from './body-files';
import { BodyStore, releaseBody } from './bodies';
import { cutOptional, cutText, MAX_CONTENT_TYPE_CHARS, MAX_FIELD_CHARS, MAX_REASON_CHARS, MAX_SENDER_CHARS } from './bounded-text';
import type { Db } from './database';
import { REFUSALS_RECORDED_PER_DAY, RefusalRecords, TALLY_ERROR_ID } from './refusal-records';
import { runInSlices } from '../threads/slices';

export type DeliverySource = 'webhook' | 'import';

/**
 * How long a large body's check runs before the thread answers what else waits (small deliveries
 * arriving meanwhile): short next to a small delivery's own store, so none waits long behind a
 * slice (the bench's longest small ack during a receipt measures it).
 */
export const RECEIPT_SLICE_MS = 5;

export interface IncomingDelivery {
  readonly raw: Buffer;
  readonly sender: string | null;
  readonly source: DeliverySource;
  readonly contentType: string | null;
  readonly receivedAt?: Date;
}

/** A delivery whose body the receiver streamed to a file of its own (src/store/body-files.ts). */
export interface FileDelivery extends Omit<IncomingDelivery, 'raw'> {
  readonly file: BodyFile;
}

export type ReceiptOutcome =
  | {
      readonly kind: 'stored';
      /** new: a body we did not have; duplicate: already held (nothing new stored); conflict: a different body under a used ChangeSequence. */
      readonly decision: ReceiptDecision['kind'];
      readonly inboxId: number;
      readonly deliveryId: number;
      readonly envelope: EnvelopeHeader;
    }
  | { readonly kind: 'rejected'; readonly quarantineId: number; readonly deliveryId: number; readonly error: EnvelopeError; readonly errorId: string };

export type { EnvelopeHeader };

/** A delivery's body as store() needs it, in memory or in a file of its own. */
interface ReceivedBody {
  readonly bytes: number;
  readonly sha256: string;
  /** The whole body, only where it must be whole: kept in quarantine, compared with a stored body of the same ChangeSequence. */
  whole(): Buffer;
  readonly file: BodyFile | null;
}


/** What the webhook receiver needs of the inbox, wherever it runs (InboxServer on the webhook's thread in `serve`). */
export interface InboxPort {
  receive(delivery: IncomingDelivery): Promise<ReceiptOutcome>;
  receiveFile(delivery: FileDelivery): Promise<ReceiptOutcome>;
  quarantine(input: QuarantineInput): Promise<{ quarantineId: number; deliveryId: number }>;
  recordRefused(input: RefusedDelivery): Promise<number>;
}

export interface RefusedDelivery {
  readonly sender: string | null;
  readonly source: DeliverySource;
  readonly bytes: number;
  readonly httpStatus: number;
  /** The refusal's id (what the sender was answered), for the day's tally once it is full (refusal-records.ts). */
  readonly errorId?: string;
  readonly reason: string;
  readonly receivedAt?: Date;
}

export function sha256(raw: Buffer): string {
  return createHash('sha256').update(raw).digest('hex');
}

export interface QuarantineInput {
  readonly raw: Buffer;
  readonly sender: string | null;
  readonly source: DeliverySource;
  readonly contentType: string | null;
  readonly errorId: string;
  readonly field: string | null;
  readonly reason: string;
  readonly httpStatus: number;
  readonly receivedAt?: Date;
}

/**
 * How much of the refused bodies is kept (issue 24: a flood of bad bodies filled the disk). Each day
 * (UTC) the first `bodiesPerDay` bodies, up to `bytesPerDay` in all, are kept byte for byte; beyond
 * that, and whenever keeping one would leave less than `diskFloorBytes` free on the data folder's disk,
 * only the row is kept: its size, SHA-256, reason and sender, with an empty body.
 */
export interface QuarantineLimits {
  readonly bodiesPerDay: number;
  readonly bytesPerDay: number;
  readonly diskFloorBytes: number;
  /** Free bytes on the data folder's disk now; null when it cannot be read. */
  readonly freeBytes: () => number | null;
  /**
   * Refusals recorded one by one per day (refusal-records.ts); by default REFUSALS_RECORDED_PER_DAY,
   * or bodiesPerDay when that is more (each kept body has its row).
   */
  readonly refusalsPerDay?: number;
}

/** The configured budget (retention.quarantine*, disk.criticalFreeBytes), as it travels to the webhook's thread. */
export type QuarantineBudget = Pick<QuarantineLimits, 'bodiesPerDay' | 'bytesPerDay' | 'diskFloorBytes'>;

export function quarantineBudget(config: {
  retention: { quarantineBodiesPerDay: number; quarantineBytesPerDay: number };
  disk: { criticalFreeBytes: number };
}): QuarantineBudget {
  return { bodiesPerDay: config.retention.quarantineBodiesPerDay, bytesPerDay: config.retention.quarantineBytesPerDay, diskFloorBytes: config.disk.criticalFreeBytes };
}

/** The budget with free space read from the disk holding `dataDir` (available to this user). */
export function quarantineLimits(dataDir: string, budget: QuarantineBudget): QuarantineLimits {
  return {
    ...budget,
    freeBytes: () => {
      const stats = fs.statfsSync(dataDir);
      return Number(stats.bavail) * Number(stats.bsize);
    },
  };
}

/** Whether a refused body of `bytes` is kept, given what this day has kept so far (pure). */
export function keepQuarantinedBody(
  bytes: number,
  keptToday: { bodies: number; bytes: number },
  limits: Pick<QuarantineLimits, 'bodiesPerDay' | 'bytesPerDay' | 'diskFloorBytes'>,
  freeBytes: number | null,
): { keep: true } | { keep: false; why: string } {
  if (keptToday.bodies >= limits.bodiesPerDay || keptToday.bytes + bytes > limits.bytesPerDay) {
    return { keep: false, why: 'the daily quarantine budget is used up' };
  }
  if (freeBytes !== null && freeBytes - bytes < limits.diskFloorBytes) return { keep: false, why: 'the disk is almost full' };
  return { keep: true };
}

/**
 * The durable inbox, in agent.db. Every method commits before it returns, so the webhook answers 200
 * only for what is on disk (WAL + synchronous=FULL). It never touches the till's file, so a receipt
 * never waits for an apply's write lock.
 */
export class Inbox {
  private readonly findSameSequence;
  private readonly insertInbox;
  private readonly bodies: BodyStore;
  private readonly insertDelivery;
  private readonly insertQuarantine;
  private readonly ensureLocation;
  private readonly keptSince;
  /** How many refusals a day are recorded one by one, and the day's tally beyond them. */
  private readonly refusals: RefusalRecords;
  /** Bodies kept in quarantine on the current UTC day (counted from agent.db on the day's first refusal). */
  private keptToday: { day: string; bodies: number; bytes: number } | null = null;
  /** SQLite's data_version when this connection last recorded a refusal: it changes when another connection commits. */
  private readonly dataVersion;
  private seenDataVersion: number | null = null;

  constructor(
    private readonly db: Db,
    private readonly limits: QuarantineLimits | null = null,
  ) {
    this.findSameSequence = db.prepare<[number, number], { id: number; body_sha256: string; state: string }>(
      'SELECT id, body_sha256, state FROM inbox WHERE location_id = ? AND change_sequence = ? ORDER BY id',
    );
    this.insertInbox = db.prepare(
      `INSERT INTO inbox (location_id, change_sequence, parent_change_sequence, body_bytes, body_sha256,
                          received_at, sender, source, state)
       VALUES (@locationId, @changeSequence, @parent, @bytes, @sha, @receivedAt, @sender, @source, @state)`,
    );
    this.bodies = new BodyStore(db);
    this.insertDelivery = db.prepare(
      `INSERT INTO deliveries (received_at, sender, source, body_bytes, inbox_id, quarantine_id, outcome, http_status,
                               location_id, change_sequence, reason)
       VALUES (@receivedAt, @sender, @source, @bytes, @inboxId, @quarantineId, @outcome, @status, @locationId, @changeSequence, @reason)`,
    );
    this.insertQuarantine = db.prepare(
      `INSERT INTO quarantine (received_at, sender, source, content_type, body, body_bytes, body_sha256, error_id, field, reason)
       VALUES (@receivedAt, @sender, @source, @contentType, @body, @bytes, @sha, @errorId, @field, @reason)`,
    );
    // length(body) is read from the record header; a row whose body was not kept has an empty one.
    this.keptSince = db.prepare<[string, string], { bodies: number; bytes: number }>(
      'SELECT count(*) AS bodies, coalesce(sum(body_bytes), 0) AS bytes FROM quarantine WHERE received_at >= ? AND length(body) = body_bytes AND error_id <> ?',
    );
    this.dataVersion = db.prepare('PRAGMA data_version').pluck();
    this.refusals = new RefusalRecords(db, limits?.refusalsPerDay ?? Math.max(REFUSALS_RECORDED_PER_DAY, limits?.bodiesPerDay ?? 0));
    this.ensureLocation = db.prepare(
      'INSERT INTO known_locations (location_id, first_seen_at) VALUES (?, ?) ON CONFLICT (location_id) DO NOTHING',
    );
  }

  /**
   * Body files whose row's commit failed writing or flushing agent.db. Such a commit can still be
   * in the WAL, and the recovery after a crash or power cut would bring its row back (SQLite reports
   * SQLITE_IOERR_FSYNC, yet the frames it wrote are there): the file must stay until that can no
   * longer happen, that is once a later commit on this connection has written over those frames.
   * Then each is removed unless a row names it; a restart's sweep (sweepBodyFiles) removes the rest.
   */
  private readonly unsettledFiles = new Set<string>();

  /** Validates the envelope and stores the delivery (inbox, or quarantine when the envelope is bad). */
  receive(delivery: IncomingDelivery): ReceiptOutcome {
    const { raw } = delivery;
    // Read lazily: every item is checked to parse, but the body is never one string and one object.
    const checked = readBody(raw, { checkItems: true });
    // A refused body still names its update when its envelope's LocationID and ChangeSequence read.
    const ids = checked.ok ? null : envelopeIdsOf(raw);
    const outcome = this.store(delivery, { bytes: raw.length, sha256: sha256(raw), whole: () => raw, file: null }, checked, undefined, ids);
    this.settleFiles();
    return outcome;
  }

  /** After a commit went through: the body files of earlier failed commits no row names are removed. */
  private settleFiles(): void {
    if (this.unsettledFiles.size === 0) return;
    const dataDir = path.dirname(this.db.name);
    const named = this.db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM inbox_body_files WHERE file = ?');
    for (const name of this.unsettledFiles) {
      if (named.get(name)!.n === 0) removeBodyFile(dataDir, name);
      this.unsettledFiles.delete(name);
    }
  }

  /**
   * Stores a delivery whose body is already a file of its own, flushed to the disk: the row that names
   * it is committed here (the 200 follows). The body is checked piece by piece from the file
   * (readBodyFrom), never whole in memory; a body that is refused, or already held, has its file
   * removed once the row is committed. The check runs in slices of about `sliceMs` of this thread's
   * time (RECEIPT_SLICE_MS), other requests answered between them; the row is committed in one go.
   */
  async receiveFile(delivery: FileDelivery, sliceMs = RECEIPT_SLICE_MS): Promise<ReceiptOutcome> {
    const dataDir = path.dirname(this.db.name);
    let outcome: ReceiptOutcome;
    try {
      const source = BodyFileSource.open(bodyFilePath(dataDir, delivery.file.name));
      try {
        const body: ReceivedBody = { bytes: source.length, sha256: delivery.file.sha256, whole: () => source.whole(), file: delivery.file };
        const checked = await runInSlices(readBodyFromSteps(source, { checkItems: true }), sliceMs);
        const meanings = checked.ok ? await this.compareWithStored(checked, body.sha256, sliceMs) : undefined;
        const ids = checked.ok ? null : await runInSlices(envelopeIdsSteps(source), sliceMs);
        outcome = this.store(delivery, body, checked, meanings, ids);
      } finally {
        source.close();
      }
    } catch (err) {
      // Not stored (the sender is answered 503 and sends again). A failure of agent.db's storage may
      // have left the commit in the WAL (see unsettledFiles): the file stays until that is settled.
      if (isStorageFailure(err)) this.unsettledFiles.add(delivery.file.name);
      else removeBodyFile(dataDir, delivery.file.name);
      throw err;
    }
    this.settleFiles();
    if (outcome.kind === 'rejected' || outcome.decision === 'duplicate') removeBodyFile(dataDir, delivery.file.name);
    else crashPoint('body-row-committed');
    return outcome;
  }

  /**
   * For a redelivery whose bytes differ from the bodies already stored under its ChangeSequence:
   * whether it means the same as each (sameMeaning), compared in slices like the check before it,
   * item by item from both bodies' bytes, before the write transaction. The transaction uses these
   * answers and compares there only a body stored meanwhile, or one stored without a layout.
   */
  private async compareWithStored(checked: ReadBody, sha256: string, sliceMs: number): Promise<ReadonlyMap<number, boolean>> {
    const meanings = new Map<number, boolean>();
    const existing = this.findSameSequence.all(checked.envelope.LocationID, checked.envelope.ChangeSequence);
    // The same bytes: a duplicate, decided by the hash alone.
    if (existing.some((e) => e.body_sha256 === sha256)) return meanings;
    for (const e of existing) {
      let stored: ReadBodyResult;
      try {
        const layout = this.bodies.layout(e.id);
        const ranges = this.bodies.ranges(e.id);
        if (!layout || !ranges) continue;
        stored = readStoredBody(layout, ranges);
      } catch {
        // A layout that does not read: the transaction compares the bodies whole, as before layouts.
        continue;
      }
      const same = stored.ok && (await runInSlices(sameMeaningSteps(stored, checked), sliceMs));
      meanings.set(e.id, same);
      // classifyReceipt takes the first equivalent body: the rest need no comparison.
      if (same) break;
    }
    return meanings;
  }

  /**
   * `ids`: for a refused body, the update its envelope names (envelope-ids.ts), recorded on its
   * delivery row so a gap waiting for that update can say it arrived and was refused.
   */
  private store(
    delivery: Omit<IncomingDelivery, 'raw'>,
    body: ReceivedBody,
    checked: ReadBodyResult,
    meanings?: ReadonlyMap<number, boolean>,
    ids: EnvelopeIds | null = null,
  ): ReceiptOutcome {
    if (!checked.ok) {
      const errorId = checked.error.id;
      const stored = this.quarantineBody(
        {
          sender: delivery.sender,
          source: delivery.source,
          contentType: delivery.contentType,
          errorId,
          field: checked.error.field,
          reason: checked.error.message,
          httpStatus: 400,
          ...(delivery.receivedAt ? { receivedAt: delivery.receivedAt } : {}),
        },
        body,
        ids,
      );
      return { kind: 'rejected', ...stored, error: checked.error, errorId };
    }
    const { envelope } = checked;
    const sha = body.sha256;
    const receivedAt = (delivery.receivedAt ?? new Date()).toISOString();
    return this.db
      .transaction((): ReceiptOutcome => {
        const existing = this.findSameSequence.all(envelope.LocationID, envelope.ChangeSequence);
        const decision = classifyReceipt(
          existing.map((e) => ({ id: e.id, bodySha256: e.body_sha256 })),
          sha,
          (stored) => {
            // Only for the rare redelivery whose bytes differ: compared by what the update means
            // (src/domain/body.ts), so re-encoding an identifier ("118" vs 118) is not a conflict.
            const known = meanings?.get(stored.id);
            if (known !== undefined) return known;
            const raw = this.bodies.read(stored.id);
            if (raw === undefined || raw === null) return false;
            const incoming = body.whole();
            try {
              return sameMeaning(raw, incoming);
            } finally {
              if (body.file) releaseBody(incoming);
            }
          },
        );
        this.ensureLocation.run(envelope.LocationID, receivedAt);
        let inboxId: number;
        if (decision.kind === 'duplicate') {
          inboxId = decision.of;
        } else {
          inboxId = Number(
            this.insertInbox.run({
              locationId: envelope.LocationID,
              changeSequence: envelope.ChangeSequence,
              parent: envelope.ParentChangeSequence,
              bytes: body.bytes,
              sha,
              receivedAt,
              sender: delivery.sender,
              source: delivery.source,
              state: decision.kind === 'conflict' ? 'conflict' : 'pending',
            }).lastInsertRowid,
          );
          if (body.file) this.bodies.writeFile(inboxId, body.file.name);
          else this.bodies.write(inboxId, body.whole());
          this.bodies.writeLayout(inboxId, checked.layout);
        }
        const outcome = decision.kind === 'new' ? 'accepted' : decision.kind;
        const deliveryId = Number(
          this.insertDelivery.run({
            receivedAt,
            sender: delivery.sender,
            source: delivery.source,
            bytes: body.bytes,
            inboxId,
            quarantineId: null,
            outcome,
            status: 200,
            locationId: envelope.LocationID,
            changeSequence: envelope.ChangeSequence,
            reason:
              decision.kind === 'conflict'
                ? `a different body was already received as ChangeSequence ${envelope.ChangeSequence} (inbox #${decision.with})`
                : null,
          }).lastInsertRowid,
        );
        return { kind: 'stored', decision: decision.kind, inboxId, deliveryId, envelope };
      })
      .immediate();
  }

  /**
   * Records a delivery refused before its body could be kept (over the size limit), so the history
   * shows that head office tried and why it failed.
   */
  recordRefused(input: RefusedDelivery): number {
    const receivedAt = (input.receivedAt ?? new Date()).toISOString();
    return this.recording(() => {
      const refusal = { receivedAt, source: input.source, errorId: input.errorId ?? `http_${input.httpStatus}`, bytes: input.bytes, httpStatus: input.httpStatus };
      if (!this.refusals.admit(refusal)) return this.refusals.tallyIds(receivedAt).deliveryId;
      return Number(
        this.insertDelivery.run({
          receivedAt,
          sender: cutOptional(input.sender, MAX_SENDER_CHARS),
          source: input.source,
          bytes: input.bytes,
          inboxId: null,
          quarantineId: null,
          outcome: 'rejected',
          status: input.httpStatus,
          locationId: null,
          changeSequence: null,
          reason: cutText(input.reason, MAX_REASON_CHARS),
        }).lastInsertRowid,
      );
    });
  }

  /** Keeps a refused body for inspection and records the delivery. */
  quarantine(input: QuarantineInput): { quarantineId: number; deliveryId: number } {
    const { raw, ...refusal } = input;
    return this.quarantineBody(refusal, { bytes: raw.length, sha256: sha256(raw), whole: () => raw, file: null });
  }

  /**
   * quarantine() for a body in memory or in a file of its own: a file's body is read whole only when
   * it is kept (within the day's budget), and freed once stored. Every text the sender chose is cut
   * (bounded-text.ts); past the day's REFUSALS_RECORDED_PER_DAY only the day's tally counts it, and its
   * rows' ids are returned.
   */
  private quarantineBody(input: Omit<QuarantineInput, 'raw'>, body: ReceivedBody, ids: EnvelopeIds | null = null): { quarantineId: number; deliveryId: number } {
    const receivedAt = (input.receivedAt ?? new Date()).toISOString();
    return this.recording(() => {
      if (!this.refusals.admit({ receivedAt, source: input.source, errorId: input.errorId, bytes: body.bytes, httpStatus: input.httpStatus })) {
        return this.refusals.tallyIds(receivedAt);
      }
      const kept = this.mayKeep(receivedAt, body.bytes);
      const field = cutOptional(input.field, MAX_FIELD_CHARS);
      const reason = cutText(input.reason, MAX_REASON_CHARS);
      const sender = cutOptional(input.sender, MAX_SENDER_CHARS);
      const raw = kept.keep ? body.whole() : Buffer.alloc(0);
      let quarantineId: number;
      try {
        quarantineId = Number(
          this.insertQuarantine.run({
            receivedAt,
            sender,
            source: input.source,
            contentType: cutOptional(input.contentType, MAX_CONTENT_TYPE_CHARS),
            body: raw,
            bytes: body.bytes,
            sha: body.sha256,
            errorId: input.errorId,
            field,
            reason: kept.keep ? reason : `${reason} (body not kept: ${kept.why})`,
          }).lastInsertRowid,
        );
      } finally {
        if (body.file && kept.keep) releaseBody(raw);
      }
      if (kept.keep && this.keptToday) {
        this.keptToday.bodies += 1;
        this.keptToday.bytes += body.bytes;
      }
      const deliveryId = Number(
        this.insertDelivery.run({
          receivedAt,
          sender,
          source: input.source,
          bytes: body.bytes,
          inboxId: null,
          quarantineId,
          outcome: 'rejected',
          status: input.httpStatus,
          locationId: ids?.locationId ?? null,
          changeSequence: ids?.changeSequence ?? null,
          reason: field ? `${field}: ${reason}` : reason,
        }).lastInsertRowid,
      );
      return { quarantineId, deliveryId };
    });
  }

  /**
   * Runs `record` in one write transaction; what is counted in memory of the day is read again if it
   * fails, or if another connection wrote to agent.db since this one last recorded (a command such as
   * `import` refusing files while the agent runs): its refusals count towards the same day.
   */
  private recording<T>(record: () => T): T {
    try {
      return this.db
        .transaction(() => {
          // Inside the write lock: no other connection can commit until this transaction ends.
          const version = this.dataVersion.get() as number;
          if (version !== this.seenDataVersion) {
            this.refusals.forget();
            this.keptToday = null;
            this.seenDataVersion = version;
          }
          return record();
        })
        .immediate();
    } catch (err) {
      this.refusals.forget();
      this.keptToday = null;
      throw err;
    }
  }

  /** Inside quarantine()'s transaction: whether this body is kept (QuarantineLimits). */
  private mayKeep(receivedAt: string, bytes: number): ReturnType<typeof keepQuarantinedBody> {
    if (this.limits === null) return { keep: true };
    const day = receivedAt.slice(0, 10);
    if (this.keptToday?.day !== day) this.keptToday = { day, ...this.keptSince.get(`${day}T00:00:00.000Z`, TALLY_ERROR_ID)! };
    let free: number | null = null;
    try {
      free = this.limits.freeBytes();
    } catch {
      free = null;
    }
    return keepQuarantinedBody(bytes, this.keptToday, this.limits, free);
  }
}

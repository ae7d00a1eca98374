import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import { encode, type GeneratedUpdate, type LocationChain } from './generator';
import { Prng } from './prng';

/**
 * Delivers updates the way head office does (spec sections 4-6): one HTTPS (or HTTP) POST per
 * location and update, JSON body, `Origin` always, `Authorization: Bearer` when configured, and
 * retries with exponential back-off while the receiver is unreachable or answers anything but 200.
 * On top of that it can reorder, duplicate, delay and drop deliveries, as a real network and a
 * retrying sender do.
 */

export interface Endpoint {
  readonly url: string;
  /** Sent as `Origin` (the service's DNS name). */
  readonly origin?: string | null;
  readonly token?: string | null;
  /** Extra CA certificate(s) to trust for an https URL with a private certificate. */
  readonly ca?: Buffer | null;
  /** Per-attempt time-out. */
  readonly timeoutMs?: number;
  /** Makes the connections (one that checks each before a request goes out on it); default a shared keep-alive one. */
  readonly agent?: http.Agent;
}

export interface RetryPolicy {
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly factor: number;
  /** Give up after this many attempts (default: never). */
  readonly maxAttempts?: number;
  /** Give up when the next attempt would start later than this many ms after the first. */
  readonly deadlineMs?: number;
}

export const DEFAULT_RETRY: RetryPolicy = { baseDelayMs: 500, maxDelayMs: 60_000, factor: 2 };

export type AttemptResult = { readonly status: number; readonly body: string; readonly ms: number } | { readonly status: null; readonly error: string; readonly ms: number };

const agents = { http: new http.Agent({ keepAlive: true, maxSockets: 64 }), https: new https.Agent({ keepAlive: true, maxSockets: 64 }) };

/** One POST; never throws (a network failure is a result). */
export function postOnce(endpoint: Endpoint, body: Buffer): Promise<AttemptResult> {
  const started = performance.now();
  const url = new URL(endpoint.url);
  const secure = url.protocol === 'https:';
  const headers: Record<string, string | number> = { 'content-type': 'application/json', 'content-length': body.length };
  if (endpoint.origin) headers.origin = endpoint.origin;
  if (endpoint.token) headers.authorization = `Bearer ${endpoint.token}`;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (r: AttemptResult): void => {
      if (!settled) {
        settled = true;
        resolve(r);
      }
    };
    const options: https.RequestOptions = {
      method: 'POST',
      headers,
      agent: endpoint.agent ?? (endpoint.ca && secure ? undefined : secure ? agents.https : agents.http),
      ...(endpoint.ca && secure ? { ca: endpoint.ca } : {}),
      timeout: endpoint.timeoutMs ?? 120_000,
    };
    const req = (secure ? https : http).request(url, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => finish({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - started }));
      res.on('error', (err) => finish({ status: null, error: err.message, ms: performance.now() - started }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (err: NodeJS.ErrnoException) => finish({ status: null, error: err.code ?? err.message, ms: performance.now() - started }));
    req.end(body);
  });
}

/** Exponential back-off with "equal jitter": half the step fixed, half random, capped. */
export function backoffDelay(attempt: number, policy: RetryPolicy, rng: Prng): number {
  const step = Math.min(policy.maxDelayMs, policy.baseDelayMs * policy.factor ** Math.max(0, attempt - 1));
  return step / 2 + rng.next() * (step / 2);
}

export interface DeliveryOutcome {
  readonly acked: boolean;
  readonly attempts: number;
  /** Status of each attempt (null: no answer). */
  readonly statuses: readonly (number | null)[];
  /** Duration of the attempt that got the 200. */
  readonly ackMs: number | null;
  readonly totalMs: number;
  readonly lastError: string | null;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Sends until a 200 (or the policy gives up, or `stop()` says so). */
export async function deliverWithRetry(
  endpoint: Endpoint,
  body: Buffer,
  policy: RetryPolicy,
  rng: Prng,
  stop: () => boolean = () => false,
  onAttempt?: (result: AttemptResult) => void,
): Promise<DeliveryOutcome> {
  const started = performance.now();
  const statuses: (number | null)[] = [];
  let lastError: string | null = null;
  for (let attempt = 1; ; attempt++) {
    const result = await postOnce(endpoint, body);
    statuses.push(result.status);
    onAttempt?.(result);
    if (result.status === 200) return { acked: true, attempts: attempt, statuses, ackMs: result.ms, totalMs: performance.now() - started, lastError };
    lastError = result.status === null ? result.error : `HTTP ${result.status}: ${result.body.slice(0, 200)}`;
    const delay = backoffDelay(attempt, policy, rng);
    const elapsed = performance.now() - started;
    if ((policy.maxAttempts !== undefined && attempt >= policy.maxAttempts) || (policy.deadlineMs !== undefined && elapsed + delay > policy.deadlineMs) || stop()) {
      return { acked: false, attempts: attempt, statuses, ackMs: null, totalMs: elapsed, lastError };
    }
    await sleep(delay);
  }
}

export interface FaultOptions {
  /** Shuffle each location's deliveries within windows of this many updates (0 or 1: in order). */
  readonly reorderWindow?: number;
  /** Probability that an update is delivered twice. */
  readonly duplicate?: number;
  /** Probability that an update is not delivered at all (kept for a later delivery by hand). */
  readonly drop?: number;
  /** Random pause before each delivery starts, in ms (inclusive range). */
  readonly delayMs?: readonly [number, number];
  /** Deliver each location's first publication, and wait for its 200, before anything else of that location. */
  readonly firstPublicationFirst?: boolean;
}

export interface PlannedDelivery {
  readonly update: GeneratedUpdate;
  /** 0 for the first copy, 1 for a duplicate. */
  readonly copy: number;
  readonly delayMs: number;
}

export interface DeliveryPlan {
  readonly deliveries: readonly PlannedDelivery[];
  /** Updates the "network" lost; deliver them later by hand (support's manual delivery). */
  readonly dropped: readonly GeneratedUpdate[];
}

/** Decides the order, duplicates, delays and drops. Pure given the PRNG. */
export function planDeliveries(chains: readonly LocationChain[], faults: FaultOptions, rng: Prng): DeliveryPlan {
  const perLocation: PlannedDelivery[][] = [];
  const dropped: GeneratedUpdate[] = [];
  const window = Math.max(1, faults.reorderWindow ?? 1);
  const [minDelay, maxDelay] = faults.delayMs ?? [0, 0];
  for (const chain of chains) {
    const list: PlannedDelivery[] = [];
    for (const update of chain.updates) {
      // A first publication is never dropped: without it the location has no menu to edit.
      if (update.index > 0 && faults.drop && rng.chance(faults.drop)) {
        dropped.push(update);
        continue;
      }
      list.push({ update, copy: 0, delayMs: rng.int(minDelay, maxDelay) });
      if (faults.duplicate && rng.chance(faults.duplicate)) list.push({ update, copy: 1, delayMs: rng.int(minDelay, maxDelay) });
    }
    const firstFixed = faults.firstPublicationFirst !== false && list[0]?.update.index === 0 ? 1 : 0;
    for (let start = firstFixed; start < list.length; start += window) {
      const part = rng.shuffle(list.slice(start, start + window));
      list.splice(start, part.length, ...part);
    }
    perLocation.push(list);
  }
  // Interleave locations at random, keeping each location's own (possibly shuffled) order.
  const deliveries: PlannedDelivery[] = [];
  const cursors = perLocation.map(() => 0);
  let remaining = perLocation.reduce((n, l) => n + l.length, 0);
  while (remaining > 0) {
    const open = perLocation.map((l, i) => i).filter((i) => (cursors[i] as number) < (perLocation[i] as PlannedDelivery[]).length);
    const i = rng.pick(open);
    deliveries.push((perLocation[i] as PlannedDelivery[])[cursors[i] as number] as PlannedDelivery);
    cursors[i] = (cursors[i] as number) + 1;
    remaining--;
  }
  return { deliveries, dropped };
}

export interface AckRecord {
  readonly locationId: number;
  readonly changeSequence: number;
  readonly sha256: string;
  readonly copy: number;
  readonly attempts: number;
  readonly ackMs: number;
  /** performance.now() when the 200 arrived. */
  readonly at: number;
}

export interface RunOptions {
  readonly retry?: RetryPolicy;
  /** Deliveries in flight at once (the service sends to many locations in parallel). */
  readonly concurrency?: number;
  readonly firstPublicationFirst?: boolean;
  readonly seed?: number;
  /** Checked between attempts: stop retrying (for bounded runs). */
  readonly stop?: () => boolean;
  readonly onOutcome?: (delivery: PlannedDelivery, outcome: DeliveryOutcome) => void;
  /** Every single attempt as it completes (for live counts during a fault). */
  readonly onAttempt?: (delivery: PlannedDelivery, result: AttemptResult) => void;
}

export interface RunReport {
  readonly acked: AckRecord[];
  readonly failed: { readonly delivery: PlannedDelivery; readonly outcome: DeliveryOutcome }[];
  /** How many attempts got each status ('none' for no answer). */
  readonly statusCounts: Record<string, number>;
  readonly durationMs: number;
}

export function sha256Hex(body: Buffer): string {
  return createHash('sha256').update(body).digest('hex');
}

/**
 * Runs a delivery plan: each delivery retries on its own (like the service), at most `concurrency`
 * at a time. With `firstPublicationFirst`, a location's later deliveries start only after its first
 * publication got its 200.
 */
export async function runDeliveries(endpoint: Endpoint, plan: DeliveryPlan, options: RunOptions = {}): Promise<RunReport> {
  const started = performance.now();
  const rng = new Prng(options.seed ?? 1);
  const policy = options.retry ?? DEFAULT_RETRY;
  const concurrency = Math.max(1, options.concurrency ?? 8);
  const acked: AckRecord[] = [];
  const failed: RunReport['failed'] = [];
  const statusCounts: Record<string, number> = {};
  const firstDone = new Map<number, Promise<void>>();
  const firstResolvers = new Map<number, () => void>();
  if (options.firstPublicationFirst !== false) {
    for (const d of plan.deliveries) {
      if (d.update.index === 0 && d.copy === 0 && !firstDone.has(d.update.locationId)) {
        firstDone.set(d.update.locationId, new Promise((r) => firstResolvers.set(d.update.locationId, r)));
      }
    }
  }
  const bodies = new Map<GeneratedUpdate, Buffer>();
  const bytesOf = (u: GeneratedUpdate): Buffer => {
    let b = bodies.get(u);
    if (!b) bodies.set(u, (b = encode(u)));
    return b;
  };

  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < plan.deliveries.length) {
      if (options.stop?.()) return;
      const delivery = plan.deliveries[next++] as PlannedDelivery;
      const { update } = delivery;
      const isFirst = update.index === 0 && delivery.copy === 0;
      if (!isFirst) await firstDone.get(update.locationId);
      if (delivery.delayMs > 0) await sleep(delivery.delayMs);
      const body = bytesOf(update);
      const outcome = await deliverWithRetry(endpoint, body, policy, rng.fork(next), options.stop, options.onAttempt ? (r) => options.onAttempt?.(delivery, r) : undefined);
      for (const s of outcome.statuses) statusCounts[s === null ? 'none' : String(s)] = (statusCounts[s === null ? 'none' : String(s)] ?? 0) + 1;
      if (outcome.acked) {
        acked.push({
          locationId: update.locationId,
          changeSequence: update.changeSequence,
          sha256: sha256Hex(body),
          copy: delivery.copy,
          attempts: outcome.attempts,
          ackMs: outcome.ackMs ?? 0,
          at: performance.now(),
        });
      } else {
        failed.push({ delivery, outcome });
      }
      if (isFirst) firstResolvers.get(update.locationId)?.();
      options.onOutcome?.(delivery, outcome);
    }
  };
  // A location waiting for its first publication must not block the others: the workers that wait
  // hold no slot another location needs, because each first publication is planned before its edits.
  await Promise.all(Array.from({ length: concurrency }, () => worker()));
  return { acked, failed, statusCounts, durationMs: performance.now() - started };
}

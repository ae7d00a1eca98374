/**
 * Change-sequence decisions (spec section 3): per location, an update is applied only when its
 * ParentChangeSequence equals the ChangeSequence of the last update applied there.
 */

export type BaselinePolicy = 'auto' | 'operator';

export interface LocationChain {
  /** ChangeSequence of the last applied update, or null when nothing was ever applied here. */
  readonly lastApplied: number | null;
}

export interface ChainLink {
  readonly changeSequence: number;
  readonly parentChangeSequence: number;
}

export type ApplyDecision =
  /** Apply now. `baseline`: the first update of a location, adopted without its parent. */
  | { readonly kind: 'apply'; readonly baseline: boolean }
  /** Its parent has not been applied yet: keep it until the chain reaches it. */
  | { readonly kind: 'wait'; readonly waitingFor: number }
  /** At or behind what is applied already: applying it would roll the till back. */
  | { readonly kind: 'stale' }
  /** Its parent is older than what is applied: it continues a chain we did not follow. */
  | { readonly kind: 'fork' }
  /** First update of a location while the policy wants an operator to adopt the baseline. */
  | { readonly kind: 'needs-adoption' };

export function decideApply(chain: LocationChain, update: ChainLink, policy: BaselinePolicy): ApplyDecision {
  if (chain.lastApplied === null) {
    return policy === 'auto' ? { kind: 'apply', baseline: true } : { kind: 'needs-adoption' };
  }
  if (update.changeSequence <= chain.lastApplied) return { kind: 'stale' };
  if (update.parentChangeSequence === chain.lastApplied) return { kind: 'apply', baseline: false };
  if (update.parentChangeSequence > chain.lastApplied) return { kind: 'wait', waitingFor: update.parentChangeSequence };
  return { kind: 'fork' };
}

/**
 * With the auto policy, a location's baseline is adopted only once its earliest pending delivery has
 * waited `settleMs`, so that deliveries reordered by the sender's retries are all there to choose the
 * lowest ChangeSequence from. Returns the milliseconds still to wait (0: adopt now).
 */
export function baselineSettleRemaining(earliestReceivedAt: number, now: number, settleMs: number): number {
  return Math.max(0, earliestReceivedAt + settleMs - now);
}

/** How a delivery relates to what the inbox already holds for the same location and ChangeSequence. */
export type ReceiptDecision =
  | { readonly kind: 'new' }
  | { readonly kind: 'duplicate'; readonly of: number }
  | { readonly kind: 'conflict'; readonly with: number };

export interface StoredUpdate {
  readonly id: number;
  readonly bodySha256: string;
}

/**
 * `sameContent` decides whether two bodies with different bytes mean the same update (a manual delivery
 * from support may be pretty-printed differently, or send `"118"` where the sender sent `118`; see
 * `sameMeaning` in src/domain/body.ts); it is only called when the bytes differ.
 */
export function classifyReceipt(
  existing: readonly StoredUpdate[],
  bodySha256: string,
  sameContent: (stored: StoredUpdate) => boolean,
): ReceiptDecision {
  if (existing.length === 0) return { kind: 'new' };
  const exact = existing.find((e) => e.bodySha256 === bodySha256);
  if (exact) return { kind: 'duplicate', of: exact.id };
  const equivalent = existing.find(sameContent);
  if (equivalent) return { kind: 'duplicate', of: equivalent.id };
  return { kind: 'conflict', with: (existing[0] as StoredUpdate).id };
}

/** Structural JSON equality, key order ignored. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bArr = b as unknown[];
    return a.length === bArr.length && a.every((v, i) => sameJson(v, bArr[i]));
  }
  const aObj = a as Record<string, unknown>;
  const bObj = b as Record<string, unknown>;
  const aKeys = Object.keys(aObj);
  if (aKeys.length !== Object.keys(bObj).length) return false;
  return aKeys.every((k) => Object.prototype.hasOwnProperty.call(bObj, k) && sameJson(aObj[k], bObj[k]));
}

export type PendingReason = 'queued' | 'waiting' | 'fork' | 'needs-adoption' | 'settling' | 'not-for-site';

export interface PendingVerdict {
  readonly reason: PendingReason;
  /** queued/waiting: the parent that must be applied right before it. */
  readonly waitingFor: number | null;
  /** waiting: the first update of its chain that has not arrived. */
  readonly missing: number | null;
}

/**
 * Why each pending update of one location is not applied yet, as the applier will treat it:
 * an update whose chain leads back to what is applied through other pending updates is queued
 * (an apply in progress, or a stop mid-apply, leaves it so; it is not a gap); only an update whose
 * chain breaks waits, for the first missing link. With nothing applied under the auto policy, once
 * the settle window is over, the lowest becomes the baseline and the rest follow it: queued too.
 */
export function classifyPending(
  lastApplied: number | null,
  pending: readonly ChainLink[],
  policy: BaselinePolicy,
  options: { readonly settling?: boolean; readonly notForSite?: boolean } = {},
): PendingVerdict[] {
  if (options.notForSite) return pending.map(() => ({ reason: 'not-for-site', waitingFor: null, missing: null }));
  if (options.settling) return pending.map(() => ({ reason: 'settling', waitingFor: null, missing: null }));
  if (lastApplied === null && policy === 'operator') return pending.map(() => ({ reason: 'needs-adoption', waitingFor: null, missing: null }));
  // The path the applier will take: from what is applied (or, with nothing applied, the lowest as the
  // baseline), each time the lowest pending child newer than the current end.
  const baseline = lastApplied === null ? pending.reduce<ChainLink | null>((m, p) => (m === null || p.changeSequence < m.changeSequence ? p : m), null) : null;
  const onPath = new Set<ChainLink>();
  let tip: number | null = lastApplied;
  if (baseline) {
    onPath.add(baseline);
    tip = baseline.changeSequence;
  }
  if (tip === null) return [];
  for (;;) {
    const end: number = tip;
    const next = pending
      .filter((p) => !onPath.has(p) && p.parentChangeSequence === end && p.changeSequence > end)
      .reduce<ChainLink | null>((m, p) => (m === null || p.changeSequence < m.changeSequence ? p : m), null);
    if (!next) break;
    onPath.add(next);
    tip = next.changeSequence;
  }
  const pathSequences = new Set([...onPath].map((p) => p.changeSequence));
  const bySequence = new Map<number, ChainLink>();
  for (const q of pending) if (!onPath.has(q) && !bySequence.has(q.changeSequence)) bySequence.set(q.changeSequence, q);
  const end = tip;
  return pending.map((p): PendingVerdict => {
    if (onPath.has(p)) return { reason: 'queued', waitingFor: p === baseline ? null : p.parentChangeSequence, missing: null };
    // Not newer than what is applied: the applier marks it stale on its next pass (listed as not applied).
    if (lastApplied !== null && p.changeSequence <= lastApplied) return { reason: 'queued', waitingFor: null, missing: null };
    // Newer than the path's end only through a link that has not arrived: a gap. Anything that
    // branches off the path (or off what is applied) continues a chain this location does not follow.
    if (p.changeSequence <= end) return { reason: 'fork', waitingFor: null, missing: null };
    let link: ChainLink = p;
    const seen = new Set<number>();
    for (;;) {
      const parent = link.parentChangeSequence;
      if (parent <= end || pathSequences.has(parent)) return { reason: 'fork', waitingFor: null, missing: null };
      const next = bySequence.get(parent);
      if (!next || seen.has(parent)) return { reason: 'waiting', waitingFor: p.parentChangeSequence, missing: parent };
      seen.add(parent);
      link = next;
    }
  });
}

/** Whether a location's updates go to this site's till (config `locations`, sync.acceptOtherLocations). */
export function siteRoleOf(
  locationId: number,
  lastApplied: number | null,
  site: { readonly configured: readonly number[]; readonly acceptOthers: boolean },
): 'configured' | 'other' | 'open' {
  if (site.configured.length === 0 || site.acceptOthers) return site.configured.includes(locationId) ? 'configured' : 'open';
  if (site.configured.includes(locationId)) return 'configured';
  // Already on the till before its location list was written: stopping it would freeze its prices silently.
  return lastApplied === null ? 'other' : 'open';
}

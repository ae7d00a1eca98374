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

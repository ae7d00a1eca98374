/**
 * The read models the CLI, the admin API and the status window share, as they travel as JSON.
 * Types only, with no imports, so the renderer's bundle can use this same file.
 */

export interface WaitingUpdate {
  readonly inboxId: number;
  readonly changeSequence: number;
  readonly parentChangeSequence: number;
  readonly receivedAt: string;
  /**
   * queued: follows what is applied (directly or through other queued updates) and is applied in turn;
   * waiting: a real gap, an update it needs (`missing`) has not arrived; fork: continues a chain we did
   * not follow; needs-adoption: first update under the operator policy; settling: a new location's
   * first deliveries, collected for sync.baselineSettleSeconds before the lowest is adopted as the
   * baseline; not-for-site: for a location this site is not configured for (stored, not applied).
   * The meanings are src/domain/severity.ts's WaitingReason.
   */
  readonly reason: 'queued' | 'waiting' | 'fork' | 'needs-adoption' | 'settling' | 'not-for-site';
  /** The ChangeSequence that must be applied right before this one (its parent), for queued and waiting. */
  readonly waitingFor: number | null;
  /**
   * waiting: the first update of its chain that is not in the inbox (what resolves the gap): not
   * arrived, or arrived and refused (LocationStatus.refusedMissing then names it).
   */
  readonly missing: number | null;
  readonly note: string | null;
  /** After a failed apply, when the running agent tries it again by itself (ISO; only in its status reply). */
  readonly retryAt?: string | null;
}

/** An update that will never be applied, and why (a later baseline was adopted, or force-apply skipped it). */
export interface NotAppliedUpdate {
  readonly inboxId: number;
  readonly changeSequence: number;
  readonly receivedAt: string;
  readonly state: 'stale' | 'superseded';
  readonly why: string;
}

/**
 * The update a gap waits for (WaitingUpdate.missing) that did arrive but was refused at receipt: the latest
 * delivery of that location and ChangeSequence is a refusal and no copy of it was accepted. A resend
 * of the same body is refused again, so waiting for it resolves nothing.
 */
export interface RefusedUpdate {
  readonly changeSequence: number;
  /** When the latest refused copy arrived (ISO). */
  readonly receivedAt: string;
  /** The refusal's id (too_deep, invalid_encoding, ...); null when its quarantine row was pruned. */
  readonly errorId: string | null;
  /** Why, as the sender was answered, without the body's content (null: not known any more). */
  readonly message: string | null;
  readonly deliveryId: number;
  readonly quarantineId: number | null;
}

export interface WarningRow {
  readonly id: number;
  readonly inboxId: number;
  readonly changeSequence: number;
  readonly path: string;
  readonly message: string;
  readonly createdAt: string;
}

export interface LocationStatus {
  readonly locationId: number;
  readonly locationName: string | null;
  readonly currency: string | null;
  readonly lastChangeSequence: number | null;
  readonly lastAppliedAt: string | null;
  readonly firstSeenAt: string;
  readonly waiting: readonly WaitingUpdate[];
  /** The missing updates of this location's gaps that arrived and were refused, by ChangeSequence. */
  readonly refusedMissing?: readonly RefusedUpdate[];
  readonly conflicts: number;
  readonly warnings: number;
  readonly recentWarnings: readonly WarningRow[];
  /**
   * Updates received after the last applied one whose ChangeSequence is not newer than it, so they
   * were set aside as stale: head office still sending below an update far ahead of its chain (one it
   * may never have sent). Empty when none.
   */
  readonly staleSinceApplied?: { readonly count: number; readonly latest: readonly number[] };
  /** The newest updates not applied by design (at most 10), and how many there are in all. */
  readonly notApplied: readonly NotAppliedUpdate[];
  readonly notAppliedCount: number;
  /**
   * configured: in the site's `locations`; other: not configured and never on the till, so its updates
   * are stored but not applied (not for this site); open: the site accepts every location.
   */
  readonly siteRole: 'configured' | 'other' | 'open';
}

/** Site membership of locations (config `locations` and `sync.acceptOtherLocations`). */
export interface SitePolicy {
  /** The configured LocationIDs; empty: every location is accepted. */
  readonly configured: readonly number[];
  readonly acceptOthers: boolean;
}

export interface PriceAnswer {
  readonly tariffName: string;
  readonly priceModel: string | null;
  readonly taxCode: string;
  readonly taxRate: number;
  readonly sellPriceMinor: number;
  readonly sellPrice: string;
  readonly currency: string;
  readonly dateFrom: string;
  readonly dateTo: string;
}

export interface AvailabilityAnswer {
  readonly mealPeriod: string;
  readonly status: 'AVAILABLE' | 'UNAVAILABLE';
  readonly dateFrom: string;
  readonly dateTo: string;
}

export interface TillAnswer {
  readonly locationId: number;
  readonly plu: string;
  readonly itemId: string;
  readonly itemName: string;
  readonly itemType: string;
  /** The date answered for this item: the one asked for, or today at the item's own location. */
  readonly date: string;
  readonly prices: PriceAnswer[];
  readonly availability: AvailabilityAnswer[];
}

export interface DeliveryRow {
  readonly id: number;
  readonly receivedAt: string;
  readonly sender: string | null;
  readonly source: string;
  readonly bytes: number;
  readonly locationId: number | null;
  readonly changeSequence: number | null;
  /** accepted deliveries show where their update is now: applied / waiting / stale / superseded. */
  readonly result: 'applied' | 'waiting' | 'duplicate' | 'conflict' | 'stale' | 'superseded' | 'rejected';
  readonly httpStatus: number;
  readonly reason: string | null;
  readonly inboxId: number | null;
  readonly quarantineId: number | null;
  readonly applyMs: number | null;
  /** Warnings recorded when the update this delivery stored was applied (0 for any other delivery). */
  readonly warnings: number;
}

/** The update that wrote the range a change comes from (the till file's applied_updates). */
export interface ChangeCause {
  readonly inboxId: number;
  readonly changeSequence: number;
  readonly appliedAt: string;
}

/**
 * A date on which what the till charges (per item and tariff) or offers (per item and meal period)
 * changes: `pos-sync-agent changes` and the window's Coming up tab.
 */
export interface UpcomingChange {
  /** The first day of the new value, in the location's timezone. */
  readonly date: string;
  readonly locationId: number;
  readonly itemId: string;
  readonly plu: string;
  readonly itemName: string;
  readonly kind: 'price' | 'availability';
  /** For a price change; null for availability. */
  readonly tariffName: string | null;
  /** For an availability change; null for a price. */
  readonly mealPeriod: string | null;
  /** sell_price text (price) or status (availability) the day before; null: none. */
  readonly before: string | null;
  /** From `date` on; null: none (the price or meal-period schedule ends). */
  readonly after: string | null;
  /** Price changes: the currency; null for availability. */
  readonly currency: string | null;
  /** Price changes: tax code and rate before and after ("S 20%"), which can change with an equal price. */
  readonly taxBefore: string | null;
  readonly taxAfter: string | null;
  /** Null when the till file no longer has the update's record. */
  readonly cause: ChangeCause | null;
}

export interface UpcomingChanges {
  /** Per location: the first and last day looked at (its own dates). */
  readonly windows: readonly { readonly locationId: number; readonly from: string; readonly to: string }[];
  readonly changes: readonly UpcomingChange[];
}

/** GET /api/changes (the window's Coming up tab); src/admin/changes-schema.ts checks it. */
export interface ComingUpReply {
  readonly days: number;
  readonly search: string;
  readonly windows: readonly { readonly locationId: number; readonly from: string; readonly to: string }[];
  /** Every change that matches the search, before the limit. */
  readonly total: number;
  /** The first of them (at most COMING_UP_LIMIT), in date order. */
  readonly changes: readonly UpcomingChange[];
}

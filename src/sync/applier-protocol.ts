import type { BaselinePolicy } from '../domain/sequence';
import type { AppliedUpdate } from './applier';

/** The applier thread's start-up data. */
export interface ApplierWorkerData {
  readonly dataDir: string;
  readonly policy: BaselinePolicy;
  readonly baselineSettleMs: number;
}

/** Main thread -> applier thread. Every request has an id its reply carries. */
export type ApplierRequest =
  | { readonly type: 'drain'; readonly id: number }
  | { readonly type: 'force-apply'; readonly id: number; readonly inboxId: number; readonly actor: string; readonly reason: string }
  | { readonly type: 'close'; readonly id: number };

export interface SerializedError {
  readonly errorId: string;
  readonly status: number;
  readonly message: string;
}

/** Applier thread -> main thread. */
export type ApplierMessage =
  | { readonly type: 'ready' }
  | { readonly type: 'applied'; readonly update: AppliedUpdate }
  | { readonly type: 'failed'; readonly locationId: number; readonly inboxId: number; readonly message: string }
  | { readonly type: 'reconciled'; readonly inboxId: number }
  | { readonly type: 'drained'; readonly id: number; readonly applied: AppliedUpdate[] }
  | { readonly type: 'forced'; readonly id: number; readonly forced: AppliedUpdate; readonly then: AppliedUpdate[] }
  | { readonly type: 'error'; readonly id: number; readonly error: SerializedError }
  | { readonly type: 'closed'; readonly id: number };

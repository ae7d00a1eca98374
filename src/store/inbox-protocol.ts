import type { IncomingDelivery, QuarantineInput, RefusedDelivery } from './inbox';

/** The inbox thread's start-up data. */
export interface InboxWorkerData {
  readonly dataDir: string;
}

/** Main thread -> inbox thread. Bodies travel as bytes (transferred, not copied, when large). */
export type InboxRequest =
  | { readonly type: 'receive'; readonly delivery: Omit<IncomingDelivery, 'raw'> & { readonly raw: Uint8Array } }
  | { readonly type: 'quarantine'; readonly input: Omit<QuarantineInput, 'raw'> & { readonly raw: Uint8Array } }
  | { readonly type: 'record-refused'; readonly input: RefusedDelivery }
  /** Fault injection for the test suites (disk full): caps agent.db for this thread's connection. */
  | { readonly type: 'max-page-count'; readonly pages: number }
  | { readonly type: 'close' };

import type { FileDelivery, IncomingDelivery, QuarantineInput, RefusedDelivery } from './inbox';

/**
 * The main thread -> the webhook's thread (src/webhook/receiver-worker.ts), which holds the inbox:
 * imports and the test suites' fault injection. Bodies travel as bytes (moved, not copied, when large).
 */
export type InboxRequest =
  | { readonly type: 'receive'; readonly delivery: Omit<IncomingDelivery, 'raw'> & { readonly raw: Uint8Array } }
  /** A body already streamed to a file of its own (flushed to the disk): the row naming it is committed. */
  | { readonly type: 'receive-file'; readonly delivery: FileDelivery }
  | { readonly type: 'quarantine'; readonly input: Omit<QuarantineInput, 'raw'> & { readonly raw: Uint8Array } }
  | { readonly type: 'record-refused'; readonly input: RefusedDelivery }
  /** Fault injection for the test suites (disk full): caps agent.db for the inbox's connection. */
  | { readonly type: 'max-page-count'; readonly pages: number };

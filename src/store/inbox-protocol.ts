import type { MessagePort } from 'node:worker_threads';
import type { FileDelivery, IncomingDelivery, QuarantineBudget, QuarantineInput, RefusedDelivery } from './inbox';

/** The inbox thread's start-up data. */
export interface InboxWorkerData {
  readonly dataDir: string;
  /** How much of the refused bodies is kept (see QuarantineLimits). */
  readonly quarantine: QuarantineBudget;
}

/** Main thread (or the receiver thread) -> inbox thread. Bodies travel as bytes (transferred, not copied, when large). */
export type InboxRequest =
  | { readonly type: 'receive'; readonly delivery: Omit<IncomingDelivery, 'raw'> & { readonly raw: Uint8Array } }
  /** A body the receiver streamed to a file of its own (flushed to the disk): the row naming it is committed. */
  | { readonly type: 'receive-file'; readonly delivery: FileDelivery }
  | { readonly type: 'quarantine'; readonly input: Omit<QuarantineInput, 'raw'> & { readonly raw: Uint8Array } }
  | { readonly type: 'record-refused'; readonly input: RefusedDelivery }
  /** Fault injection for the test suites (disk full): caps agent.db for this thread's connection. */
  | { readonly type: 'max-page-count'; readonly pages: number }
  /** Another thread's line to the inbox (the receiver thread's): its requests are served like the main thread's. */
  | { readonly type: 'attach-port'; readonly port: MessagePort }
  | { readonly type: 'close' };

import type { Config } from '../config/schema';
import type { QuarantineBudget } from '../store/inbox';
import type { InboxRequest } from '../store/inbox-protocol';

/** The webhook thread's start-up data: the webhook section of the configuration (cloned). */
export interface ReceiverWorkerData {
  readonly config: Config['webhook'];
  /** agent.db and the folder where large bodies are written as they arrive (<dataDir>/bodies/). */
  readonly dataDir: string;
  /** How much of the refused bodies is kept (see QuarantineLimits). */
  readonly quarantine: QuarantineBudget;
}

/** Main thread -> the webhook's thread. */
export type ReceiverRequest =
  /**
   * Listen; replies with the receiver's URL. `port` overrides the configured one (a restarted thread
   * takes the port its predecessor had, even where 0 was configured). A thread that already listens
   * answers with its URL.
   */
  | { readonly type: 'listen'; readonly port?: number }
  /** A request to the inbox this thread holds (an import from the main thread): see InboxRequest. */
  | { readonly type: 'inbox'; readonly request: InboxRequest }
  /** Until true (every part of the agent started) and again once false (stopping), calls get 503 "starting". */
  | { readonly type: 'ready'; readonly ready: boolean }
  /**
   * Measure this thread's event-loop delay (perf_hooks.monitorEventLoopDelay) from `start` to `stop`,
   * which replies with LoopDelay: how long a call could have waited for the receiver (npm run bench).
   */
  | { readonly type: 'loop-delay'; readonly action: 'start' | 'stop' }
  /** Answer GET /metrics by forwarding it to the status window's server on this loopback port (null: do not; metrics.throughTunnel). */
  | { readonly type: 'metrics-target'; readonly port: number | null }
  /** Stop listening, close every connection, then the inbox's agent.db connection. */
  | { readonly type: 'close' };

export type LogLevel = 'error' | 'warn' | 'info' | 'verbose' | 'debug';

/**
 * Receiver thread -> main thread: notices, sent in batches (see receiver-worker.ts) so that a steady
 * stream of deliveries wakes the main thread a few times a second, not once per delivery.
 */
export interface ReceiverEvent {
  readonly type: 'notices';
  readonly notices: readonly ReceiverNotice[];
}

export type ReceiverNotice =
  /** A log line, formatted in the thread (the main thread's logger redacts and writes it). */
  | { readonly type: 'log'; readonly level: LogLevel; readonly text: string }
  /** A refused call, by reason (webhook/refusals.ts counts them on the main thread). */
  | { readonly type: 'refused'; readonly id: string }
  /** A delivery was stored (its 200 is on its way): the applier's cue. */
  | { readonly type: 'stored' };

/** Event-loop delay of the receiver thread over a measured window, in ms. */
export interface LoopDelay {
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

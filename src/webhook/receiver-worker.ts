import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { workerData } from 'node:worker_threads';
import type { Logger } from '../log';
import { openDatabase, storeFilePath } from '../store/database';
import { Inbox, quarantineLimits } from '../store/inbox';
import { InboxServer } from '../store/inbox-server';
import { serveRequests } from '../threads/serve';
import type { LogLevel, LoopDelay, ReceiverEvent, ReceiverNotice, ReceiverRequest, ReceiverWorkerData } from './receiver-protocol';
import { NoticeBatcher } from './notice-batcher';
import { startWebhookServer, type RunningServer } from './server';

/**
 * The webhook's own thread (issues 11 and 29): its event loop reads bodies, stores them in the inbox
 * (agent.db, a connection of its own) and answers head office and /healthz. An ack never waits for
 * the main thread, where the status window's queries, the staff sync, backups and retention run with
 * their SQLite calls, nor for an apply (the applier thread). A large body is written to a file as it
 * arrives and checked in slices (Inbox.receiveFile), so small deliveries are stored and answered
 * during it. The main thread's imports reach the same inbox through `inbox` requests; it learns of
 * refusals, stored deliveries (the applier's cue) and log lines through events.
 */

const data = workerData as ReceiverWorkerData;
const db = openDatabase(storeFilePath(data.dataDir, 'agent'), { kind: 'agent' });
const inbox = new InboxServer(new Inbox(db, quarantineLimits(data.dataDir, data.quarantine)), db);
let post: (event: ReceiverEvent) => void = () => {};

/**
 * Notices to the main thread go out in batches, at most one per NOTICE_BATCH_MS (NoticeBatcher):
 * waking the main thread for every small delivery takes a core from the till reading pos-sync.db
 * while a large apply holds another (the bench's till lookups during the apply measure it;
 * docs/performance.md, "Threads: why an ack does not wait for an apply").
 */
const NOTICE_BATCH_MS = 50;
const notices = new NoticeBatcher<ReceiverNotice>(NOTICE_BATCH_MS, (batch) => post({ type: 'notices', notices: batch }));
const emit = (notice: ReceiverNotice): void => notices.push(notice);

function text(args: unknown[]): string {
  return args.map((a) => (a instanceof Error ? (a.stack ?? a.message) : typeof a === 'string' ? a : String(a))).join(' ');
}
const at =
  (level: LogLevel) =>
  (...args: unknown[]): void =>
    emit({ type: 'log', level, text: text(args) });
const log: Logger = { error: at('error'), warn: at('warn'), info: at('info'), verbose: at('verbose'), debug: at('debug') };

let ready = false;
let server: RunningServer | null = null;
let metricsPort: number | null = null;
let loopDelay: IntervalHistogram | null = null;

function measureLoopDelay(action: 'start' | 'stop'): LoopDelay | null {
  if (action === 'start') {
    loopDelay?.disable();
    loopDelay = monitorEventLoopDelay({ resolution: 1 });
    loopDelay.enable();
    return null;
  }
  const h = loopDelay;
  loopDelay = null;
  if (!h) return null;
  h.disable();
  return { p50Ms: h.percentile(50) / 1e6, p99Ms: h.percentile(99) / 1e6, maxMs: h.max / 1e6 };
}

post = serveRequests<ReceiverRequest, ReceiverEvent>(async (request) => {
  switch (request.type) {
    case 'listen':
      if (server) return { url: server.url };
      // On a loopback address, also on its twin at the same port (startWebhookServer): both or neither.
      server = await startWebhookServer({
        config: request.port === undefined ? data.config : { ...data.config, port: request.port },
        inbox,
        dataDir: data.dataDir,
        log,
        isReady: () => ready,
        refusals: { count: (id: string) => emit({ type: 'refused', id }) },
        onStored: () => emit({ type: 'stored' }),
        metricsTarget: () => metricsPort,
      });
      return { url: server.url };
    case 'inbox':
      return inbox.handle(request.request);
    case 'ready':
      ready = request.ready;
      return null;
    case 'metrics-target':
      metricsPort = request.port;
      return null;
    case 'loop-delay':
      return measureLoopDelay(request.action);
    case 'close':
      ready = false;
      // Both listeners, the twin's too.
      await server?.close();
      server = null;
      await inbox.close();
      // Log lines of the last calls go out with the last batch.
      await new Promise((resolve) => setImmediate(resolve));
      notices.flush();
      return null;
  }
}).emit;

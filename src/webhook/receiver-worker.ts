import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { workerData, type MessagePort } from 'node:worker_threads';
import { AppError } from '../errors';
import type { Logger } from '../log';
import type { FileDelivery, IncomingDelivery, InboxPort, QuarantineInput, RefusedDelivery } from '../store/inbox';
import { InboxPortClient } from '../store/inbox-host';
import { serveRequests } from '../threads/serve';
import type { LogLevel, LoopDelay, ReceiverEvent, ReceiverNotice, ReceiverRequest, ReceiverWorkerData } from './receiver-protocol';
import { NoticeBatcher } from './notice-batcher';
import { startWebhookServer, type RunningServer } from './server';

/**
 * The webhook receiver's own thread (issue 11): its event loop reads bodies and answers head office
 * and /healthz, and nothing else runs on it. It stores through a MessagePort straight to the inbox
 * thread, so an ack never waits for the main thread, where the status window's queries, the staff
 * sync, backups and retention run with their SQLite calls. The main thread learns of refusals, stored
 * deliveries (the applier's cue) and log lines through events.
 */

const data = workerData as ReceiverWorkerData;
let post: (event: ReceiverEvent) => void = () => {};

/**
 * Notices to the main thread go out in batches, at most one per NOTICE_BATCH_MS (NoticeBatcher):
 * waking the main thread for every small delivery made a till reading pos-sync.db during a large
 * apply markedly slower at p99 on a 2-core PC (the bench's till lookups during the apply measure it;
 * docs/performance.md, "The receiver on a thread of its own").
 */
const NOTICE_BATCH_MS = 50;
const notices = new NoticeBatcher<ReceiverNotice>(NOTICE_BATCH_MS, (batch) => post({ type: 'notices', notices: batch }));
const emit = (notice: ReceiverNotice, urgent = false): void => notices.push(notice, urgent);

function text(args: unknown[]): string {
  return args.map((a) => (a instanceof Error ? (a.stack ?? a.message) : typeof a === 'string' ? a : String(a))).join(' ');
}
const at =
  (level: LogLevel) =>
  (...args: unknown[]): void =>
    emit({ type: 'log', level, text: text(args) });
const log: Logger = { error: at('error'), warn: at('warn'), info: at('info'), verbose: at('verbose'), debug: at('debug') };

let ready = false;
let line: InboxPortClient | null = null;

function connect(port: MessagePort): void {
  line?.close();
  const client = new InboxPortClient(port);
  line = client;
  // The inbox thread ended (it is restarted by the main thread): what waited fails as 503, and the main thread sends a new line.
  port.once('close', () => {
    if (line !== client) return;
    line = null;
    client.close();
    emit({ type: 'inbox-lost' }, true);
  });
}

function current(): InboxPortClient {
  if (line === null) throw new AppError('inbox_stopped', 503, 'the inbox is restarting; try again');
  return line;
}

/** Whatever line is current when a call needs it. */
const inbox: InboxPort = {
  receive: (delivery: IncomingDelivery) => current().receive(delivery),
  receiveFile: (delivery: FileDelivery) => current().receiveFile(delivery),
  quarantine: (input: QuarantineInput) => current().quarantine(input),
  recordRefused: (input: RefusedDelivery) => current().recordRefused(input),
};

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
      if (server) {
        request.inboxPort.close();
        return { url: server.url };
      }
      connect(request.inboxPort);
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
    case 'inbox-port':
      connect(request.inboxPort);
      return null;
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
      await server?.close();
      server = null;
      // Calls still waiting for the inbox fail now; their log lines go out with the last batch.
      line?.close();
      line = null;
      await new Promise((resolve) => setImmediate(resolve));
      notices.flush();
      return null;
  }
}).emit;

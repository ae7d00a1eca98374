import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import Router from 'router';
import type { Config } from '../config/schema';
import { AppError } from '../errors';
import { baseHeaders, errorMiddleware, notFound, sendJson } from '../http/errors';
import { requestListener } from '../http/listener';
import { isLoopbackHost } from '../http/loopback';
import type { Logger } from '../log';
import { bodyFilePath } from '../store/body-files';
import type { InboxPort, ReceiptOutcome } from '../store/inbox';
import { sentByBrowserFetch, checkCaller, isJsonContentType } from './auth';
import { limitUnreadBody, markExpectsContinue, receiveBody, settleBeforeRefusal } from './body';
import { BodyBudget, ConnectionGuard } from './limits';
import { forwardMetrics } from './metrics-forward';
import type { RefusalCounter } from './refusals';

export interface WebhookDeps {
  readonly config: Config['webhook'];
  /** The inbox (in `serve`, on the same thread: src/webhook/receiver-worker.ts); a large body's check runs in slices between other calls. */
  readonly inbox: InboxPort;
  readonly log: Logger;
  /** False while the agent is still starting (or stopping): calls then get 503 with Retry-After. Default: always ready. */
  readonly isReady?: () => boolean;
  /** Counts refused calls per reason (summarised in the log and shown in the window); optional in tests. */
  readonly refusals?: Pick<RefusalCounter, 'count'>;
  /** Called after a body is durably stored (and the 200 is on its way): the applier's cue. */
  readonly onStored: (outcome: Extract<ReceiptOutcome, { kind: 'stored' }>) => void;
  /** The status window's loopback port to forward GET /metrics to (metrics.throughTunnel), or null: not served here. */
  readonly metricsTarget?: () => number | null;
  /** The data folder, where bodies of at least webhook.fileBodyFromBytes are written as they arrive; null: all in memory. */
  readonly dataDir?: string | null;
  /** Connections that carry an authenticated call are marked here, so a flood never cuts them (limits.ts). */
  readonly connections?: ConnectionGuard;
}

/** Refusals after authentication that are counted in the per-minute summary (refusals.ts), not logged each. */
const COUNTED_AFTER_AUTH = new Set([400, 413, 415, 503]);

/** A body file's bytes, the file removed (a refused body goes to the quarantine, within its budget). */
async function takeBodyFile(dataDir: string, name: string): Promise<Buffer> {
  const file = bodyFilePath(dataDir, name);
  try {
    return await fs.promises.readFile(file);
  } finally {
    await fs.promises.rm(file, { force: true });
  }
}

function senderOf(req: http.IncomingMessage): string {
  const remote = req.socket.remoteAddress ?? 'unknown';
  const forwarded = req.headers['x-forwarded-for'];
  const forwardedText = Array.isArray(forwarded) ? forwarded.join(', ') : forwarded;
  return forwardedText ? `${remote} (forwarded for ${forwardedText.slice(0, 200)})` : remote;
}

/**
 * The webhook's routes, on `router` (express's own router without express: the webhook answers JSON
 * only, and express's request and response additions cost its thread more memory than the rest of
 * the server; docs/performance.md). Returns the request listener.
 */
export function createWebhookApp(deps: WebhookDeps): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  const { config, inbox, log } = deps;
  const budget = new BodyBudget(config.maxBodyMemoryBytes);
  const fail = errorMiddleware(log);
  const app = Router();
  app.use(baseHeaders);
  // Whatever is answered before its body has arrived (a refusal, an unknown path, "starting"): the
  // rest of that body is waited for only briefly, then the connection closes.
  app.use((req, res, next) => {
    limitUnreadBody(req, res, config.refusedBodyWaitMs);
    next();
  });
  // Nothing is taken before every part of the agent runs (docs/operations.md, "Start-up").
  app.use((_req, res, next) => {
    if (deps.isReady?.() === false) {
      res.setHeader('Retry-After', '5');
      next(new AppError('agent_starting', 503, 'the agent is starting; retry shortly'));
      return;
    }
    next();
  });

  // For tunnels and monitors: says the receiver is up, nothing else.
  app.get('/healthz', (_req, res) => {
    sendJson(res, 200, { status: 'ok' });
  });

  // For a scraper reaching the site through the tunnel, when the site turned it on (metrics-forward.ts).
  app.get('/metrics', (req, res, next) => {
    const port = deps.metricsTarget?.() ?? null;
    if (port === null) next();
    else forwardMetrics(req, res, next, port);
  });

  app.post(
    config.path,
    // Authenticate before reading a byte of the body, so strangers cannot fill the disk.
    (req, res, next) => {
      const decision = checkCaller(
        { origin: req.headers.origin, authorization: req.headers.authorization, secFetch: sentByBrowserFetch(req.headers) },
        { expectedOrigin: config.expectedOrigin, bearerToken: config.bearerToken },
      );
      if (decision.ok) {
        deps.connections?.hold(req.socket, res);
        next();
        return;
      }
      // Counted per reason and minute, not a log line each: a flood of refusals must not rotate away
      // the lines that matter (refusals.ts).
      deps.refusals?.count(decision.id);
      const refusal = new AppError(decision.id, decision.status, decision.message);
      void settleBeforeRefusal(req, res, config.maxBodyBytes, config.refusedBodyWaitMs).then(() => next(refusal));
    },
    async (req, res) => {
      const body = await receiveBody(req, res, { limit: config.maxBodyBytes, budget, fileFrom: config.fileBodyFromBytes, dataDir: deps.dataDir ?? null });
      // A large body's memory is freed once it is stored: keep what the log needs first.
      const bytes = body.kind === 'memory' ? body.raw.length : body.file.bytes;
      const contentType = req.headers['content-type'] ?? null;
      const sender = senderOf(req);
      if (config.requireJsonContentType && !isJsonContentType(contentType ?? undefined)) {
        const raw = body.kind === 'memory' ? body.raw : await takeBodyFile(deps.dataDir!, body.file.name);
        await inbox.quarantine({
          raw,
          sender,
          source: 'webhook',
          contentType,
          errorId: 'unsupported_content_type',
          field: null,
          reason: `Content-Type ${contentType} is not JSON`,
          httpStatus: 415,
        });
        throw new AppError('unsupported_content_type', 415, 'the body must be JSON (Content-Type: application/json)');
      }
      const outcome =
        body.kind === 'memory'
          ? await inbox.receive({ raw: body.raw, sender, source: 'webhook', contentType })
          : await inbox.receiveFile({ file: body.file, sender, source: 'webhook', contentType });
      if (outcome.kind === 'rejected') {
        // Counted (per reason, one summary line a minute), not logged one line each: a flood of bad
        // bodies must not rotate the start-up and applied lines out of the log. The delivery history
        // and the quarantine keep each one.
        throw new AppError(outcome.errorId, 400, `${outcome.error.field}: ${outcome.error.message}`, {
          field: outcome.error.field,
          quarantineId: outcome.quarantineId,
        });
      }
      const e = outcome.envelope;
      log.info(`stored update location ${e.LocationID} change ${e.ChangeSequence} (parent ${e.ParentChangeSequence}, ${bytes} bytes): ${outcome.decision}`);
      sendJson(res, 200, { status: outcome.decision === 'new' ? 'stored' : outcome.decision, inboxId: outcome.inboxId });
      deps.onStored(outcome);
    },
  );

  // A body over the limit is never read, so it cannot be quarantined; record that it was refused.
  // (Only an authenticated caller gets this far: auth runs before the body is read.)
  app.use(config.path, async (err: unknown, req: http.IncomingMessage, _res: http.ServerResponse, next: (err?: unknown) => void) => {
    // Refusals before authentication (401/403) were counted where they were decided.
    if (err instanceof AppError && COUNTED_AFTER_AUTH.has(err.status)) deps.refusals?.count(err.id);
    if (err instanceof AppError && err.id === 'payload_too_large') {
      const declared = Number(req.headers['content-length']);
      try {
        await inbox.recordRefused({
          sender: senderOf(req),
          source: 'webhook',
          bytes: Number.isFinite(declared) ? declared : 0,
          httpStatus: 413,
          reason: `body larger than webhook.maxBodyBytes (${config.maxBodyBytes} bytes)`,
        });
      } catch (storeErr) {
        log.error('could not record a refused delivery:', storeErr);
      }
    }
    next(err);
  });
  app.use(notFound);
  app.use(fail);
  // Past every handler (notFound answers every request): an error whose answer had begun ends the
  // connection (http/listener.ts).
  return requestListener(app, fail);
}

export interface RunningServer {
  readonly server: http.Server;
  readonly url: string;
  close(): Promise<void>;
}

export { isLoopbackHost };

/** Starts the receiver over HTTPS when TLS is configured, plain HTTP (for a tunnel) otherwise. */
export async function startWebhookServer(deps: WebhookDeps): Promise<RunningServer> {
  const { config, log } = deps;
  const connections = deps.connections ?? new ConnectionGuard(config.maxConnections);
  const app = createWebhookApp({ ...deps, connections });
  let server: http.Server;
  const tls = config.tls;
  // Node checks header/request timeouts only every connectionsCheckingInterval (30 s by default):
  // check often enough that the configured timeouts actually hold.
  const timing: http.ServerOptions = { connectionsCheckingInterval: Math.max(250, Math.min(config.headersTimeoutMs, config.requestTimeoutMs) / 4) };
  if (tls) {
    const options: https.ServerOptions =
      'certFile' in tls
        ? { cert: fs.readFileSync(tls.certFile), key: fs.readFileSync(tls.keyFile) }
        : { pfx: fs.readFileSync(tls.pfxFile), ...(tls.passphrase ? { passphrase: tls.passphrase } : {}) };
    server = https.createServer({ ...options, ...timing }, app);
  } else {
    server = http.createServer(timing, app);
    if (!isLoopbackHost(config.host)) {
      log.warn(`the webhook receiver listens on ${config.host} over plain HTTP: head office needs HTTPS, so put a tunnel or TLS proxy in front, or set webhook.tls`);
    }
  }
  // "Expect: 100-continue": the body is asked for only once the call is authenticated and its declared
  // size acceptable (body.ts); Node would otherwise answer "continue" at once.
  server.on('checkContinue', (req: http.IncomingMessage, res: http.ServerResponse) => {
    markExpectsContinue(req);
    server.emit('request', req, res);
  });
  // At most webhook.maxConnections at once; strangers' connections make room for new ones (limits.ts).
  server.on('connection', (socket: import('node:net').Socket) => connections.admit(socket));
  // Guard against slow or stalled clients holding sockets open.
  server.headersTimeout = config.headersTimeoutMs;
  server.requestTimeout = config.requestTimeoutMs;
  server.keepAliveTimeout = config.keepAliveTimeoutMs;
  server.maxHeadersCount = 100;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `${tls ? 'https' : 'http'}://${host}:${address.port}${config.path}`;
  return {
    server,
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

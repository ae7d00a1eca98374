import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import Router from 'router';
import type { Config } from '../config/schema';
import { AppError, isStorageFailure } from '../errors';
import { baseHeaders, errorMiddleware, notFound, sendJson } from '../http/errors';
import { requestListener } from '../http/listener';
import { isLoopbackHost } from '../http/loopback';
import type { Logger } from '../log';
import { cutText, MAX_CONTENT_TYPE_CHARS, MAX_FIELD_CHARS, MAX_REASON_CHARS } from '../store/bounded-text';
import type { InboxPort, ReceiptOutcome } from '../store/inbox';
import { UndecodableBody } from './arrived-bytes';
import { sentByBrowserFetch, checkCaller, isJsonContentType, otherCharset } from './auth';
import { closeAfterAnswer, declaredLength, limitUnreadBody, markExpectsContinue, receiveBody, settleBeforeRefusal } from './body';
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

/** Refusals decided while reading the body, recorded by the error handler (recordRefusal). */
const RECORDED_HERE = new Set(['payload_too_large', 'unsupported_content_type', 'unsupported_charset', 'unsupported_encoding', 'invalid_encoding']);

/**
 * A failure to store (disk full, I/O error) as its answer: 503 with Retry-After, the sender sends
 * again. Counted in the per-minute summary like the refusals, not logged one line each: a disk that
 * stays full would otherwise write a line (and a stack) for every call.
 */
function storageUnavailable(res: http.ServerResponse): AppError {
  if (!res.headersSent) res.setHeader('Retry-After', '30');
  return new AppError('storage_unavailable', 503, 'the agent could not store the request; retry later');
}

function senderOf(req: http.IncomingMessage): string {
  // The request's socket is gone once it was destroyed (a body whose storing failed).
  const socket = req.socket as http.IncomingMessage['socket'] | null;
  const remote = socket?.remoteAddress ?? 'unknown';
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
    // A Content-Type that is not JSON is refused before a byte of the body is read (nothing of it is
    // held or kept: recorded in the delivery history below). Its body is let through briefly as for
    // any refusal (settleBeforeRefusal), then the connection closes.
    (req, res, next) => {
      const contentType = req.headers['content-type'];
      const charset = config.requireJsonContentType ? otherCharset(contentType) : null;
      if (!config.requireJsonContentType || (isJsonContentType(contentType) && charset === null)) {
        next();
        return;
      }
      const refusal =
        charset === null
          ? new AppError('unsupported_content_type', 415, 'the body must be JSON (Content-Type: application/json)')
          : new AppError('unsupported_charset', 415, `the body must be UTF-8 JSON, not ${cutText(charset.toUpperCase(), MAX_CONTENT_TYPE_CHARS)} (Content-Type: application/json; charset=utf-8)`);
      void settleBeforeRefusal(req, res, config.maxBodyBytes, config.refusedBodyWaitMs).then(() => {
        closeAfterAnswer(res);
        next(refusal);
      });
    },
    async (req, res) => {
      const body = await receiveBody(req, res, { limit: config.maxBodyBytes, budget, fileFrom: config.fileBodyFromBytes, dataDir: deps.dataDir ?? null });
      // A large body's memory is freed once it is stored: keep what the log needs first.
      const bytes = body.kind === 'memory' ? body.raw.length : body.file.bytes;
      const contentType = req.headers['content-type'] ?? null;
      const sender = senderOf(req);
      const outcome =
        body.kind === 'memory'
          ? await inbox.receive({ raw: body.raw, sender, source: 'webhook', contentType })
          : await inbox.receiveFile({ file: body.file, sender, source: 'webhook', contentType });
      if (outcome.kind === 'rejected') {
        // Counted (per reason, one summary line a minute), not logged one line each: a flood of bad
        // bodies must not rotate the start-up and applied lines out of the log. The delivery history
        // and the quarantine keep each one.
        // The field may be a key of the sender's choosing, of any length: answered cut, as stored.
        const field = cutText(outcome.error.field, MAX_FIELD_CHARS);
        throw new AppError(outcome.errorId, 400, `${field}: ${cutText(outcome.error.message, MAX_REASON_CHARS)}`, {
          field,
          quarantineId: outcome.quarantineId,
        });
      }
      const e = outcome.envelope;
      log.info(`stored update location ${e.LocationID} change ${e.ChangeSequence} (parent ${e.ParentChangeSequence}, ${bytes} bytes): ${outcome.decision}`);
      sendJson(res, 200, { status: outcome.decision === 'new' ? 'stored' : outcome.decision, inboxId: outcome.inboxId });
      deps.onStored(outcome);
    },
  );

  // Refusals decided while reading the body (a bad body itself was recorded and quarantined by the
  // inbox): each is recorded too, what arrived of an undecodable body kept in the quarantine.
  // (Only an authenticated caller gets this far: auth runs before the body is read.)
  app.use(config.path, async (caught: unknown, req: http.IncomingMessage, res: http.ServerResponse, next: (err?: unknown) => void) => {
    const err = isStorageFailure(caught) ? storageUnavailable(res) : caught;
    // Refusals before authentication (401/403) were counted where they were decided.
    if (err instanceof AppError && COUNTED_AFTER_AUTH.has(err.status)) deps.refusals?.count(err.id);
    let answer = err;
    try {
      const quarantineId = await recordRefusal(err, req);
      // A body kept in the quarantine is named in the answer, as for every other bad body.
      if (quarantineId !== null && err instanceof AppError) answer = new AppError(err.id, err.status, err.message, { ...err.details, quarantineId });
    } catch (storeErr) {
      if (!isStorageFailure(storeErr)) throw storeErr;
      // The answer stays the refusal; that it could not be recorded is counted (no line each).
      deps.refusals?.count('refusal_not_recorded');
    }
    next(answer);
  });
  app.use(notFound);
  app.use(fail);

  /**
   * Records a refusal decided while reading the body (not one the inbox recorded, nor a sender gone or
   * a busy receiver); the quarantine row of a body kept, else null.
   */
  async function recordRefusal(err: unknown, req: http.IncomingMessage): Promise<number | null> {
    if (!(err instanceof AppError) || !RECORDED_HERE.has(err.id)) return null;
    const sender = senderOf(req);
    const contentType = req.headers['content-type'] ?? null;
    const declared = declaredLength(req) ?? 0;
    if (err instanceof UndecodableBody) {
      const reason = err.whole ? err.message : `${err.message} (refused as it arrived: the rest of the body was not read)`;
      if (err.arrived !== null) {
        return (await inbox.quarantine({ raw: err.arrived, sender, source: 'webhook', contentType, errorId: err.id, field: null, reason, httpStatus: 400 })).quarantineId;
      }
      await inbox.recordRefused({ sender, source: 'webhook', bytes: err.arrivedBytes, httpStatus: 400, errorId: err.id, reason: `${reason} (body not kept: more than is held in memory)` });
      return null;
    }
    const refused = (reason: string): Promise<number> =>
      inbox.recordRefused({ sender, source: 'webhook', bytes: declared, httpStatus: err.status, errorId: err.id, reason });
    if (err.id === 'payload_too_large') await refused(`body larger than webhook.maxBodyBytes (${config.maxBodyBytes} bytes)`);
    else if (err.id === 'unsupported_content_type') await refused(`Content-Type ${cutText(String(contentType), MAX_CONTENT_TYPE_CHARS)} is not JSON (the body was not read)`);
    else if (err.id === 'unsupported_charset') await refused(`Content-Type ${cutText(String(contentType), MAX_CONTENT_TYPE_CHARS)} declares a charset other than UTF-8 (the body was not read)`);
    else if (err.id === 'unsupported_encoding') await refused(`${err.message} (the body was not read)`);
    return null;
  }
  // Past every handler (notFound answers every request): an error whose answer had begun ends the
  // connection (http/listener.ts).
  return requestListener(app, fail);
}

export interface RunningServer {
  /** The listener on the configured address. */
  readonly server: http.Server;
  /** The same receiver on the loopback twin's address (loopbackTwin), or null: not a loopback address, or the machine has no twin address. */
  readonly twin: http.Server | null;
  readonly url: string;
  close(): Promise<void>;
}

export { isLoopbackHost };

/**
 * The other loopback family's address for a loopback listener: [::1] for 127.0.0.1 and the reverse;
 * null for any other address. A client given `localhost:PORT` tries ::1 or 127.0.0.1 first
 * (Chromium; Go programs such as ngrok and cloudflared on a stock /etc/hosts: ::1), so whatever holds
 * the twin at the same port gets what was meant for us. (src/ops/startup.ts has the same rule.)
 */
export function loopbackTwin(address: string): string | null {
  if (address === '127.0.0.1') return '::1';
  if (address === '::1') return '127.0.0.1';
  return null;
}

/** The machine has no such address (IPv6 turned off, or no 127.0.0.1): the twin is not needed. */
const NO_SUCH_ADDRESS = new Set(['EADDRNOTAVAIL', 'EAFNOSUPPORT']);

/** How often a configured port 0 is tried again when the twin of the port it got is taken. */
const EPHEMERAL_TRIES = 5;

function listenOn(server: http.Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const failed = (err: Error): void => reject(err);
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      resolve();
    });
  });
}

function closeServer(server: http.Server): Promise<void> {
  return new Promise<void>((resolve) => {
    if (!server.listening) {
      resolve();
      return;
    }
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** A listen failure as the configured address's: its code kept (the start-up names webhook.port for EADDRINUSE), the address and what to do said. */
function listenFailure(err: unknown, host: string, port: number, twin: boolean): Error {
  const errCode = (err as NodeJS.ErrnoException).code;
  const where = `port ${port} on ${host}${twin ? ` (the other loopback address: clients of localhost:${port} reach it)` : ''}`;
  const failure = new Error(
    errCode === 'EADDRINUSE'
      ? `${where} is already in use (another agent or program): stop that program, or choose a free webhook.port`
      : `cannot listen on ${where} (${errCode ?? (err as Error).message})`,
  ) as NodeJS.ErrnoException;
  if (errCode) failure.code = errCode;
  return failure;
}

/** Starts the receiver over HTTPS when TLS is configured, plain HTTP (for a tunnel) otherwise. */
export async function startWebhookServer(deps: WebhookDeps): Promise<RunningServer> {
  const { config, log } = deps;
  const connections = deps.connections ?? new ConnectionGuard(config.maxConnections);
  const app = createWebhookApp({ ...deps, connections });
  const tls = config.tls;
  // Node checks header/request timeouts only every connectionsCheckingInterval (30 s by default):
  // check often enough that the configured timeouts actually hold.
  const timing: http.ServerOptions = { connectionsCheckingInterval: Math.max(250, Math.min(config.headersTimeoutMs, config.requestTimeoutMs) / 4) };
  const tlsOptions: https.ServerOptions | null = tls
    ? 'certFile' in tls
      ? { cert: fs.readFileSync(tls.certFile), key: fs.readFileSync(tls.keyFile) }
      : { pfx: fs.readFileSync(tls.pfxFile), ...(tls.passphrase ? { passphrase: tls.passphrase } : {}) }
    : null;
  if (!tls && !isLoopbackHost(config.host)) {
    log.warn(`the webhook receiver listens on ${config.host} over plain HTTP: head office needs HTTPS, so put a tunnel or TLS proxy in front, or set webhook.tls`);
  }
  /** One listener: the configured address's, or its loopback twin's (the same routes, limits and connection guard). */
  const createServer = (): http.Server => {
    const server = tlsOptions ? https.createServer({ ...tlsOptions, ...timing }, app) : http.createServer(timing, app);
    // "Expect: 100-continue": the body is asked for only once the call is authenticated and its declared
    // size acceptable (body.ts); Node would otherwise answer "continue" at once.
    server.on('checkContinue', (req: http.IncomingMessage, res: http.ServerResponse) => {
      markExpectsContinue(req);
      server.emit('request', req, res);
    });
    // At most webhook.maxConnections at once over both listeners; strangers' connections make room for new ones (limits.ts).
    server.on('connection', (socket: import('node:net').Socket) => connections.admit(socket));
    // Guard against slow or stalled clients holding sockets open.
    server.headersTimeout = config.headersTimeoutMs;
    server.requestTimeout = config.requestTimeoutMs;
    server.keepAliveTimeout = config.keepAliveTimeoutMs;
    server.maxHeadersCount = 100;
    return server;
  };
  // A loopback listener also holds its twin at the same port (loopbackTwin), so no other program
  // (another account's) can listen there and take head office's deliveries and token from a tunnel
  // or client that connects to localhost:PORT. Taken by another program: the receiver does not start.
  // A configured port 0 takes the port its first listener got, or, that port's twin taken, another.
  for (let attempt = 1; ; attempt++) {
    const server = createServer();
    try {
      await listenOn(server, config.port, config.host);
    } catch (err) {
      throw listenFailure(err, config.host, config.port, false);
    }
    const address = server.address() as AddressInfo;
    const twinHost = loopbackTwin(address.address);
    let twin: http.Server | null = null;
    if (twinHost !== null) {
      twin = createServer();
      try {
        await listenOn(twin, address.port, twinHost);
      } catch (err) {
        twin = null;
        const errCode = (err as NodeJS.ErrnoException).code ?? '';
        if (NO_SUCH_ADDRESS.has(errCode)) {
          log.info(`the webhook receiver listens on ${address.address} only: this machine has no ${twinHost} (${errCode}), so localhost:${address.port} cannot lead elsewhere`);
        } else {
          await closeServer(server);
          if (config.port === 0 && errCode === 'EADDRINUSE' && attempt < EPHEMERAL_TRIES) continue;
          throw listenFailure(err, twinHost, address.port, true);
        }
      }
    }
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    const url = `${tls ? 'https' : 'http'}://${host}:${address.port}${config.path}`;
    const held = twin;
    return {
      server,
      twin: held,
      url,
      close: async () => {
        await Promise.all([closeServer(server), ...(held ? [closeServer(held)] : [])]);
      },
    };
  }
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError, isStorageFailure } from '../errors';
import type { Logger } from '../log';

/**
 * Handlers on Node's own request and response, for the servers built on `router` (express's own
 * router, without express's request and response additions): the webhook, the status window and the
 * control channel.
 */
type Next = (err?: unknown) => void;
export type Handler = (req: IncomingMessage, res: ServerResponse, next: Next) => void;
export type ErrorHandler = (err: unknown, req: IncomingMessage, res: ServerResponse, next: Next) => void;

/** Answers with `body` as JSON (what express's res.status(...).json(...) sends). */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

/** A request's path without its query, for the log (a query may carry what the log must not). */
function pathOf(req: IncomingMessage): string {
  return (req.url ?? '').split('?')[0] ?? '';
}

/**
 * Maps the body readers' error types (body.ts; the names are body-parser's, which these servers used
 * before) to our stable ids; `status` comes with the error.
 */
const BODY_ERRORS: Record<string, { id: string; message: string }> = {
  'entity.too.large': { id: 'payload_too_large', message: 'the request body is larger than this endpoint accepts' },
  'request.aborted': { id: 'request_aborted', message: 'the request body was not received completely' },
  'request.size.invalid': { id: 'request_size_invalid', message: 'the request body length does not match Content-Length' },
  'encoding.unsupported': { id: 'unsupported_encoding', message: 'the request body encoding is not supported' },
  'charset.unsupported': { id: 'unsupported_charset', message: 'the request body charset is not supported' },
  'entity.verify.failed': { id: 'verify_failed', message: 'the request body was refused' },
  'stream.encoding.set': { id: 'bad_request', message: 'the request could not be read' },
};

/**
 * The one place errors become responses: `{ "error": { "id", "message", ... } }`. Storage failures
 * become 503 with Retry-After (the sender retries); anything unexpected becomes a bare 500 and goes to
 * the log, never to the client.
 */
export function errorMiddleware(log: Logger): ErrorHandler {
  return (err, req, res, next) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    let status = 500;
    let body: { error: Record<string, unknown> } = { error: { id: 'internal_error', message: 'internal error; see the agent log' } };
    if (err instanceof AppError) {
      status = err.status;
      body = err.toJSON();
    } else if (isStorageFailure(err)) {
      status = 503;
      res.setHeader('Retry-After', '30');
      body = { error: { id: 'storage_unavailable', message: 'the agent could not store the request; retry later' } };
      log.error(`storage failure on ${req.method} ${pathOf(req)}:`, err);
    } else if (typeof err === 'object' && err !== null && typeof (err as { type?: unknown }).type === 'string' && (err as { type: string }).type in BODY_ERRORS) {
      const known = BODY_ERRORS[(err as { type: string }).type]!;
      status = typeof (err as { status?: unknown }).status === 'number' ? (err as { status: number }).status : 400;
      body = { error: { ...known } };
    } else if (typeof err === 'object' && err !== null && (err as { status?: unknown }).status === 400) {
      status = 400;
      body = { error: { id: 'bad_request', message: 'the request could not be read' } };
    } else {
      log.error(`unexpected error on ${req.method} ${pathOf(req)}:`, err);
    }
    if (status >= 500 && status !== 503) status = 500;
    sendJson(res, status, body);
  };
}

export const notFound: Handler = (_req, res) => {
  sendJson(res, 404, { error: { id: 'not_found', message: 'no such endpoint' } });
};

/** Every JSON response says what it is and may not be sniffed or framed. */
export const baseHeaders: Handler = (_req, res, next) => {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Cache-Control', 'no-store');
  next();
};

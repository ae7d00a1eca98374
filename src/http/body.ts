import type { IncomingMessage } from 'node:http';
import type { Duplex, Readable } from 'node:stream';
import zlib from 'node:zlib';
import { charsetOf, mediaTypeOf } from './content-type';
import type { Handler } from './errors';

/**
 * Request bodies for the status window's and the control channel's small JSON calls and their file
 * imports: what express.json() and express.raw() did there, without body-parser and its charset tables.
 *
 * - A request without a body (neither Content-Length nor Transfer-Encoding), one whose body another
 *   reader took already, and (JSON) one whose Content-Type is not application/json is passed on with no
 *   body: `bodyOf(req)` is then undefined.
 * - At most `limit` bytes are kept: a declared Content-Length over it is refused before a byte is
 *   kept, a body that grows past it as soon as it does (413, `entity.too.large`). A refused body is
 *   then read to its end and discarded before the answer, as body-parser did.
 * - gzip, deflate, br (and zstd where Node has it) are decompressed, the limit counting what comes out;
 *   another Content-Encoding gets 415 (`encoding.unsupported`), as does any with `decompress: false`.
 * - JSON is UTF-8 only (a leading BOM is dropped): another charset gets 415 (`charset.unsupported`). It
 *   must be an object or an array (body-parser's `strict`); an empty body reads as `{}`; anything that
 *   does not parse gets 400.
 *
 * Errors carry body-parser's `status` and `type`, which errorMiddleware (errors.ts) turns into the
 * stable error ids the clients see.
 */

export class BodyError extends Error {
  readonly statusCode: number;
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
    this.name = 'BodyError';
    this.statusCode = status;
  }
}

const bodies = new WeakMap<IncomingMessage, unknown>();

/** The body a reader below took from this request (parsed JSON, or a Buffer), or undefined. */
export function bodyOf(req: IncomingMessage): unknown {
  return bodies.get(req);
}

/** Whether the request says it has a body (type-is's hasBody). */
function hasBody(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || !Number.isNaN(Number(req.headers['content-length']));
}

/** Nothing more will arrive: the body was read already, or the connection cannot deliver it (on-finished). */
function isFinished(req: IncomingMessage): boolean {
  const socket = req.socket as IncomingMessage['socket'] | null;
  return Boolean((req as { upgrade?: boolean }).upgrade || !socket || !socket.readable || (req.complete && !req.readable));
}

/** Calls back once the request has arrived completely or its connection is gone, discarding what comes. */
function afterRequest(req: IncomingMessage, callback: () => void): void {
  if (isFinished(req)) {
    callback();
    return;
  }
  const done = (): void => {
    req.off('end', done);
    req.off('close', done);
    req.off('error', done);
    callback();
  };
  req.on('end', done);
  req.on('close', done);
  req.on('error', done);
  req.resume();
}

function decompressor(coding: string): Duplex | null {
  switch (coding) {
    case 'deflate':
      return zlib.createInflate();
    case 'gzip':
      return zlib.createGunzip();
    case 'br':
      return zlib.createBrotliDecompress();
    case 'zstd': {
      const zstd = (zlib as { createZstdDecompress?: () => Duplex }).createZstdDecompress;
      return zstd ? zstd() : null;
    }
    default:
      return null;
  }
}

function tooLarge(limit: number): BodyError {
  return new BodyError(413, 'entity.too.large', `request entity larger than ${limit} bytes`);
}

/**
 * Collects `source` (the request, or what its decompression gives), never keeping more than `limit`
 * bytes: a declared length over it fails at once, and the chunk that passes it fails the read (the
 * source is then paused; the caller discards the rest). `req` is watched too, so a connection lost
 * under a decompressor still ends the wait. Exported for its tests.
 */
export function collectBody(req: IncomingMessage, source: Readable, declared: number | null, limit: number, done: (err: BodyError | null, body?: Buffer) => void): void {
  if (declared !== null && declared > limit) {
    process.nextTick(done, tooLarge(limit));
    return;
  }
  const chunks: Buffer[] = [];
  let received = 0;
  let finished = false;
  const finish = (err: BodyError | null, body?: Buffer): void => {
    if (finished) return;
    finished = true;
    source.off('data', onData);
    source.off('end', onEnd);
    source.off('error', onError);
    req.off('aborted', onAborted);
    req.off('close', onClose);
    if (err) source.pause();
    done(err, body);
  };
  const onData = (chunk: Buffer): void => {
    received += chunk.length;
    if (received > limit) finish(tooLarge(limit));
    else chunks.push(chunk);
  };
  const onEnd = (): void => {
    if (declared !== null && received !== declared) finish(new BodyError(400, 'request.size.invalid', 'request size did not match content length'));
    else finish(null, Buffer.concat(chunks));
  };
  const onError = (err: Error): void => finish(new BodyError(400, 'request.failed', err.message));
  const onAborted = (): void => finish(new BodyError(400, 'request.aborted', 'request aborted'));
  const onClose = (): void => {
    if (!req.complete) onAborted();
  };
  source.on('data', onData);
  source.on('end', onEnd);
  source.on('error', onError);
  req.on('aborted', onAborted);
  req.on('close', onClose);
}

interface ReaderOptions {
  readonly limit: number;
  /** Whether this request's body is one to read (else it is passed on unread). */
  shouldRead(req: IncomingMessage): boolean;
  /** JSON: the charset must be UTF-8. */
  readonly utf8Only: boolean;
  /** Whether a compressed body is taken (decompressed); if not, any Content-Encoding gets 415. */
  readonly decompress: boolean;
  parse(raw: Buffer): unknown;
}

function bodyReader(options: ReaderOptions): Handler {
  return (req, _res, next) => {
    if (isFinished(req) || !hasBody(req) || !options.shouldRead(req)) {
      next();
      return;
    }
    if (options.utf8Only) {
      const charset = charsetOf(req.headers['content-type']) || 'utf-8';
      if (charset !== 'utf-8') {
        next(new BodyError(415, 'charset.unsupported', `unsupported charset "${charset.toUpperCase()}"`));
        return;
      }
    }
    const coding = (req.headers['content-encoding'] || 'identity').toLowerCase();
    let inflate: Duplex | null = null;
    let declared: number | null = null;
    if (coding === 'identity') {
      const length = req.headers['content-length'];
      declared = length !== undefined && !Number.isNaN(Number(length)) ? parseInt(length, 10) : null;
    } else {
      inflate = options.decompress ? decompressor(coding) : null;
      if (!inflate) {
        next(new BodyError(415, 'encoding.unsupported', `unsupported content encoding "${coding}"`));
        return;
      }
      req.pipe(inflate);
    }
    collectBody(req, inflate ?? req, declared, options.limit, (err, raw) => {
      if (inflate) {
        // Done with it either way: detached and closed, what is left of the request then discarded.
        req.unpipe(inflate);
        inflate.on('error', () => undefined);
        inflate.destroy();
      }
      if (err) {
        afterRequest(req, () => next(err));
        return;
      }
      if (inflate) req.resume();
      let body: unknown;
      try {
        body = options.parse(raw!);
      } catch (parseErr) {
        next(parseErr);
        return;
      }
      bodies.set(req, body);
      next();
    });
  };
}

/** JSON's white space (RFC 8259): what may come before the opening `{` or `[`. */
const FIRST_NON_SPACE = /^[ \t\n\r]*([^ \t\n\r]|$)/;

/** A JSON object or array from UTF-8 bytes; an empty body is `{}` (a common client slip, as body-parser allowed). */
export function parseJsonObject(raw: Buffer): unknown {
  let text = raw.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.length === 0) return {};
  const first = FIRST_NON_SPACE.exec(text)?.[1];
  if (first !== '{' && first !== '[') throw new BodyError(400, 'entity.parse.failed', 'the body must be a JSON object or array');
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new BodyError(400, 'entity.parse.failed', (err as Error).message);
  }
}

/**
 * Reads a JSON body of at most `limit` bytes. Only a Content-Type of application/json is read, unless
 * `anyType` (the control channel: whatever its client labels the body). `decompress: false` refuses
 * a compressed body (415) instead of decompressing it: the status window's calls are small, its
 * script never compresses them, and any page can send to a loopback port, so the window's routes
 * give a sender no decompression to make the agent do.
 */
export function jsonBody(options: { readonly limit: number; readonly anyType?: boolean; readonly decompress?: boolean }): Handler {
  return bodyReader({
    limit: options.limit,
    shouldRead: options.anyType ? () => true : (req) => mediaTypeOf(req.headers['content-type']) === 'application/json',
    utf8Only: true,
    decompress: options.decompress ?? true,
    parse: parseJsonObject,
  });
}

/** Reads any body of at most `limit` bytes as a Buffer (an import's file), whatever its Content-Type. */
export function rawBody(options: { readonly limit: number }): Handler {
  return bodyReader({ limit: options.limit, shouldRead: () => true, utf8Only: false, decompress: true, parse: (raw) => raw });
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { AppError } from '../errors';
import { releaseBuffer } from '../store/bodies';

/**
 * Reading (or refusing) a webhook body, so that a refusal reaches the sender as the refusal:
 *
 * - A body over `webhook.maxBodyBytes` is refused from its declared `Content-Length` before a byte of
 *   it is read, and a chunked one as soon as it passes the limit (never read to the end).
 * - A sender that asks `Expect: 100-continue` is told to send the body only once it is authenticated
 *   and its size is acceptable; otherwise it gets the refusal instead of "continue".
 * - A refused call whose (acceptable-size) body is on its way is read to its end and discarded before
 *   the answer goes out. Answering first and closing the connection makes a proxy in front (nginx as the
 *   tunnel's edge) fail writing the body ("broken pipe") and answer 502 instead of our 401.
 */

/** Set by the server's checkContinue handler: the sender waits for "100 Continue" before the body. */
const EXPECTS_CONTINUE = Symbol('expectsContinue');

export function markExpectsContinue(req: IncomingMessage): void {
  (req as IncomingMessage & { [EXPECTS_CONTINUE]?: boolean })[EXPECTS_CONTINUE] = true;
}

function expectsContinue(req: IncomingMessage): boolean {
  return (req as IncomingMessage & { [EXPECTS_CONTINUE]?: boolean })[EXPECTS_CONTINUE] === true;
}

/** The declared body length, or null (chunked, or no body). */
export function declaredLength(req: IncomingMessage): number | null {
  const raw = req.headers['content-length'];
  if (raw === undefined || !/^\d+$/.test(raw)) return null;
  return Number(raw);
}

export function tooLarge(limit: number, declared: number | null): AppError {
  return new AppError(
    'payload_too_large',
    413,
    `the request body${declared === null ? '' : ` (${declared} bytes)`} is larger than this endpoint accepts (webhook.maxBodyBytes, ${limit} bytes)`,
  );
}

/** Ends the connection once the answer is written: what is still coming of the body is not wanted. */
export function closeAfterAnswer(res: ServerResponse): void {
  res.setHeader('Connection', 'close');
  res.once('finish', () => res.socket?.destroySoon());
}

/**
 * Reads the body, at most `limit` bytes. Rejects with payload_too_large (and arranges for the
 * connection to close after the answer) the moment the declared or the received length passes it.
 */
export function readLimitedBody(req: IncomingMessage, res: ServerResponse, limit: number): Promise<Buffer> {
  const declared = declaredLength(req);
  if (declared !== null && declared > limit) {
    // Not told to continue (or not yet sent): nothing of it needs reading.
    closeAfterAnswer(res);
    return Promise.reject(tooLarge(limit, declared));
  }
  const encoding = String(req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  const decoder = DECODERS[encoding];
  if (decoder === undefined) {
    closeAfterAnswer(res);
    return Promise.reject(new AppError('unsupported_encoding', 415, `Content-Encoding ${encoding} is not supported (identity, gzip, deflate or br)`));
  }
  if (expectsContinue(req)) res.writeContinue();
  // The limit holds for what is stored, the decoded body: a small gzip bomb is refused too.
  const decoding = decoder ? decoder() : null;
  const source: Readable = decoding ? req.pipe(decoding) : req;
  return new Promise<Buffer>((resolve, reject) => {
    // With a declared length and no decoding, the body is copied once into a buffer of that size (a
    // large publication is never held twice: chunks plus their concatenation).
    const whole = declared !== null && !decoding && declared > 0 ? Buffer.allocUnsafe(declared) : null;
    const chunks: Buffer[] = [];
    let received = 0;
    let done = false;
    const finish = (err: Error | null): void => {
      if (done) return;
      done = true;
      source.off('data', onData);
      source.off('end', onEnd);
      source.off('error', onError);
      req.off('error', onError);
      req.off('aborted', onAborted);
      if (err) {
        if (decoding) {
          req.unpipe(decoding);
          decoding.destroy();
        }
        reject(err);
      } else if (whole) {
        // Node ends the request early only on an error, so a short body cannot arrive here; guard anyway.
        resolve(received === whole.length ? whole : whole.subarray(0, received));
      } else resolve(Buffer.concat(chunks, received));
    };
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > limit) {
        chunks.length = 0;
        req.pause();
        closeAfterAnswer(res);
        finish(tooLarge(limit, declared));
        return;
      }
      if (whole && received <= whole.length) {
        chunk.copy(whole, received - chunk.length);
        // Copied: free the chunk now. Node's HTTP parser hands each piece of a body over in a buffer of
        // its own, which otherwise stays allocated until this thread's next garbage collection; an idle
        // receiver may not run one for a long while, so a large publication was held twice (its
        // pieces and the whole) and the memory stayed with the process (docs/performance.md).
        // Only when this listener is the body's one reader: not for a decoded body (the decoder's
        // output may share its buffers).
        if (!decoding) releaseBuffer(chunk);
      } else chunks.push(chunk);
    };
    const onEnd = (): void => finish(null);
    const onError = (err: Error): void => {
      if (decoding && (err as NodeJS.ErrnoException).code?.startsWith('Z_')) {
        closeAfterAnswer(res);
        finish(new AppError('invalid_encoding', 400, `the body is not valid ${encoding} data`));
      } else finish(new AppError('request_aborted', 400, 'the request body could not be read to its end'));
    };
    const onAborted = (): void => finish(new AppError('request_aborted', 400, 'the sender stopped sending the body'));
    source.on('data', onData);
    source.once('end', onEnd);
    source.once('error', onError);
    if (decoding) req.once('error', onError);
    req.once('aborted', onAborted);
  });
}

/** Content-Encodings a sender may use (as body-parser accepted before): null means none to undo. */
const DECODERS: Readonly<Record<string, (() => zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress) | null>> = {
  identity: null,
  gzip: () => zlib.createGunzip(),
  'x-gzip': () => zlib.createGunzip(),
  deflate: () => zlib.createInflate(),
  br: () => zlib.createBrotliDecompress(),
};

/**
 * Before answering a refusal: lets the sender finish sending a body of acceptable size (discarded
 * unread), or, when it is too large or not coming (100-continue), arranges to close instead.
 */
export function settleBeforeRefusal(req: IncomingMessage, res: ServerResponse, limit: number): Promise<void> {
  if (expectsContinue(req) || req.complete) return Promise.resolve();
  const declared = declaredLength(req);
  if (declared !== null && declared > limit) {
    closeAfterAnswer(res);
    return Promise.resolve();
  }
  return new Promise<void>((resolve) => {
    let received = 0;
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > limit) {
        req.off('data', onData);
        req.pause();
        closeAfterAnswer(res);
        resolve();
      }
    };
    req.on('data', onData);
    req.once('end', () => resolve());
    req.once('error', () => resolve());
    req.once('aborted', () => resolve());
  });
}

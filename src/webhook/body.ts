import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { AppError, isStorageFailure } from '../errors';
import { BodyFileSink, type BodyFile } from '../store/body-files';
import { releaseBuffer } from '../store/bodies';
import { cutText, MAX_CONTENT_TYPE_CHARS } from '../store/bounded-text';
import { ArrivedBytes, UndecodableBody } from './arrived-bytes';
import type { BodyBudget } from './limits';

/**
 * Reading (or refusing) a webhook body, so that a refusal reaches the sender as the refusal:
 *
 * - A body over `webhook.maxBodyBytes` is refused from its declared `Content-Length` before a byte of
 *   it is read, and a chunked one as soon as it passes the limit (never read to the end).
 * - A sender that asks `Expect: 100-continue` is told to send the body only once it is authenticated
 *   and its size is acceptable; otherwise it gets the refusal instead of "continue".
 * - A refused call whose (acceptable-size) body is on its way is read to its end and discarded before
 *   the answer goes out. Answering first and closing the connection makes a proxy in front (nginx as the
 *   tunnel's edge) fail writing the body ("broken pipe") and answer 502 instead of our 401. That wait
 *   is short (`webhook.refusedBodyWaitMs`): a body still arriving then is not waited for, the answer
 *   goes out and the connection closes, so slow bodies cannot hold the receiver's connections.
 * - Bodies held in memory count against `webhook.maxBodyMemoryBytes` (BodyBudget) until answered.
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

/**
 * The payload_too_large refusal of a body past `limit`. `decodedFrom`: the Content-Encoding it was being decoded from, when
 * the limit was passed by the decoded bytes (a small compressed body can decode to far more); the
 * length it declared is then its size as sent, and said to be.
 */
export function tooLarge(limit: number, declared: number | null, decodedFrom: string | null = null): AppError {
  const what =
    decodedFrom === null
      ? `the request body${declared === null ? '' : ` (${declared} bytes)`}`
      : `the request body, decoded from ${cutText(decodedFrom, MAX_CONTENT_TYPE_CHARS)}${declared === null ? '' : ` (${declared} bytes as sent)`},`;
  return new AppError('payload_too_large', 413, `${what} is larger than this endpoint accepts (webhook.maxBodyBytes, ${limit} bytes)`);
}

/** Ends the connection once the answer is written: what is still coming of the body is not wanted. */
export function closeAfterAnswer(res: ServerResponse): void {
  res.setHeader('Connection', 'close');
  res.once('finish', () => res.socket?.destroySoon());
}

export function busy(): AppError {
  return new AppError('receiver_busy', 503, 'too many request bodies are being received at once; retry shortly');
}

/** What each call under way holds of the budget, given back in one go when it is answered. */
const RESERVED = new WeakMap<ServerResponse, { bytes: number }>();

/**
 * Reserves `bytes` of the budget for this call until its answer is sent (or its connection closes);
 * false when the budget has no room (the caller answers 503). A body held piece by piece reserves once
 * per piece: the pieces add up on one record with one listener per call, so a body sent in a great
 * many tiny pieces costs no more to answer than one sent whole.
 */
function reserveUntilAnswered(budget: BodyBudget, res: ServerResponse, bytes: number): boolean {
  if (!budget.reserve(bytes)) return false;
  const held = RESERVED.get(res);
  if (held) {
    held.bytes += bytes;
    return true;
  }
  const record = { bytes };
  RESERVED.set(res, record);
  res.once('close', () => {
    RESERVED.delete(res);
    budget.release(record.bytes);
  });
  return true;
}

/** Gives back `bytes` of what this call reserved before it is answered (a copy no longer kept). */
function releaseReserved(budget: BodyBudget, res: ServerResponse, bytes: number): void {
  const held = RESERVED.get(res);
  if (!held) return;
  const n = Math.min(bytes, held.bytes);
  held.bytes -= n;
  budget.release(n);
}

/**
 * Reads the body, at most `limit` bytes. Rejects with payload_too_large (and arranges for the
 * connection to close after the answer) the moment the declared or the received length passes it.
 */
export function readLimitedBody(req: IncomingMessage, res: ServerResponse, limit: number, budget?: BodyBudget): Promise<Buffer> {
  const declared = declaredLength(req);
  if (declared !== null && declared > limit) {
    // Not told to continue (or not yet sent): nothing of it needs reading.
    closeAfterAnswer(res);
    return Promise.reject(tooLarge(limit, declared));
  }
  if (budget && declared !== null && !reserveUntilAnswered(budget, res, declared)) {
    res.setHeader('Retry-After', '5');
    closeAfterAnswer(res);
    return Promise.reject(busy());
  }
  const decoded = decodedBody(req, res, limit, budget);
  if (decoded instanceof AppError) return Promise.reject(decoded);
  const { encoding, decoding, source, arrived } = decoded;
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
      if (!(err instanceof UndecodableBody)) arrived?.drop();
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
        finish(tooLarge(limit, declared, decoding ? encoding : null));
        return;
      }
      // Without a declared length (or when decoding), what is held grows chunk by chunk; the encoded
      // copy kept in case the body does not decode gives way to the body itself.
      if (budget && (declared === null || decoding) && !budget.wouldFit(chunk.length) && arrived?.holding) arrived.drop();
      if (budget && (declared === null || decoding) && !reserveUntilAnswered(budget, res, chunk.length)) {
        chunks.length = 0;
        req.pause();
        res.setHeader('Retry-After', '5');
        closeAfterAnswer(res);
        finish(busy());
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
      if (decoding && arrived && (err as NodeJS.ErrnoException).code?.startsWith('Z_')) {
        closeAfterAnswer(res);
        finish(invalidEncoding(encoding, req, arrived));
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

/** A received body: in memory, or (large) in a file of its own, flushed to the disk. */
export type ReceivedBody = { readonly kind: 'memory'; readonly raw: Buffer } | { readonly kind: 'file'; readonly file: BodyFile };

/**
 * Reads the body into memory (readLimitedBody), or, when it is large, into a file of its own in
 * <dataDir>/bodies/ as it arrives, flushed with its folder to the disk before this resolves:
 * - a body that declares at least `fileFrom` bytes and no Content-Encoding goes to its file from its
 *   first byte;
 * - a body without a Content-Length (chunked) or with a Content-Encoding is held in memory until what
 *   it decodes to reaches `fileFrom` bytes, then what is held and the rest go to its file
 *   (spillToFile). `limit` holds for the decoded size either way, so a small gzip bomb is refused as
 *   it passes it, with at most `fileFrom` bytes in memory.
 * The file is removed if the body is refused or not received whole.
 */
export async function receiveBody(
  req: IncomingMessage,
  res: ServerResponse,
  options: { limit: number; budget?: BodyBudget; fileFrom: number; dataDir: string | null },
): Promise<ReceivedBody> {
  const declared = declaredLength(req);
  const encoding = contentEncoding(req);
  if (options.dataDir === null || (encoding === 'identity' && declared !== null && (declared < options.fileFrom || declared > options.limit))) {
    return { kind: 'memory', raw: await readLimitedBody(req, res, options.limit, options.budget) };
  }
  if (encoding !== 'identity' || declared === null) return spillToFile(req, res, { ...options, dataDir: options.dataDir });
  if (expectsContinue(req)) res.writeContinue();
  const sink = await BodyFileSink.create(options.dataDir);
  let aborted = false;
  const onAborted = (): void => {
    aborted = true;
  };
  req.once('aborted', onAborted);
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      if (sink.bytes + chunk.length > declared) throw new AppError('request_size_invalid', 400, 'the request body is longer than its Content-Length');
      await sink.write(chunk);
      // Written: free the parser's piece now (see readLimitedBody).
      releaseBuffer(chunk);
    }
    if (aborted || sink.bytes !== declared) throw new AppError('request_aborted', 400, 'the sender stopped sending the body');
    return { kind: 'file', file: await sink.finish() };
  } catch (err) {
    await sink.abort().catch(() => undefined);
    throw fileFailure(err);
  } finally {
    req.off('aborted', onAborted);
  }
}

/** A disk that cannot take the body (full, I/O error) is the agent's failure: 503, sent again later. */
function fileFailure(err: unknown): unknown {
  if (err instanceof AppError || isStorageFailure(err)) return err;
  return new AppError('request_aborted', 400, 'the request body could not be read to its end');
}

function contentEncoding(req: IncomingMessage): string {
  return String(req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
}

/**
 * The body as it is to be stored, ready to read: `req` itself, or piped through the decoder its
 * Content-Encoding names (the callers' limits then hold for the decoded bytes: a small gzip bomb is
 * refused too). Sends 100 Continue to a sender waiting for it. An encoding the receiver does not read
 * is refused (415) before anything is read, and the connection closes after the answer.
 */
function decodedBody(
  req: IncomingMessage,
  res: ServerResponse,
  keepAtMost: number,
  budget: BodyBudget | undefined,
): { encoding: string; decoding: Decoder | null; source: Readable; arrived: ArrivedBytes | null } | AppError {
  const encoding = contentEncoding(req);
  const decoder = DECODERS[encoding];
  if (decoder === undefined) {
    closeAfterAnswer(res);
    return unsupportedEncoding(encoding);
  }
  if (expectsContinue(req)) res.writeContinue();
  const decoding = decoder ? decoder() : null;
  // What arrives is kept (within the budget) as it was sent, for the quarantine should it not decode.
  const arrived = decoding
    ? new ArrivedBytes(
        req,
        keepAtMost,
        (bytes) => !budget || reserveUntilAnswered(budget, res, bytes),
        (bytes) => budget && releaseReserved(budget, res, bytes),
      )
    : null;
  return { encoding, decoding, source: decoding ? req.pipe(decoding) : req, arrived };
}

/**
 * A chunked or encoded body (receiveBody): decoded as it arrives, held in memory (counted in the
 * budget) while it is smaller than `fileFrom`, then written to a file of its own piece by piece, the
 * sender paused while each piece is written. Refused (413, 503, 415, 400) as readLimitedBody refuses.
 */
function spillToFile(
  req: IncomingMessage,
  res: ServerResponse,
  options: { limit: number; budget?: BodyBudget; fileFrom: number; dataDir: string },
): Promise<ReceivedBody> {
  const { limit, budget, fileFrom, dataDir } = options;
  const declared = declaredLength(req);
  if (declared !== null && declared > limit) {
    closeAfterAnswer(res);
    return Promise.reject(tooLarge(limit, declared));
  }
  const decoded = decodedBody(req, res, fileFrom, budget);
  if (decoded instanceof AppError) return Promise.reject(decoded);
  const { encoding, decoding, source, arrived } = decoded;
  return new Promise<ReceivedBody>((resolve, reject) => {
    const held: Buffer[] = [];
    let received = 0;
    let sink: BodyFileSink | null = null;
    /** Every write so far, in order; a failed one fails the receipt. */
    let writing: Promise<void> = Promise.resolve();
    let done = false;
    const detach = (): void => {
      source.off('data', onData);
      source.off('end', onEnd);
      source.off('error', onError);
      req.off('error', onError);
      req.off('aborted', onAborted);
      req.off('close', onClose);
    };
    const fail = (err: unknown, close: boolean): void => {
      if (done) return;
      if (!(err instanceof UndecodableBody)) arrived?.drop();
      failWith(err, close);
    };
    const failWith = (err: unknown, close: boolean): void => {
      done = true;
      detach();
      held.length = 0;
      if (decoding) {
        req.unpipe(decoding);
        decoding.destroy();
      }
      req.pause();
      if (close) closeAfterAnswer(res);
      // The file (if one was started) goes once the writes under way have ended.
      const removing = writing.catch(() => undefined).then(() => sink?.abort());
      void removing.catch(() => undefined).then(() => reject(fileFailure(err)));
    };
    const write = (chunk: Buffer): void => {
      source.pause();
      writing = writing.then(async () => {
        if (done) return;
        if (sink === null) {
          sink = await BodyFileSink.create(dataDir);
          for (const piece of held) await sink.write(piece);
          held.length = 0;
          // In its file from here on: the copy of what arrived encoded is not held beside it.
          arrived?.drop();
        }
        await sink.write(chunk);
        // Written: free the parser's piece now (see readLimitedBody); a decoder's output may share its buffers.
        if (!decoding) releaseBuffer(chunk);
      });
      writing.then(
        () => {
          if (!done) source.resume();
        },
        (err: unknown) => fail(err, false),
      );
    };
    const onData = (chunk: Buffer): void => {
      if (done) return;
      received += chunk.length;
      if (received > limit) {
        fail(tooLarge(limit, declared, decoding ? encoding : null), true);
        return;
      }
      if (sink === null && received < fileFrom) {
        // The encoded copy kept in case the body does not decode gives way to the body itself.
        if (budget && !budget.wouldFit(chunk.length) && arrived?.holding) arrived.drop();
        if (budget && !reserveUntilAnswered(budget, res, chunk.length)) {
          res.setHeader('Retry-After', '5');
          fail(busy(), true);
          return;
        }
        held.push(chunk);
        return;
      }
      write(chunk);
    };
    const onEnd = (): void => {
      if (done) return;
      void writing.then(
        async () => {
          if (done) return;
          arrived?.drop();
          if (sink === null) {
            done = true;
            detach();
            resolve({ kind: 'memory', raw: Buffer.concat(held, received) });
            return;
          }
          const finished = sink;
          const file = await finished.finish();
          done = true;
          detach();
          resolve({ kind: 'file', file });
        },
        () => undefined,
      ).catch((err: unknown) => fail(err, false));
    };
    const onError = (err: Error): void => {
      if (decoding && arrived && (err as NodeJS.ErrnoException).code?.startsWith('Z_')) fail(invalidEncoding(encoding, req, arrived), true);
      else fail(new AppError('request_aborted', 400, 'the request body could not be read to its end'), false);
    };
    const onAborted = (): void => fail(new AppError('request_aborted', 400, 'the sender stopped sending the body'), false);
    // The connection went before the body's end (a decoder would otherwise wait for more forever).
    const onClose = (): void => {
      if (!req.complete) onAborted();
    };
    source.on('data', onData);
    source.once('end', onEnd);
    source.once('error', onError);
    if (decoding) req.once('error', onError);
    req.once('aborted', onAborted);
    req.once('close', onClose);
  });
}

function unsupportedEncoding(encoding: string): AppError {
  // The header's value is the sender's: quoted cut, as stored (bounded-text.ts).
  return new AppError('unsupported_encoding', 415, `Content-Encoding ${cutText(encoding, MAX_CONTENT_TYPE_CHARS)} is not supported (identity, gzip, deflate or br)`);
}

/** A body that does not decode: refused with what arrived of it, for the quarantine. */
function invalidEncoding(encoding: string, req: IncomingMessage, arrived: ArrivedBytes): UndecodableBody {
  return new UndecodableBody(encoding, arrived.take(), arrived.bytes, req.complete);
}

/** Content-Encodings a sender may use (as body-parser accepted before): null means none to undo. */
type Decoder = zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress;

const DECODERS: Readonly<Record<string, (() => Decoder) | null>> = {
  identity: null,
  gzip: () => zlib.createGunzip(),
  'x-gzip': () => zlib.createGunzip(),
  deflate: () => zlib.createInflate(),
  br: () => zlib.createBrotliDecompress(),
};

/**
 * Before answering a refusal: lets the sender finish sending a body of acceptable size (discarded
 * unread) for at most `waitMs`, or, when it is too large, not coming (100-continue) or still arriving
 * after `waitMs`, arranges to close instead.
 */
export function settleBeforeRefusal(req: IncomingMessage, res: ServerResponse, limit: number, waitMs: number): Promise<void> {
  if (expectsContinue(req) || req.complete) return Promise.resolve();
  const declared = declaredLength(req);
  if ((declared !== null && declared > limit) || waitMs === 0) {
    closeAfterAnswer(res);
    return Promise.resolve();
  }
  return new Promise<void>((resolve) => {
    let received = 0;
    const done = (close: boolean): void => {
      clearTimeout(timer);
      req.off('data', onData);
      if (close) {
        req.pause();
        closeAfterAnswer(res);
      }
      resolve();
    };
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > limit) done(true);
    };
    const timer = setTimeout(() => done(true), waitMs);
    req.on('data', onData);
    req.once('end', () => done(false));
    req.once('error', () => done(false));
    req.once('aborted', () => done(false));
  });
}

/**
 * After any answer sent before its request's body was read to the end (an unknown path, a refusal,
 * "starting"): Node goes on reading and discarding the rest to keep the connection; give that at most
 * `waitMs`, then close the connection.
 */
export function limitUnreadBody(req: IncomingMessage, res: ServerResponse, waitMs: number): void {
  res.once('finish', () => {
    // The request may be destroyed already (a body whose storing failed), its socket then gone.
    const socket = req.socket as IncomingMessage['socket'] | null;
    if (req.complete || !socket || socket.destroyed) return;
    const timer = setTimeout(() => socket.destroy(), waitMs);
    timer.unref();
    const clear = (): void => clearTimeout(timer);
    req.once('end', clear);
    socket.once('close', clear);
  });
}

import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import net from 'node:net';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import zlib from 'node:zlib';
import { bodyOf, collectBody, jsonBody, parseJsonObject, rawBody, type BodyError } from '../../../src/http/body';
import { sendJson } from '../../../src/http/errors';
import { send, serve } from './serve';

/**
 * The body readers that replaced express.json() and express.raw() (src/http/body.ts), over real HTTP:
 * the limit to the byte, what is not JSON, charsets, encodings, and the error answers the window and
 * the command line saw before (errorMiddleware's ids).
 */

const LIMIT = 64;
/** A JSON object of exactly `bytes` bytes. */
const jsonOf = (bytes: number): string => `{"a":"${'x'.repeat(bytes - 8)}"}`;

describe('the JSON and raw body readers over HTTP', async () => {
  let ran = 0;
  const echo = (req: IncomingMessage, res: import('node:http').ServerResponse): void => {
    ran++;
    const body = bodyOf(req);
    sendJson(res, 200, { read: body !== undefined, body: Buffer.isBuffer(body) ? { bytes: body.toString('base64') } : (body ?? null) });
  };
  const port = await serve((app) => {
    app.put('/json', jsonBody({ limit: LIMIT }), echo);
    app.put('/any', jsonBody({ limit: LIMIT, anyType: true }), echo);
    app.put('/raw', rawBody({ limit: LIMIT }), echo);
    app.put('/twice', jsonBody({ limit: LIMIT }), rawBody({ limit: LIMIT }), echo);
    app.put('/plain', jsonBody({ limit: LIMIT, decompress: false }), echo);
  });
  const put = (path: string, headers: string[], body?: Buffer | string, options?: { chunked?: boolean }) => send(port, [`PUT ${path} HTTP/1.1`, ...headers].join('\n'), body, options);
  const JSON_TYPE = 'content-type: application/json';
  const errorId = (a: { json(): unknown }): string => (a.json() as { error: { id: string } }).error.id;

  it('takes a body of exactly the limit, declared or chunked', async () => {
    for (const chunked of [false, true]) {
      const a = await put('/json', [JSON_TYPE], jsonOf(LIMIT), { chunked });
      assert.equal(a.status, 200, a.body.toString());
      assert.deepEqual(a.json(), { read: true, body: { a: 'x'.repeat(LIMIT - 8) } });
    }
  });

  it('refuses one byte over the limit with 413 payload_too_large, declared or chunked, without running the route', async () => {
    for (const chunked of [false, true]) {
      const before = ran;
      const a = await put('/json', [JSON_TYPE], jsonOf(LIMIT + 1), { chunked });
      assert.equal(a.status, 413);
      assert.equal(errorId(a), 'payload_too_large');
      assert.equal(ran, before, 'the route did not run');
    }
  });

  it('refuses a declared length over the limit, reading the body only to discard it', async () => {
    const big = 'x'.repeat(200_000);
    const a = await put('/json', [JSON_TYPE], big);
    assert.equal(a.status, 413);
    assert.equal(errorId(a), 'payload_too_large');
    const raw = await put('/raw', ['content-type: application/octet-stream'], big, { chunked: true });
    assert.equal(raw.status, 413);
  });

  it('answers malformed JSON, and JSON that is not an object or array, with 400 bad_request', async () => {
    for (const body of ['{"a":', '{a:1}', 'nope', '1', 'null', '"text"', '   ', '\n\t']) {
      const a = await put('/json', [JSON_TYPE], body);
      assert.equal(a.status, 400, JSON.stringify(body));
      assert.equal(errorId(a), 'bad_request', JSON.stringify(body));
    }
  });

  it('reads an empty body as {} and leaves a request without a body unread', async () => {
    assert.deepEqual((await put('/json', [JSON_TYPE], '')).json(), { read: true, body: {} });
    assert.deepEqual((await put('/json', [JSON_TYPE], '', { chunked: true })).json(), { read: true, body: {} });
    assert.deepEqual((await put('/json', [JSON_TYPE])).json(), { read: false, body: null });
  });

  it('leaves a body whose Content-Type is not application/json unread (the route sees no body)', async () => {
    for (const type of ['text/plain', 'application/merge-patch+json', 'application/json, text/plain', 'application/jsonx', 'json', '']) {
      const a = await put('/json', type ? [`content-type: ${type}`] : [], '{"a":1}');
      assert.equal(a.status, 200, type);
      assert.deepEqual(a.json(), { read: false, body: null }, type);
    }
  });

  it('reads application/json in any case and spacing, with or without a UTF-8 charset', async () => {
    for (const type of ['application/json', 'Application/JSON', ' application/json ; charset=UTF-8', 'application/json;charset="utf-8"', 'application/json; charset=', 'application/json;']) {
      const a = await put('/json', [`content-type: ${type}`], '{"a":1}');
      assert.deepEqual(a.json(), { read: true, body: { a: 1 } }, type);
    }
  });

  it('refuses any charset but UTF-8 with 415 unsupported_charset', async () => {
    for (const charset of ['latin1', 'iso-8859-1', 'us-ascii', 'utf-16', 'utf-16le', 'utf-7', 'utf8']) {
      const a = await put('/json', [`content-type: application/json; charset=${charset}`], '{"a":1}');
      assert.equal(a.status, 415, charset);
      assert.equal(errorId(a), 'unsupported_charset', charset);
    }
    // The first charset parameter is the one that counts.
    assert.equal((await put('/json', ['content-type: application/json; charset=utf-8; charset=latin1'], '{"a":1}')).status, 200);
    assert.equal((await put('/json', ['content-type: application/json; charset=latin1; charset=utf-8'], '{"a":1}')).status, 415);
  });

  it('decodes UTF-8, without a leading BOM; bytes that are not UTF-8 become U+FFFD', async () => {
    assert.deepEqual((await put('/json', [JSON_TYPE], '\ufeff{"name":"Zoë"}')).json(), { read: true, body: { name: 'Zoë' } });
    const invalid = Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    assert.deepEqual((await put('/json', [JSON_TYPE], invalid)).json(), { read: true, body: { name: '\ufffd\ufffd' } });
  });

  it('decompresses gzip, deflate and br, the limit counting what comes out; refuses another encoding with 415', async () => {
    const text = '{"a":1}';
    for (const [coding, bytes] of [
      ['gzip', zlib.gzipSync(text)],
      ['deflate', zlib.deflateSync(text)],
      ['br', zlib.brotliCompressSync(text)],
      ['GZIP', zlib.gzipSync(text)],
      ['identity', Buffer.from(text)],
    ] as const) {
      assert.deepEqual((await put('/json', [JSON_TYPE, `content-encoding: ${coding}`], bytes)).json(), { read: true, body: { a: 1 } }, coding);
    }
    const bomb = await put('/json', [JSON_TYPE, 'content-encoding: gzip'], zlib.gzipSync(jsonOf(LIMIT + 1)));
    assert.equal(bomb.status, 413);
    const corrupt = await put('/json', [JSON_TYPE, 'content-encoding: gzip'], 'not gzip at all');
    assert.equal(corrupt.status, 400);
    assert.equal(errorId(corrupt), 'bad_request');
    const unknown = await put('/json', [JSON_TYPE, 'content-encoding: x-nope'], text);
    assert.equal(unknown.status, 415);
    assert.equal(errorId(unknown), 'unsupported_encoding');
  });

  it('with decompress: false (the status window) refuses every compressed body with 415, without running the route', async () => {
    const text = '{"a":1}';
    for (const [coding, bytes] of [
      ['gzip', zlib.gzipSync(text)],
      ['deflate', zlib.deflateSync(text)],
      ['br', zlib.brotliCompressSync(text)],
      ['x-nope', Buffer.from(text)],
    ] as const) {
      const before = ran;
      const a = await put('/plain', [JSON_TYPE, `content-encoding: ${coding}`], bytes);
      assert.equal(a.status, 415, coding);
      assert.equal(errorId(a), 'unsupported_encoding', coding);
      assert.equal(ran, before, `the route ran for ${coding}`);
    }
    for (const coding of ['identity', 'IDENTITY']) assert.deepEqual((await put('/plain', [JSON_TYPE, `content-encoding: ${coding}`], text)).json(), { read: true, body: { a: 1 } }, coding);
    assert.deepEqual((await put('/plain', [JSON_TYPE], text)).json(), { read: true, body: { a: 1 } });
  });

  it('anyType (the control channel) reads JSON whatever the Content-Type, still UTF-8 only', async () => {
    for (const headers of [['content-type: text/plain'], [], ['content-type: a;b'], ['content-type: application/octet-stream']]) {
      assert.deepEqual((await put('/any', headers, '{"a":1}')).json(), { read: true, body: { a: 1 } }, headers.join());
    }
    assert.equal((await put('/any', ['content-type: text/plain; charset=latin1'], '{"a":1}')).status, 415);
    assert.equal((await put('/any', [], jsonOf(LIMIT + 1))).status, 413);
    assert.equal((await put('/any', [], 'x')).status, 400);
  });

  it('the raw reader keeps any body of at most the limit as bytes, whatever its type or charset', async () => {
    const bytes = Buffer.from(Array.from({ length: LIMIT }, (_, i) => (i * 37) % 256));
    for (const type of ['application/octet-stream', 'text/plain; charset=latin1', 'application/json']) {
      assert.deepEqual((await put('/raw', [`content-type: ${type}`], bytes)).json(), { read: true, body: { bytes: bytes.toString('base64') } }, type);
    }
    assert.deepEqual((await put('/raw', [], '')).json(), { read: true, body: { bytes: '' } });
    assert.deepEqual((await put('/raw', [])).json(), { read: false, body: null });
    const over = await put('/raw', [], Buffer.alloc(LIMIT + 1));
    assert.equal(over.status, 413);
    assert.equal(errorId(over), 'payload_too_large');
  });

  it('a body already read is not read again (the second reader passes on)', async () => {
    assert.deepEqual((await put('/twice', [JSON_TYPE], '{"a":1}')).json(), { read: true, body: { a: 1 } });
  });

  it('a client that leaves mid-body does not run the route, and the server goes on answering', async () => {
    const before = ran;
    await new Promise<void>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.write(`PUT /json HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\ncontent-length: 50\r\n\r\n{"a":`);
        setTimeout(() => {
          socket.destroy();
          resolve();
        }, 100);
      });
    });
    assert.equal((await put('/json', [JSON_TYPE], '{"a":2}')).status, 200);
    assert.equal(ran, before + 1, 'only the second request reached the route');
  });
});

describe('collecting a body', () => {
  const fakeRequest = (): IncomingMessage => Object.assign(new PassThrough(), { complete: false }) as unknown as IncomingMessage;

  it('fails on the chunk that passes the limit, before the body ends, and stops reading', () => {
    const req = fakeRequest();
    const source = new PassThrough();
    const calls: (BodyError | null)[] = [];
    collectBody(req, source, null, 10, (err) => calls.push(err));
    source.write(Buffer.alloc(6));
    assert.equal(calls.length, 0);
    source.write(Buffer.alloc(5));
    assert.equal(calls.length, 1, 'failed as soon as 11 bytes had come');
    assert.equal(calls[0]?.status, 413);
    assert.equal(calls[0]?.type, 'entity.too.large');
    assert.equal(source.isPaused(), true, 'the rest is not read here');
    assert.equal(source.listenerCount('data'), 0, 'nothing more is kept');
    source.end(Buffer.alloc(100));
    assert.equal(calls.length, 1);
  });

  it('fails at once on a declared length over the limit, reading nothing', { timeout: 5_000 }, async () => {
    const source = new PassThrough();
    const err = await new Promise<BodyError | null>((resolve) => collectBody(fakeRequest(), source, 11, 10, resolve));
    assert.equal(err?.status, 413);
    assert.equal(source.listenerCount('data'), 0);
  });

  it('gives the bytes when the body ends at the limit; 400 when fewer arrive than declared', { timeout: 5_000 }, async () => {
    const source = new PassThrough();
    const got = new Promise<[BodyError | null, Buffer | undefined]>((resolve) => collectBody(fakeRequest(), source, null, 10, (e, b) => resolve([e, b])));
    source.end(Buffer.from('0123456789'));
    assert.deepEqual(await got, [null, Buffer.from('0123456789')]);
    const short = new PassThrough();
    const mismatch = new Promise<BodyError | null>((resolve) => collectBody(fakeRequest(), short, 5, 10, resolve));
    short.end(Buffer.from('012'));
    assert.equal((await mismatch)?.type, 'request.size.invalid');
  });
});

describe('the JSON a body may hold', () => {
  it('is an object or an array; empty is {}', () => {
    assert.deepEqual(parseJsonObject(Buffer.from(' \r\n\t[1]')), [1]);
    assert.deepEqual(parseJsonObject(Buffer.from('')), {});
    assert.deepEqual(parseJsonObject(Buffer.from('\ufeff')), {});
    for (const bad of ['1', 'true', '"x"', ' ', '\ufeff\ufeff{}', '{"a":1}x']) {
      assert.throws(() => parseJsonObject(Buffer.from(bad)), (e: BodyError) => e.status === 400 && e.type === 'entity.parse.failed', JSON.stringify(bad));
    }
  });
});

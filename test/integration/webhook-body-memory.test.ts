import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import zlib from 'node:zlib';
import { readLimitedBody } from '../../src/webhook/body';

/**
 * The receiver frees each piece of a body as soon as it is copied into the whole (src/webhook/body.ts):
 * Node's HTTP parser gives every piece a buffer of its own, and an idle receiver kept a 43 MB
 * publication's pieces allocated beside the whole until its next garbage collection (issue 11: the
 * agent's peak memory). Real HTTP on loopback; a second 'data' listener, added after the reader's,
 * sees each piece after the reader is done with it.
 */
interface Seen {
  body: Buffer;
  pieces: number;
  freedPieces: number;
}

async function receive(payload: Buffer, headers: http.OutgoingHttpHeaders): Promise<Seen> {
  let resolveSeen!: (seen: Seen) => void;
  const seen = new Promise<Seen>((r) => (resolveSeen = r));
  const server = http.createServer((req, res) => {
    let pieces = 0;
    let freedPieces = 0;
    const reading = readLimitedBody(req, res, 64 * 1024 * 1024);
    req.on('data', (piece: Buffer) => {
      pieces++;
      if (piece.byteLength === 0) freedPieces++;
    });
    void reading.then((body) => {
      resolveSeen({ body, pieces, freedPieces });
      res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  after(() => server.close());
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', agent: false, headers }, (res) => {
      res.resume();
      res.on('end', resolve);
    });
    req.on('error', reject);
    // In several writes, so the body arrives in many pieces.
    for (let at = 0; at < payload.length; at += 256 * 1024) req.write(payload.subarray(at, at + 256 * 1024));
    req.end();
  });
  return seen;
}

function payloadOf(bytes: number): Buffer {
  const out = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i++) out[i] = 0x61 + ((i * 7) % 26);
  return out;
}

describe('webhook body pieces are freed once copied', () => {
  it('a body with a Content-Length: every piece is freed and the body is intact', async () => {
    const payload = payloadOf(4 * 1024 * 1024);
    const seen = await receive(payload, { 'content-type': 'application/json', 'content-length': payload.length });
    assert.ok(seen.pieces > 8, `only ${seen.pieces} pieces: the test needs a body that arrives in many`);
    assert.equal(seen.freedPieces, seen.pieces);
    assert.ok(seen.body.equals(payload));
  });

  it('a chunked body (no length) is gathered as it came: nothing is freed early', async () => {
    const payload = payloadOf(2 * 1024 * 1024);
    const seen = await receive(payload, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    assert.ok(seen.pieces > 4);
    assert.equal(seen.freedPieces, 0);
    assert.ok(seen.body.equals(payload));
  });

  it('a gzip body: the decoder owns its output, the compressed pieces are not freed', async () => {
    const payload = payloadOf(2 * 1024 * 1024);
    const gz = zlib.gzipSync(payload, { level: 0 });
    const seen = await receive(gz, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': gz.length });
    assert.ok(seen.pieces > 4);
    assert.equal(seen.freedPieces, 0);
    assert.ok(seen.body.equals(payload));
  });
});

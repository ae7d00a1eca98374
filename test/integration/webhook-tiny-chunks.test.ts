import assert from 'node:assert/strict';
import fs from 'node:fs';
import type http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { item, price, tempDir, testConfig, update } from '../helpers/fixtures';
import { openDatabase, storeFilePath } from '../../src/store/database';
import { Inbox } from '../../src/store/inbox';
import { InboxServer } from '../../src/store/inbox-server';
import { silentLogger } from '../../src/log';
import { startWebhookServer } from '../../src/webhook/server';

/**
 * A body sent in a great many tiny chunks is held in memory piece by piece (src/webhook/body.ts),
 * each piece reserved in the receiver's memory budget until the call is answered. Each piece used to
 * add a listener to the response, and removing them all at its close took time growing with their
 * square: one small delivery in one-byte chunks froze the receiver for minutes. Now a call holds one
 * listener whatever its number of pieces. Real HTTP on loopback, the webhook's own server and inbox on
 * a real agent.db; checked by counting the response's listeners when the answer goes out.
 */

const TOKEN = 'head-office-token-3307';
const CHUNKS = 20_000;

async function receiver(withFiles: boolean): Promise<{ port: number; pathname: string; closeListeners: number[] }> {
  const dataDir = path.join(tempDir(), 'data');
  fs.mkdirSync(dataDir, { recursive: true });
  const db = openDatabase(storeFilePath(dataDir, 'agent'), { kind: 'agent' });
  const inbox = new InboxServer(new Inbox(db), db);
  const config = testConfig({ dataDir, webhook: { port: 0, bearerToken: TOKEN } }).webhook;
  const running = await startWebhookServer({ config, inbox, log: silentLogger, dataDir: withFiles ? dataDir : null, onStored: () => undefined });
  after(async () => {
    await running.close();
    await inbox.close();
  });
  const closeListeners: number[] = [];
  running.server.prependListener('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
    res.once('finish', () => closeListeners.push(res.listenerCount('close')));
  });
  const url = new URL(running.url);
  return { port: Number(url.port), pathname: url.pathname, closeListeners };
}

/** POSTs `body` chunked, one byte per chunk for its first `tiny` bytes; resolves with the answer. */
function postInTinyChunks(port: number, pathname: string, body: Buffer, tiny: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (d) => (text += d.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => resolve(text));
    const pieces: Buffer[] = [Buffer.from(`POST ${pathname} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`)];
    for (let i = 0; i < tiny; i++) pieces.push(Buffer.from(`1\r\n${String.fromCharCode(body[i]!)}\r\n`, 'latin1'));
    const rest = body.subarray(tiny);
    pieces.push(Buffer.from(`${rest.length.toString(16)}\r\n`), rest, Buffer.from('\r\n0\r\n\r\n'));
    socket.write(Buffer.concat(pieces));
  });
}

describe('a body in a great many tiny chunks', () => {
  const json = JSON.stringify(update(5, 1, 0, [item('1', 'A', [price('2026-12-01', '9999-12-31', 'Eat In', '4.50')])]));
  // Leading white space is JSON too: the tiny chunks are spaces, then the update.
  const body = Buffer.from(`${' '.repeat(CHUNKS)}${json}`);

  for (const withFiles of [false, true]) {
    it(`is stored, its answer holding one listener however many pieces (${withFiles ? 'large bodies to files' : 'all in memory'})`, { timeout: 120_000 }, async () => {
      const r = await receiver(withFiles);
      const answer = await postInTinyChunks(r.port, r.pathname, body, CHUNKS);
      assert.match(answer, /^HTTP\/1\.1 200 /, answer.slice(0, 200));
      assert.match(answer, /"stored"/);
      assert.equal(r.closeListeners.length, 1);
      // A handful of the server's own (the connection guard, Node's); one per piece before.
      assert.ok(r.closeListeners[0]! < 10, `${r.closeListeners[0]} 'close' listeners on the answer for ${CHUNKS} pieces`);
    });
  }
});

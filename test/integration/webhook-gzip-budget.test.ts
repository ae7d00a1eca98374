import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { after, describe, it } from 'node:test';
import { silentLogger } from '../../src/log';
import { openDatabase, storeFilePath } from '../../src/store/database';
import { Inbox } from '../../src/store/inbox';
import { InboxServer } from '../../src/store/inbox-server';
import { startWebhookServer } from '../../src/webhook/server';
import { item, price, tempDir, testConfig, update } from '../helpers/fixtures';

/**
 * A compressed body is decoded as it arrives, and a copy of what arrived is kept in case it does not
 * decode (the quarantine keeps what was sent). That copy is held in the receiver's memory budget
 * (webhook.maxBodyMemoryBytes) only while there is room: it gives way to the decoded body, and goes
 * once the body is in a file of its own. With the budget at the least the configuration allows, a
 * valid gzip delivery was answered 503 receiver_busy at every try, the copy taking the room its
 * decoded bytes needed.
 */
const TOKEN = 'head-office-token-gzip-budget';
const MiB = 1024 * 1024;

describe('a gzip delivery with the memory budget at its least', () => {
  it('is stored, as the same body sent plain is', async () => {
    const dataDir = path.join(tempDir('gzip-budget-'), 'data');
    fs.mkdirSync(dataDir, { recursive: true });
    const db = openDatabase(storeFilePath(dataDir, 'agent'), { kind: 'agent' });
    const inbox = new InboxServer(new Inbox(db, { bodiesPerDay: 1000, bytesPerDay: 1 << 28, diskFloorBytes: 0, freeBytes: () => null }), db);
    const config = testConfig({ dataDir, webhook: { port: 0, bearerToken: TOKEN, fileBodyFromBytes: MiB, maxBodyMemoryBytes: MiB, maxBodyBytes: MiB } }).webhook;
    const running = await startWebhookServer({ config, inbox, log: silentLogger, dataDir, onStored: () => undefined });
    after(async () => {
      await running.close();
      await inbox.close();
    });
    // Text that compresses poorly, in a field the agent does not read: the gzip is most of the body's size.
    const noise = crypto.randomBytes(520 * 1024).toString('base64');
    const body = Buffer.from(JSON.stringify(update(1, 1, 0, [item('100', 'A', [price('2026-01-01', '2026-12-31', 'Standard', '1.50')], [], { Note: noise })])));
    const gz = zlib.gzipSync(body);
    assert.ok(body.length < MiB && gz.length > body.length / 2, `${body.length} bytes, ${gz.length} compressed`);
    const send = (payload: Buffer, headers: Record<string, string>): Promise<Response> =>
      fetch(running.url, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...headers }, body: payload });
    const compressed = await send(gz, { 'content-encoding': 'gzip' });
    assert.equal(compressed.status, 200, await compressed.text());
    const plain = await send(body, {});
    assert.equal(plain.status, 200, await plain.text());
    assert.equal((db.prepare('SELECT count(*) AS n FROM inbox').get() as { n: number }).n, 1, 'one update, stored once (the plain one is its redelivery)');
  });
});

import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import type http from 'node:http';
import { item, price, tempDir, testConfig, update } from '../helpers/fixtures';
import { openDatabase, storeFilePath, type Db } from '../../src/store/database';
import { Inbox, type QuarantineLimits } from '../../src/store/inbox';
import { InboxServer } from '../../src/store/inbox-server';
import { CUT_MARKER, MAX_CONTENT_TYPE_CHARS, MAX_FIELD_CHARS, MAX_REASON_CHARS, MAX_SENDER_CHARS } from '../../src/store/bounded-text';
import { TALLY_ERROR_ID } from '../../src/store/refusal-records';
import { startWebhookServer } from '../../src/webhook/server';
import type { Logger } from '../../src/log';

/**
 * What a refused call leaves behind (docs/operations.md, "Refused bodies cannot fill the disk"): every
 * text it chose is cut, a day records a bounded number of refusals one by one and only counts the
 * rest, a Content-Type that is not JSON is refused before its body is read, and every refusal after
 * authentication is in the delivery history (what arrived of an undecodable body in the quarantine).
 * Real HTTP on loopback, the webhook's own server and inbox on a real agent.db.
 */

const TOKEN = 'head-office-token-7761';

function capturingLog(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const at = (level: string) => (...args: unknown[]) => {
    lines.push(`${level} ${args.map((a) => (a instanceof Error ? (a.stack ?? a.message) : String(a))).join(' ')}`);
  };
  return { lines, error: at('error'), warn: at('warn'), info: at('info'), verbose: at('verbose'), debug: at('debug') };
}

interface Receiver {
  readonly url: string;
  readonly port: number;
  readonly db: Db;
  readonly dataDir: string;
  readonly log: Logger & { lines: string[] };
  readonly counted: string[];
  readonly server: http.Server;
  /** Sends one POST over a connection of its own; resolves with the raw answer once the server closes it or answers whole. */
  raw(head: string, body?: Buffer | string): Promise<string>;
  post(body: Buffer | string, headers?: Record<string, string>): Promise<{ status: number; json: { error?: Record<string, unknown> }; headers: Headers }>;
}

async function startReceiver(options: { refusalsPerDay?: number; webhook?: Record<string, unknown> } = {}): Promise<Receiver> {
  const dir = tempDir();
  const dataDir = path.join(dir, 'data');
  fs.mkdirSync(dataDir, { recursive: true });
  const db = openDatabase(storeFilePath(dataDir, 'agent'), { kind: 'agent' });
  const limits: QuarantineLimits = {
    bodiesPerDay: 1000,
    bytesPerDay: 256 * 1024 * 1024,
    diskFloorBytes: 0,
    freeBytes: () => null,
    ...(options.refusalsPerDay === undefined ? {} : { refusalsPerDay: options.refusalsPerDay }),
  };
  const inbox = new InboxServer(new Inbox(db, limits), db);
  const config = testConfig({ dataDir, webhook: { port: 0, bearerToken: TOKEN, refusedBodyWaitMs: 300, ...options.webhook } }).webhook;
  const log = capturingLog();
  const counted: string[] = [];
  const running = await startWebhookServer({
    config,
    inbox,
    log,
    dataDir,
    refusals: { count: (id: string) => void counted.push(id) },
    onStored: () => undefined,
  });
  after(async () => {
    await running.close();
    await inbox.close();
  });
  const url = running.url;
  const port = Number(new URL(url).port);
  return {
    url,
    port,
    db,
    dataDir,
    log,
    counted,
    server: running.server,
    raw: (head, body) =>
      new Promise((resolve) => {
        const socket = net.connect(port, '127.0.0.1');
        let text = '';
        socket.on('data', (d) => (text += d.toString('latin1')));
        socket.on('error', () => undefined);
        socket.on('close', () => resolve(text));
        socket.write(`POST ${new URL(url).pathname} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nConnection: close\r\n${head}\r\n`);
        if (body !== undefined) socket.write(body);
      }),
    async post(body, headers = {}) {
      const res = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}`, ...headers } });
      const text = await res.text();
      return { status: res.status, json: JSON.parse(text) as { error?: Record<string, unknown> }, headers: res.headers };
    },
  };
}

type Row = Record<string, unknown>;
const rows = (db: Db, sql: string): Row[] => db.prepare(sql).all() as Row[];
const deliveries = (db: Db): Row[] => rows(db, 'SELECT * FROM deliveries ORDER BY id');
const quarantined = (db: Db): Row[] => rows(db, 'SELECT * FROM quarantine ORDER BY id');

describe('what a refused call leaves behind', () => {
  it('stores and answers every text the sender chose cut to its bound, in whole characters', async () => {
    const r = await startReceiver();
    // A top-level key far longer than anything stored (member_too_large names it), a huge
    // Content-Type and X-Forwarded-For; the key ends in characters outside the BMP (surrogate pairs).
    const key = `K${'é😀'.repeat(400_000)}`;
    const body = Buffer.from(JSON.stringify({ [key]: 'v'.repeat(1100 * 1024) }));
    const contentType = `application/json; x=${'A'.repeat(10_000)}`;
    const res = await r.post(body, { 'content-type': contentType, 'x-forwarded-for': 'B'.repeat(3000) });
    assert.equal(res.status, 400);
    assert.equal(res.json.error!.id, 'member_too_large');
    const field = res.json.error!.field as string;
    assert.ok([...field].length <= MAX_FIELD_CHARS && field.endsWith(CUT_MARKER), `answered field of ${field.length} characters`);
    assert.ok((res.json.error!.message as string).length <= MAX_FIELD_CHARS + MAX_REASON_CHARS + 2);
    assert.equal(Buffer.from(field, 'utf8').toString('utf8'), field, 'a cut never splits a character');

    const [q] = quarantined(r.db);
    assert.ok(q, 'the refusal has its quarantine row');
    assert.equal(q.field, field);
    assert.ok((q.content_type as string).length <= MAX_CONTENT_TYPE_CHARS && (q.content_type as string).endsWith(CUT_MARKER));
    assert.ok((q.sender as string).length <= MAX_SENDER_CHARS);
    assert.ok((q.reason as string).length <= MAX_REASON_CHARS);
    assert.ok((q.body as Buffer).equals(body), 'the body itself is kept byte for byte (within the budget)');
    const [d] = deliveries(r.db);
    assert.equal(d!.http_status, 400);
    assert.ok((d!.reason as string).length <= MAX_FIELD_CHARS + MAX_REASON_CHARS + 2);
    assert.ok((d!.sender as string).length <= MAX_SENDER_CHARS);
  });

  it('records a day\'s first refusals one by one, then only counts the rest in one tally, across a restart', async () => {
    const r = await startReceiver({ refusalsPerDay: 3 });
    for (let i = 0; i < 3; i++) assert.equal((await r.post(`not json ${i}`)).status, 400);
    const ids = new Set<unknown>();
    for (let i = 0; i < 5; i++) {
      const res = await r.post(`still not json ${i}`, { 'x-forwarded-for': 'C'.repeat(150) });
      assert.equal(res.status, 400);
      ids.add(res.json.error!.quarantineId);
    }
    assert.equal((await r.post('{}', { 'content-type': 'text/plain' })).status, 415);
    assert.equal((await r.post('x'.repeat(10), { 'content-encoding': 'zstd' })).status, 415);

    const q = quarantined(r.db);
    const d = deliveries(r.db);
    assert.equal(q.length, 4, 'three refusals and the day\'s tally');
    assert.equal(d.length, 4);
    const tally = q[3]!;
    assert.equal(tally.error_id, TALLY_ERROR_ID);
    assert.deepEqual([...ids], [tally.id], 'a refusal past the day\'s record is answered with the tally\'s id');
    assert.match(tally.reason as string, /invalid_json 5, unsupported_content_type 1, unsupported_encoding 1$/);
    assert.equal((tally.body as Buffer).length, 0);
    assert.equal(d[3]!.quarantine_id, tally.id);
    assert.equal(d[3]!.reason, tally.reason);
    assert.equal(d[3]!.body_bytes, tally.body_bytes);

    // Another inbox on the same file (the agent restarted): the day's tally goes on, no new rows.
    const again = new Inbox(r.db, { bodiesPerDay: 1000, bytesPerDay: 1 << 28, diskFloorBytes: 0, freeBytes: () => null, refusalsPerDay: 3 });
    const stored = again.quarantine({ raw: Buffer.from('nope'), sender: 'x', source: 'webhook', contentType: null, errorId: 'invalid_json', field: '(body)', reason: 'r', httpStatus: 400 });
    assert.equal(stored.quarantineId, tally.id);
    assert.equal(quarantined(r.db).length, 4);
    assert.equal(deliveries(r.db).length, 4);
    assert.match(quarantined(r.db)[3]!.reason as string, /invalid_json 6, /);
  });

  it('keeps one day\'s record and one tally when two connections record refusals in turn', () => {
    const dataDir = tempDir();
    const file = storeFilePath(dataDir, 'agent');
    const limits: QuarantineLimits = { bodiesPerDay: 1000, bytesPerDay: 1 << 28, diskFloorBytes: 0, freeBytes: () => null, refusalsPerDay: 3 };
    // The agent's webhook and a command such as `import`, each with its own connection to agent.db.
    const first = openDatabase(file, { kind: 'agent' });
    const second = openDatabase(file, { kind: 'agent' });
    try {
      const inboxes = [new Inbox(first, limits), new Inbox(second, limits)];
      for (let i = 0; i < 10; i++) {
        inboxes[i % 2]!.quarantine({ raw: Buffer.from(`nope ${i}`), sender: null, source: i % 2 ? 'import' : 'webhook', contentType: null, errorId: 'invalid_json', field: '(body)', reason: 'r', httpStatus: 400 });
      }
      const q = quarantined(first);
      assert.equal(q.length, 4, 'three refusals one by one and the day\'s one tally');
      assert.equal(q.filter((row) => row.error_id === TALLY_ERROR_ID).length, 1);
      assert.match(q[3]!.reason as string, /by reason: invalid_json 7$/);
      assert.equal(deliveries(first).length, 4);
    } finally {
      second.close();
      first.close();
    }
  });

  it('refuses a Content-Type that is not JSON before reading its body, and records it', { timeout: 30_000 }, async () => {
    const r = await startReceiver({ webhook: { fileBodyFromBytes: 64 * 1024 } });
    // The body is declared large and held back after its first bytes: answered all the same (the
    // receiver waited for the whole body before checking the Content-Type: this test then times out).
    const answer = await r.raw(`Content-Type: text/plain; x=${'A'.repeat(2000)}\r\nContent-Length: ${8 * 1024 * 1024}\r\n`, 'x'.repeat(1000));
    assert.match(answer, /^HTTP\/1\.1 415 /);
    assert.match(answer, /connection: close/i);
    assert.match(answer, /"unsupported_content_type"/);
    assert.equal(quarantined(r.db).length, 0, 'nothing of the body is kept');
    const [d] = deliveries(r.db);
    assert.equal(d!.http_status, 415);
    assert.equal(d!.body_bytes, 8 * 1024 * 1024);
    assert.ok((d!.reason as string).length <= MAX_REASON_CHARS);
    assert.match(d!.reason as string, /^Content-Type text\/plain; x=A+…\(cut\) is not JSON/);
    assert.deepEqual(r.counted, ['unsupported_content_type']);
    const bodies = path.join(r.dataDir, 'bodies');
    assert.ok(!fs.existsSync(bodies) || fs.readdirSync(bodies, { withFileTypes: true }).every((e) => !e.isFile()), 'no body file is left');
  });

  it('refuses JSON declared in a charset other than UTF-8 before reading its body, and takes UTF-8 however it is written', async () => {
    const r = await startReceiver();
    for (const charset of ['ISO-8859-1', 'utf-16', 'windows-1252']) {
      const answer = await r.raw(`Content-Type: application/json; charset=${charset}\r\nContent-Length: 2\r\n`, '{}');
      assert.match(answer, /^HTTP\/1\.1 415 /, charset);
      assert.match(answer, new RegExp(`"unsupported_charset".*not ${charset.toUpperCase()} \\(Content-Type: application/json; charset=utf-8\\)`), charset);
    }
    const all = deliveries(r.db);
    assert.equal(all.length, 3);
    const d = all[all.length - 1];
    assert.equal(d!.http_status, 415);
    assert.match(d!.reason as string, /^Content-Type application\/json; charset=windows-1252 declares a charset other than UTF-8 \(the body was not read\)$/);
    assert.equal(quarantined(r.db).length, 0);
    assert.deepEqual(r.counted, ['unsupported_charset', 'unsupported_charset', 'unsupported_charset']);
    for (const charset of ['utf-8', 'UTF-8', 'utf8', '"utf-8"']) {
      const answer = await r.raw(`Content-Type: application/json; charset=${charset}\r\nContent-Length: 2\r\n`, '{}');
      assert.doesNotMatch(answer, /^HTTP\/1\.1 415 /, charset);
    }
  });

  it('records every refusal decided while reading the body; keeps what arrived of one that does not decode', async () => {
    const r = await startReceiver();
    const broken = await r.post('{}', { 'content-encoding': 'gzip' });
    assert.equal(broken.status, 400);
    assert.equal(broken.json.error!.id, 'invalid_encoding');
    const zstd = await r.post('{}', { 'content-encoding': 'zstd' });
    assert.equal(zstd.status, 415);
    const twice = await r.post('{}', { 'content-encoding': 'gzip, gzip' });
    assert.equal(twice.status, 415);

    const [q] = quarantined(r.db);
    assert.equal(quarantined(r.db).length, 1);
    assert.equal(q!.error_id, 'invalid_encoding');
    assert.ok((q!.body as Buffer).equals(Buffer.from('{}')), 'the bytes as sent are kept');
    // Its answer names the kept body, as every other bad body's does.
    assert.equal(broken.json.error!.quarantineId, q!.id);
    const d = deliveries(r.db);
    assert.deepEqual(
      d.map((x) => [x.http_status, x.quarantine_id]),
      [
        [400, q!.id],
        [415, null],
        [415, null],
      ],
    );
    assert.match(d[1]!.reason as string, /zstd/);
    assert.match(d[2]!.reason as string, /gzip, gzip/);
    // An encoding's name is the sender's text: answered and stored cut.
    const long = await r.post('{}', { 'content-encoding': 'E'.repeat(10_000) });
    assert.equal(long.status, 415);
    assert.ok((long.json.error!.message as string).length <= MAX_CONTENT_TYPE_CHARS + MAX_REASON_CHARS, 'the header is not echoed whole');
    assert.ok((deliveries(r.db)[3]!.reason as string).length <= MAX_REASON_CHARS);
    assert.deepEqual(r.counted, ['invalid_encoding', 'unsupported_encoding', 'unsupported_encoding', 'unsupported_encoding']);
  });

  it('a storage failure is answered 503 and counted, not logged with a stack', async () => {
    const r = await startReceiver();
    // A real SQLite failure: agent.db may not grow (as on a full disk).
    r.db.pragma('max_page_count = 1');
    const body = JSON.stringify(update(10, 1, 0, [item('1', 'A', [price('2026-12-01', '9999-12-31', 'Eat In', '4.50')], [], { ItemName: 'y'.repeat(200_000) })]));
    const res = await r.post(body);
    assert.equal(res.status, 503);
    assert.equal(res.headers.get('retry-after'), '30');
    assert.equal(res.json.error!.id, 'storage_unavailable');
    assert.deepEqual(r.counted, ['storage_unavailable']);
    assert.deepEqual(r.log.lines.filter((l) => l.startsWith('error')), []);
    r.db.pragma('max_page_count = 1073741823');
    assert.equal((await r.post(body)).status, 200);
  });
});

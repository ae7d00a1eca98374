import assert from 'node:assert/strict';
import net from 'node:net';
import path from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { startTestAgent } from '../helpers/agent';
import { item, price, tempDir, update } from '../helpers/fixtures';
import { openDatabase, storeFilePath } from '../../src/store/database';
import { Inbox, keepQuarantinedBody, type QuarantineLimits } from '../../src/store/inbox';
import { storedBody } from '../../src/store/queries';
import type { Logger } from '../../src/log';
import { parseConfig } from '../../src/config/load';

/**
 * Issue 24, item 5: bounded under floods. A refused call's slow body is not waited for beyond
 * webhook.refusedBodyWaitMs; bad bodies are counted in the per-minute summary, not logged one by one;
 * the quarantine keeps bodies within a daily budget and above the disk's free-space floor. (The flood
 * of thousands of slow connections is test/faults/flood.test.ts.)
 */

const TOKEN = 'head-office-token-5512';

/**
 * Sends a request's head and the first bytes of a body it declares much longer, then holds the rest
 * back for good. Resolves with what came back once the server closes the connection.
 */
function holdBodyBack(port: number, head: string): Promise<{ text: string; closedWhileHeld: boolean }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (d) => (text += d.toString('latin1')));
    socket.on('error', () => undefined);
    // The client never sends the rest of the body, so a close can only come from the server.
    socket.on('close', () => resolve({ text, closedWhileHeld: true }));
    socket.write(`${head}Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"LocationID":`);
  });
}

function capturingLog(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const at = (level: string) => (...args: unknown[]) => {
    lines.push(`${level} ${args.map(String).join(' ')}`);
  };
  return { lines, error: at('error'), warn: at('warn'), info: at('info'), verbose: at('verbose'), debug: at('debug') };
}

describe('the webhook under a flood', async () => {
  const log = capturingLog();
  // requestTimeoutMs stays at its 300 s default: a refused call is closed long before it.
  const t = await startTestAgent(
    { webhook: { bearerToken: TOKEN, expectedOrigin: 'menus.example.com', refusedBodyWaitMs: 300 }, retention: { quarantineBodiesPerDay: 2 } },
    { log },
  );
  const port = Number(new URL(t.webhookUrl).port);
  const webhookPath = new URL(t.webhookUrl).pathname;

  const cases: [string, string, number][] = [
    ['a wrong token', `POST ${webhookPath} HTTP/1.1\r\nHost: x\r\nOrigin: menus.example.com\r\nAuthorization: Bearer wrong\r\n`, 401],
    ['no token', `POST ${webhookPath} HTTP/1.1\r\nHost: x\r\nOrigin: menus.example.com\r\n`, 401],
    ['a wrong Origin', `POST ${webhookPath} HTTP/1.1\r\nHost: x\r\nOrigin: evil.example\r\nAuthorization: Bearer ${TOKEN}\r\n`, 403],
    ['a browser\'s request', `POST ${webhookPath} HTTP/1.1\r\nHost: x\r\nSec-Fetch-Site: cross-site\r\nOrigin: https://evil.example\r\n`, 403],
    ['an unknown path', `POST /elsewhere HTTP/1.1\r\nHost: x\r\n`, 404],
  ];
  for (const [what, head, status] of cases) {
    it(`a refused call (${what}) is answered ${status} and closed while its slow body is still held back`, { timeout: 60_000 }, async () => {
      // Fails by the test's timeout if the receiver waits for the body (it used to wait up to requestTimeoutMs).
      const got = await holdBodyBack(port, head);
      assert.ok(got.closedWhileHeld);
      assert.match(got.text, new RegExp(`^HTTP/1\\.1 ${status} `), got.text.slice(0, 120));
      // A refusal says it closes; an unknown path's answer is sent at once, and the connection is cut
      // once the rest of its body has not come within refusedBodyWaitMs.
      if (status !== 404) assert.match(got.text, /connection: close/i);
    });
  }

  it('a refused call whose body arrives at once is still read to its end and answered (a proxy in front passes the 401)', async () => {
    const res = await fetch(t.webhookUrl, { method: 'POST', body: 'x'.repeat(50_000), headers: { authorization: 'Bearer wrong', origin: 'menus.example.com' } });
    assert.equal(res.status, 401);
    await res.arrayBuffer();
  });

  it('bad bodies are counted in the per-minute summary, not logged one line each, and kept within the daily budget', async () => {
    const headers = { authorization: `Bearer ${TOKEN}`, origin: 'menus.example.com' };
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await t.post(`{"not json ${i}`, headers)).status);
    assert.deepEqual(statuses, [400, 400, 400, 400, 400]);
    // The receiver's notices reach the main thread in batches.
    for (const deadline = Date.now() + 10_000; (t.agent.refusals.snapshot().total.invalid_json ?? 0) < 5 && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(t.agent.refusals.snapshot().total.invalid_json, 5);
    // The minute's summary may already have been written if the test straddles a minute's end; it is
    // counted below. Any other line naming a bad body is one line per body.
    const isSummary = (l: string): boolean => l.startsWith('warn webhook: refused');
    assert.deepEqual(
      log.lines.filter((l) => /invalid_json|not valid JSON|rejected/.test(l) && !isSummary(l)),
      [],
      'no log line per bad body',
    );
    t.agent.refusals.close();
    // One line per minute (the test may straddle a minute's end): together they count all five.
    const summaries = log.lines.filter((l) => isSummary(l) && l.includes('invalid_json'));
    assert.ok(summaries.length >= 1 && summaries.length <= 2, summaries.join('\n'));
    assert.equal(summaries.reduce((n, l) => n + Number(/invalid_json (\d+)/.exec(l)![1]), 0), 5, summaries.join('\n'));
    // retention.quarantineBodiesPerDay 2: two bodies kept byte for byte, then only size and hash.
    const rows = t.agent.core.agentDb
      .prepare<[], { id: number; kept: number; body_bytes: number; body_sha256: string; reason: string }>(
        'SELECT id, length(body) = body_bytes AS kept, body_bytes, body_sha256, reason FROM quarantine ORDER BY id',
      )
      .all();
    assert.deepEqual(rows.map((r) => r.kept), [1, 1, 0, 0, 0]);
    for (const r of rows) {
      assert.equal(r.body_bytes, '{"not json 0'.length);
      assert.match(r.body_sha256, /^[0-9a-f]{64}$/);
    }
    assert.match(rows[2]!.reason, /body not kept: the daily quarantine budget is used up/);
    assert.equal(storedBody(t.agent.core.agentDb, 'quarantine', rows[2]!.id), null);
    assert.equal(storedBody(t.agent.core.agentDb, 'quarantine', rows[0]!.id)?.toString(), '{"not json 0');
  });
});

describe('the quarantine budget', () => {
  const openInbox = (limits: QuarantineLimits): { inbox: Inbox; db: Database.Database } => {
    const dir = tempDir();
    const db = openDatabase(storeFilePath(path.join(dir), 'agent'), { kind: 'agent' });
    return { inbox: new Inbox(db, limits), db };
  };
  const refuse = (inbox: Inbox, raw: string, at: string): number =>
    inbox.quarantine({ raw: Buffer.from(raw), sender: null, source: 'webhook', contentType: null, errorId: 'invalid_json', field: null, reason: 'bad', httpStatus: 400, receivedAt: new Date(at) })
      .quarantineId;
  const kept = (db: Database.Database): number[] =>
    db.prepare<[], { kept: number }>('SELECT length(body) = body_bytes AS kept FROM quarantine ORDER BY id').all().map((r) => r.kept);

  it('counts bytes per UTC day and starts again the next day', () => {
    const { inbox, db } = openInbox({ bodiesPerDay: 100, bytesPerDay: 100, diskFloorBytes: 0, freeBytes: () => 1e12 });
    refuse(inbox, 'a'.repeat(60), '2026-02-28T23:59:00Z');
    refuse(inbox, 'b'.repeat(60), '2026-02-28T23:59:30Z');
    refuse(inbox, 'c'.repeat(40), '2026-02-28T23:59:59Z');
    refuse(inbox, 'd'.repeat(60), '2026-03-01T00:00:00Z');
    assert.deepEqual(kept(db), [1, 0, 1, 1]);
    db.close();
  });

  it('keeps no body that would leave less than the disk floor free, and counts the rows still', () => {
    let free = 10_000;
    const { inbox, db } = openInbox({ bodiesPerDay: 100, bytesPerDay: 1e9, diskFloorBytes: 9_000, freeBytes: () => free });
    refuse(inbox, 'a'.repeat(500), '2026-05-01T10:00:00Z');
    refuse(inbox, 'b'.repeat(1_500), '2026-05-01T10:00:01Z');
    free = -1; // a disk that answers nonsense is taken as full, not as unlimited
    refuse(inbox, 'c', '2026-05-01T10:00:02Z');
    assert.deepEqual(kept(db), [1, 0, 0]);
    assert.match(db.prepare<[], { reason: string }>('SELECT reason FROM quarantine WHERE id = 2').get()!.reason, /disk is almost full/);
    assert.equal(db.prepare<[], { n: number }>('SELECT count(*) AS n FROM deliveries WHERE quarantine_id IS NOT NULL').get()!.n, 3);
    db.close();
  });

  it('decides at the edges of the budget exactly', () => {
    const limits = { bodiesPerDay: 2, bytesPerDay: 10, diskFloorBytes: 5 };
    assert.equal(keepQuarantinedBody(10, { bodies: 0, bytes: 0 }, limits, 15).keep, true);
    assert.equal(keepQuarantinedBody(11, { bodies: 0, bytes: 0 }, limits, 1e9).keep, false);
    assert.equal(keepQuarantinedBody(1, { bodies: 2, bytes: 0 }, limits, 1e9).keep, false);
    assert.equal(keepQuarantinedBody(10, { bodies: 0, bytes: 0 }, limits, 14).keep, false);
    assert.equal(keepQuarantinedBody(0, { bodies: 1, bytes: 10 }, limits, null).keep, true);
    assert.equal(keepQuarantinedBody(0, { bodies: 0, bytes: 0 }, { bodiesPerDay: 0, bytesPerDay: 0, diskFloorBytes: 0 }, null).keep, false);
  });
});

describe('the flood limits in the configuration', () => {
  it('refuse a body-memory budget below what one body holds in memory, naming the key', () => {
    const MiB = 1024 * 1024;
    assert.throws(() => parseConfig({ dataDir: tempDir(), webhook: { fileBodyFromBytes: 64 * MiB, maxBodyMemoryBytes: 32 * MiB } }), /webhook\.maxBodyMemoryBytes: must be at least webhook\.fileBodyFromBytes \(67108864\)/);
    assert.throws(() => parseConfig({ dataDir: tempDir(), webhook: { fileBodyFromBytes: 64 * MiB, maxBodyBytes: 8 * MiB, maxBodyMemoryBytes: 4 * MiB } }), /webhook\.maxBodyMemoryBytes: must be at least webhook\.maxBodyBytes \(8388608\)/);
    // Bodies larger than the budget go to files: a site may accept them without a larger budget.
    assert.equal(parseConfig({ dataDir: tempDir(), webhook: { maxBodyBytes: 300 * MiB } }).webhook.maxBodyMemoryBytes, 256 * MiB);
    const defaults = parseConfig({ dataDir: tempDir() }).webhook;
    assert.ok(defaults.maxBodyMemoryBytes >= Math.min(defaults.maxBodyBytes, defaults.fileBodyFromBytes));
    assert.ok(defaults.refusedBodyWaitMs < defaults.requestTimeoutMs);
  });

  it('accept bodies larger than the memory budget, whole or chunked: they go to files', { timeout: 60_000 }, async () => {
    const MiB = 1024 * 1024;
    const t = await startTestAgent({ webhook: { maxBodyBytes: 4 * MiB, maxBodyMemoryBytes: MiB, fileBodyFromBytes: MiB } });
    const big = (seq: number): Buffer => {
      const items = Array.from({ length: 9000 }, (_, i) => item(String(i), `ITEM-${i}`, [price('2026-12-01', '2027-12-31', 'Eat In', '4.50')]));
      const raw = Buffer.from(JSON.stringify(update(41, seq, seq - 1, items)));
      assert.ok(raw.length > 1.5 * MiB && raw.length < 4 * MiB, `${raw.length} bytes`);
      return raw;
    };
    const whole = await t.post(big(1));
    assert.equal(whole.status, 200, JSON.stringify(whole.json));
    const chunks = big(2);
    const chunked = await fetch(t.webhookUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: new ReadableStream({
        start(controller) {
          for (let at = 0; at < chunks.length; at += 64 * 1024) controller.enqueue(chunks.subarray(at, at + 64 * 1024));
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit & { duplex: 'half' });
    assert.equal(chunked.status, 200, await chunked.text());
    const files = (t.agent.core.agentDb.prepare('SELECT count(*) AS n FROM inbox_body_files').get() as { n: number }).n;
    assert.equal(files, 2, 'both written to files');
  });
});

import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import { describe, it } from 'node:test';
import { startTestAgent, type RunningTestAgent } from '../helpers/agent';
import { item, price, update } from '../helpers/fixtures';
import { MAX_ITEM_BYTES } from '../../src/domain/body';
import { bodyFilesDir } from '../../src/store/body-files';

const good = update(10, 101, 100, [item('1', 'A', [price('2026-12-01', '2026-12-31', 'Eat In', 5)])]);

function counts(t: RunningTestAgent): Record<string, number> {
  const n = (sql: string, db = t.agent.core.agentDb): number => (db.prepare(sql).get() as { n: number }).n;
  return {
    inbox: n('SELECT count(*) AS n FROM inbox'),
    quarantine: n('SELECT count(*) AS n FROM quarantine'),
    prices: n('SELECT count(*) AS n FROM price_ranges', t.agent.core.tillDb),
  };
}

function assertNoStack(json: unknown): void {
  const text = JSON.stringify(json);
  assert.ok(!/\bat .+\(.+:\d+:\d+\)/.test(text) && !text.includes('node_modules') && !text.includes('.ts:'), `response leaks internals: ${text}`);
}

/** Raw request, for framing the fetch API will not send (wrong lengths, no body). */
function rawRequest(url: string, options: http.RequestOptions, body?: Buffer | string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, options, (res) => {
      let data = '';
      res.on('data', (c) => (data += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

describe('rejections', () => {
  it('400 for a body that is not JSON, kept in quarantine, nothing applied', async () => {
    const t = await startTestAgent();
    const res = await t.post('{"ChangeSequence": 1,');
    assert.equal(res.status, 400);
    const error = (res.json as { error: { id: string; field: string; message: string; quarantineId: number } }).error;
    assert.equal(error.id, 'invalid_json');
    assert.equal(error.field, '(body)');
    assertNoStack(res.json);
    assert.deepEqual(counts(t), { inbox: 0, quarantine: 1, prices: 0 });
    const kept = t.agent.core.agentDb.prepare('SELECT body, error_id, reason FROM quarantine WHERE id = ?').get(error.quarantineId) as { body: Buffer; error_id: string };
    assert.equal(kept.body.toString(), '{"ChangeSequence": 1,');
    assert.equal(kept.error_id, 'invalid_json');
    assert.equal(t.agent.core.deliveries()[0]!.result, 'rejected');
  });

  for (const [name, mutate, field] of [
    ['missing LocationID', (b: Record<string, unknown>) => delete b.LocationID, 'LocationID'],
    ['non-numeric LocationID', (b: Record<string, unknown>) => (b.LocationID = 'Riverside'), 'LocationID'],
    ['missing ChangeSequence', (b: Record<string, unknown>) => delete b.ChangeSequence, 'ChangeSequence'],
    ['fractional ParentChangeSequence', (b: Record<string, unknown>) => (b.ParentChangeSequence = 100.5), 'ParentChangeSequence'],
    ['ScheduledItems not an array', (b: Record<string, unknown>) => (b.ScheduledItems = 'none'), 'ScheduledItems'],
    ['ChangeSequence not after its parent', (b: Record<string, unknown>) => (b.ChangeSequence = 99), 'ChangeSequence'],
  ] as const) {
    it(`400 naming the field for ${name}`, async () => {
      const t = await startTestAgent();
      const body = structuredClone(good);
      mutate(body);
      const res = await t.post(body);
      assert.equal(res.status, 400);
      const error = (res.json as { error: { id: string; field: string } }).error;
      assert.equal(error.id, 'invalid_envelope');
      assert.equal(error.field, field);
      assert.deepEqual(counts(t), { inbox: 0, quarantine: 1, prices: 0 });
    });
  }

  it('403 for a wrong or missing Origin, 401 for a missing or wrong bearer token; nothing stored', async () => {
    const t = await startTestAgent({ webhook: { expectedOrigin: 'menus.example.com', bearerToken: 'correct-horse-battery' } });
    const auth = { authorization: 'Bearer correct-horse-battery' };
    const cases: [Record<string, string>, number, string][] = [
      [{ ...auth }, 403, 'origin_not_allowed'],
      // A page's origin (scheme://host) that is not the menu service: a browser made it.
      [{ ...auth, origin: 'https://evil.example.com' }, 403, 'browser_request'],
      [{ ...auth, origin: 'http://menus.example.com' }, 403, 'browser_request'],
      [{ ...auth, origin: 'menus.example.com', 'sec-fetch-site': 'cross-site' }, 403, 'browser_request'],
      [{ origin: 'menus.example.com' }, 401, 'missing_bearer_token'],
      [{ origin: 'menus.example.com', authorization: 'Bearer wrong' }, 401, 'invalid_bearer_token'],
      [{ origin: 'menus.example.com', authorization: 'Basic Y29ycmVjdA==' }, 401, 'missing_bearer_token'],
    ];
    for (const [headers, status, id] of cases) {
      const res = await t.post(good, headers);
      assert.equal(res.status, status, JSON.stringify(headers));
      assert.equal((res.json as { error: { id: string } }).error.id, id);
    }
    assert.deepEqual(counts(t), { inbox: 0, quarantine: 0, prices: 0 });
    // Both accepted forms of Origin.
    for (const origin of ['menus.example.com', 'https://MENUS.example.com/']) {
      assert.equal((await t.post(good, { ...auth, origin })).status, 200, origin);
    }
  });

  it('413 over the size limit, before storing anything', async () => {
    const t = await startTestAgent({ webhook: { maxBodyBytes: 2048 } });
    const big = update(10, 101, 100, [item('1', 'A', [], [], { ItemName: 'x'.repeat(4000) })]);
    const res = await t.post(big);
    assert.equal(res.status, 413);
    assert.equal((res.json as { error: { id: string } }).error.id, 'payload_too_large');
    assert.deepEqual(counts(t), { inbox: 0, quarantine: 0, prices: 0 });
    const refused = t.agent.core.deliveries()[0]!;
    assert.equal(refused.result, 'rejected');
    assert.equal(refused.httpStatus, 413);
    assert.match(refused.reason!, /larger than webhook\.maxBodyBytes \(2048 bytes\)/);
    assert.ok(refused.bytes > 4000);
    assert.equal((await t.post(good)).status, 200);
  });

  it('415 for a body that says it is not JSON, before reading it, recorded in the delivery history', async () => {
    const t = await startTestAgent();
    const res = await t.post(JSON.stringify(good), { 'content-type': 'text/plain' });
    assert.equal(res.status, 415);
    // Refused before its body is read (a large one would otherwise be held to keep it): nothing kept.
    assert.deepEqual(counts(t), { inbox: 0, quarantine: 0, prices: 0 });
    const refused = t.agent.core.deliveries()[0]!;
    assert.equal(refused.result, 'rejected');
    assert.equal(refused.httpStatus, 415);
    // With no Content-Type at all the body is accepted.
    const noType = await rawRequest(t.webhookUrl, { method: 'POST' }, JSON.stringify(good));
    assert.equal(noType.status, 200);
  });

  it('400 for an empty body; 408 for a body shorter than its Content-Length once the request times out', async () => {
    const t = await startTestAgent({ webhook: { requestTimeoutMs: 1500, headersTimeoutMs: 1000 } });
    const empty = await rawRequest(t.webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json' } });
    assert.equal(empty.status, 400);
    const short = await rawRequest(t.webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': '10' } }, '{}');
    assert.equal(short.status, 408);
    assert.deepEqual(counts(t), { inbox: 0, quarantine: 1, prices: 0 });
  });

  it('503 with Retry-After when storage fails, then 200 once it recovers', async () => {
    const t = await startTestAgent();
    // A real SQLite failure: agent.db refuses to grow (as on a full disk) for the inbox's
    // connection (the webhook's thread), where deliveries are stored (a smaller cap is clamped to the pages in use).
    await t.agent.inbox.setMaxPageCount(1);
    const big = update(10, 101, 100, [item('1', 'A', [], [], { ItemName: 'y'.repeat(200_000) })]);
    const res = await t.post(big);
    assert.equal(res.status, 503);
    assert.equal(res.headers.get('retry-after'), '30');
    assert.equal((res.json as { error: { id: string } }).error.id, 'storage_unavailable');
    assertNoStack(res.json);
    await t.agent.inbox.setMaxPageCount(1_073_741_823);
    assert.equal((await t.post(big)).status, 200);
    await t.settle();
    assert.equal(t.agent.core.status()[0]!.lastChangeSequence, 101);
  });

  it('GET /healthz answers without data; other paths and methods are 404 JSON', async () => {
    const t = await startTestAgent();
    const health = await fetch(`${t.baseUrl}/healthz`);
    assert.equal(health.status, 200);
    assert.deepEqual(await health.json(), { status: 'ok' });
    assert.equal(health.headers.get('x-content-type-options'), 'nosniff');
    for (const [method, path] of [['GET', t.webhookUrl], ['POST', `${t.baseUrl}/other`], ['GET', `${t.baseUrl}/`]] as const) {
      const res = await fetch(path, { method });
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.equal(((await res.json()) as { error: { id: string } }).error.id, 'not_found');
    }
    assert.equal(health.headers.get('x-powered-by'), null);
  });

  it('400 item_too_large for one item over MAX_ITEM_BYTES, kept in quarantine, no body file left', async () => {
    const t = await startTestAgent({ webhook: { maxBodyBytes: 32 * 1024 * 1024 } });
    const name = 'x'.repeat(MAX_ITEM_BYTES);
    const body = { ChangeSequence: 2, ParentChangeSequence: 1, LocationID: 8, ScheduledItems: [{ PLU: '1', ItemID: 'big', ItemName: name, ItemType: 'RECIPE', PriceUpdates: [], ScheduleUpdates: [] }] };
    const res = await t.post(body);
    assert.equal(res.status, 400);
    const error = (res.json as { error: { id: string; field: string; quarantineId: number } }).error;
    assert.equal(error.id, 'item_too_large');
    assert.equal(error.field, 'ScheduledItems[0]');
    assertNoStack(res.json);
    assert.deepEqual(counts(t), { inbox: 0, quarantine: 1, prices: 0 });
    const kept = t.agent.core.agentDb.prepare('SELECT error_id FROM quarantine WHERE id = ?').get(error.quarantineId) as { error_id: string };
    assert.equal(kept.error_id, 'item_too_large');
    const bodies = bodyFilesDir(t.config.dataDir);
    assert.deepEqual(fs.existsSync(bodies) ? fs.readdirSync(bodies) : [], [], 'the body file went with the refusal');
  });
  it('400 too_many_items and member_too_large for bodies of millions of tiny elements, well under maxBodyBytes; the webhook thread stays up', async () => {
    const t = await startTestAgent();
    const zeros = Buffer.from(`{"ChangeSequence":2,"ParentChangeSequence":1,"LocationID":8,"ScheduledItems":[${new Array(5_000_000).fill('0').join(',')}]}`);
    const pad = Buffer.from(`{"ChangeSequence":2,"ParentChangeSequence":1,"LocationID":8,"Pad":[${new Array(8_000_000).fill('1').join(',')}],"ScheduledItems":[]}`);
    for (const [raw, id, field] of [[zeros, 'too_many_items', 'ScheduledItems'], [pad, 'member_too_large', 'Pad']] as const) {
      assert.ok(raw.length < t.config.webhook.maxBodyBytes);
      const res = await fetch(t.webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: raw });
      assert.equal(res.status, 400);
      const error = ((await res.json()) as { error: { id: string; field: string } }).error;
      assert.deepEqual([error.id, error.field], [id, field]);
    }
    assert.deepEqual(counts(t), { inbox: 0, quarantine: 2, prices: 0 });
    const bodies = bodyFilesDir(t.config.dataDir);
    assert.deepEqual(fs.existsSync(bodies) ? fs.readdirSync(bodies) : [], [], 'the body files went with the refusals');
    // The same thread answers the next delivery.
    assert.equal((await t.post({ ChangeSequence: 1, ParentChangeSequence: 0, LocationID: 8, ScheduledItems: [] })).status, 200);
  });
});

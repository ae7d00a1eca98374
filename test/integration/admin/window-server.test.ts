import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import zlib from 'node:zlib';
import { csrfTokenFor } from '../../../src/admin/security';
import { silentLogger } from '../../../src/log';
import { createControlApp } from '../../../src/ops/control';
import { RENDERER_DIST, startAdminAgent } from '../../helpers/admin';
import { send } from '../../unit/http/serve';

/**
 * The status window's server and the control channel on `router` without express (issue 29): the
 * files, the body limits and refusals each route had with express.static/json/raw, end to end over
 * real HTTP. The pieces are tested on their own in test/unit/http.
 */

const ROOT = path.resolve(__dirname, '..', '..', '..');
const IMPORT_LIMIT = 4096;
/** JSON of exactly `bytes` bytes: `start`, then x's in a string, then `"}`. */
const padded = (start: string, bytes: number): string => `${start}${'x'.repeat(bytes - start.length - 2)}"}`;
/** A body for PUT /api/sync/paused that leaves the agent running. */
const pausedBody = (bytes: number): string => padded('{"paused":false,"pad":"', bytes);
const errorId = (a: { json(): unknown }): string => (a.json() as { error: { id: string } }).error.id;

describe('the status window server without express', async () => {
  const t = await startAdminAgent({ webhook: { maxBodyBytes: IMPORT_LIMIT } });
  const host = `host: ${t.adminHost}`;
  const change = [`authorization: Bearer ${t.token}`, `x-csrf-token: ${csrfTokenFor(t.token)}`];
  const json = [...change, 'content-type: application/json'];
  const request = (line: string, headers: string[] = [], body?: string | Buffer, options?: { chunked?: boolean }) => send({ host: new URL(t.adminUrl).hostname, port: t.adminPort }, [line, host, ...headers].join('\n'), body, options);

  it('serves the window\'s files with their types, no-store and the security headers, HEAD too', async () => {
    for (const [file, type] of [
      ['index.html', 'text/html; charset=utf-8'],
      ['app.js', 'text/javascript; charset=utf-8'],
      ['app.css', 'text/css; charset=utf-8'],
    ]) {
      const bytes = fs.readFileSync(path.join(RENDERER_DIST, file!));
      for (const method of ['GET', 'HEAD']) {
        const a = await request(`${method} /${file === 'index.html' ? '' : file} HTTP/1.1`);
        assert.equal(a.status, 200, `${method} ${file}`);
        assert.equal(a.header('content-type'), type);
        assert.equal(a.header('content-length'), String(bytes.length));
        assert.deepEqual(a.body, method === 'HEAD' ? Buffer.alloc(0) : bytes);
        assert.equal(a.header('cache-control'), 'no-store');
        assert.match(a.header('content-security-policy') ?? '', /default-src 'none'.*frame-ancestors 'none'/);
        assert.equal(a.header('x-content-type-options'), 'nosniff');
        assert.equal(a.header('x-frame-options'), 'DENY');
        assert.equal(a.header('x-powered-by'), undefined);
      }
    }
  });

  it('answers paths outside the build, dotfiles and folders with the JSON 404', async () => {
    for (const target of ['/../package.json', '/%2e%2e/%2e%2e/package.json', '/..%2f..%2fpackage.json', '/..%5c..%5cpackage.json', '/..\\..\\package.json', '/.env', '/%2e%2e', '/app.js%00', '/%E0%A4%A', '/nope.js', '/app.js/']) {
      const a = await request(`GET ${target} HTTP/1.1`);
      assert.equal(a.status, 404, target);
      assert.deepEqual(a.json(), { error: { id: 'not_found', message: 'no such endpoint' } }, target);
      assert.match(a.header('content-security-policy') ?? '', /default-src 'none'/, target);
    }
  });

  it('still checks the Host before serving a file', async () => {
    const a = await send({ host: new URL(t.adminUrl).hostname, port: t.adminPort }, ['GET /app.js HTTP/1.1', 'host: evil.example'].join('\n'));
    assert.equal(a.status, 421);
    assert.equal(a.header('content-type'), 'text/plain; charset=utf-8');
    assert.doesNotMatch(a.body.toString(), /use strict/);
  });

  it('takes a window change of exactly 16 KiB and refuses one byte more with 413, declared or chunked', async () => {
    for (const chunked of [false, true]) {
      assert.equal(Buffer.byteLength(pausedBody(16 * 1024)), 16 * 1024);
      const ok = await request('PUT /api/sync/paused HTTP/1.1', json, pausedBody(16 * 1024), { chunked });
      assert.equal(ok.status, 200, ok.body.toString());
      const over = await request('PUT /api/sync/paused HTTP/1.1', json, pausedBody(16 * 1024 + 1), { chunked });
      assert.equal(over.status, 413);
      assert.equal(errorId(over), 'payload_too_large');
    }
    assert.equal(t.agent.isPaused, false);
  });

  it('answers malformed JSON 400, another charset 415, and reads no body that is not labelled JSON', async () => {
    const malformed = await request('PUT /api/sync/paused HTTP/1.1', json, '{"paused":');
    assert.equal(malformed.status, 400);
    assert.equal(errorId(malformed), 'bad_request');
    const latin1 = await request('PUT /api/sync/paused HTTP/1.1', [...change, 'content-type: application/json; charset=iso-8859-1'], '{"paused":true}');
    assert.equal(latin1.status, 415);
    assert.equal(errorId(latin1), 'unsupported_charset');
    const text = await request('PUT /api/sync/paused HTTP/1.1', [...change, 'content-type: text/plain'], '{"paused":true}');
    assert.equal(text.status, 400);
    assert.equal(errorId(text), 'invalid_parameter', 'the route saw no body');
    assert.equal(t.agent.isPaused, false);
  });

  it('the login code fits in 1 KiB; more is refused with 413 before the code is looked at', async () => {
    const login = [`origin: ${t.adminOrigin}`, 'content-type: application/json'];
    const exact = `{"code":"${'x'.repeat(1024 - 11)}"}`;
    assert.equal(Buffer.byteLength(exact), 1024);
    const a = await request('POST /api/login HTTP/1.1', login, exact);
    assert.equal(a.status, 401);
    assert.equal(errorId(a), 'login_code_invalid');
    const over = await request('POST /api/login HTTP/1.1', login, `{"code":"${'x'.repeat(1025 - 11)}"}`);
    assert.equal(over.status, 413);
  });

  it('takes no compressed body on the login or a window change: 415, nothing decompressed', async () => {
    const login = [`origin: ${t.adminOrigin}`, 'content-type: application/json', 'content-encoding: gzip'];
    const a = await request('POST /api/login HTTP/1.1', login, zlib.gzipSync('{"code":"x"}'));
    assert.equal(a.status, 415);
    assert.equal(errorId(a), 'unsupported_encoding');
    const b = await request('PUT /api/sync/paused HTTP/1.1', [...json, 'content-encoding: br'], zlib.brotliCompressSync(pausedBody(64)));
    assert.equal(b.status, 415);
    assert.equal(errorId(b), 'unsupported_encoding');
    // The same change, not compressed, is taken.
    assert.equal((await request('PUT /api/sync/paused HTTP/1.1', json, pausedBody(64))).status, 200);
  });

  it('an import takes any body up to webhook.maxBodyBytes, whatever its type', async () => {
    const junk = await request('POST /api/import HTTP/1.1', [...change, 'content-type: text/plain; charset=latin1'], 'x'.repeat(IMPORT_LIMIT));
    assert.equal(junk.status, 422, 'read and refused as an update, not as a body');
    const over = await request('POST /api/import HTTP/1.1', change, 'x'.repeat(IMPORT_LIMIT + 1));
    assert.equal(over.status, 413);
    const empty = await request('POST /api/import HTTP/1.1', change, '');
    assert.equal(errorId(empty), 'empty_payload');
  });

  it('reads query strings flat: a repeated parameter is not a number, a[b] is no object', async () => {
    const auth = [`authorization: Bearer ${t.token}`];
    assert.equal((await request('GET /api/deliveries?limit=1&limit=2 HTTP/1.1', auth)).status, 400);
    assert.equal((await request('GET /api/deliveries?limit[a]=1 HTTP/1.1', auth)).status, 200, 'limit[a] is another key');
    assert.equal((await request('GET /api/deliveries?limit=5 HTTP/1.1', auth)).status, 200);
  });
});

describe('the control channel without express', async () => {
  const t = await startAdminAgent({ webhook: { maxBodyBytes: IMPORT_LIMIT } });
  const server = http.createServer(createControlApp(t.agent, silentLogger));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.address() as AddressInfo).port;

  it('reads its JSON whatever the Content-Type, up to 16 KiB', async () => {
    for (const type of ['text/plain', 'application/octet-stream', null]) {
      const a = await send(port, ['PUT /paused HTTP/1.1', ...(type ? [`content-type: ${type}`] : [])].join('\n'), '{"paused":false}');
      assert.equal(a.status, 200, String(type));
      assert.equal((a.json() as { paused: boolean }).paused, false);
      assert.equal(a.header('x-powered-by'), undefined);
    }
    const reason = (n: number): string => padded('{"paused":false,"reason":"', n);
    assert.equal(Buffer.byteLength(reason(16 * 1024)), 16 * 1024);
    assert.equal(errorId(await send(port, 'PUT /paused HTTP/1.1', reason(16 * 1024))), 'invalid_parameter', 'read, then refused by its schema');
    assert.equal((await send(port, 'PUT /paused HTTP/1.1', reason(16 * 1024 + 1))).status, 413);
    assert.equal((await send(port, 'PUT /paused HTTP/1.1\ncontent-type: text/plain; charset=latin1', '{"paused":false}')).status, 415);
  });

  it('imports up to webhook.maxBodyBytes, and says which routes do not exist', async () => {
    assert.equal((await send(port, 'POST /import HTTP/1.1', 'x'.repeat(IMPORT_LIMIT + 1))).status, 413);
    assert.equal(errorId(await send(port, 'POST /import HTTP/1.1', '')), 'empty_payload');
    const none = await send(port, 'GET /nope HTTP/1.1');
    assert.equal(none.status, 404);
    assert.deepEqual(none.json(), { error: { id: 'not_found', message: 'no such control route' } });
  });
});

describe('what the two servers load', () => {
  it('neither the status window server nor the control channel loads express or its body and file packages', () => {
    const script = [
      "require('./src/admin/server');",
      "require('./src/ops/control');",
      "require('./src/admin/service');",
      'const loaded = Object.keys(require.cache).map((f) => /node_modules[\\\\/]([^\\\\/]+)[\\\\/]/.exec(f)?.[1]).filter(Boolean);',
      'console.log(JSON.stringify([...new Set(loaded)]));',
    ].join('\n');
    const run = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    const loaded = JSON.parse(run.stdout.trim().split('\n').pop()!) as string[];
    assert.ok(loaded.includes('router'), `router is what serves them: ${loaded.join(', ')}`);
    for (const name of ['express', 'body-parser', 'serve-static', 'send', 'iconv-lite', 'qs', 'mime-db', 'mime-types', 'raw-body']) {
      assert.ok(!loaded.includes(name), `${name} is loaded: ${loaded.join(', ')}`);
    }
  });
});

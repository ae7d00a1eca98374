import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import Router from 'router';
import { AppError } from '../../../src/errors';
import { errorMiddleware, sendJson } from '../../../src/http/errors';
import { requestListener } from '../../../src/http/listener';
import { sendText } from '../../../src/http/reply';
import { silentLogger } from '../../../src/log';
import { send, serve } from './serve';

/** Answers as express's res.json()/res.type().send() gave them, and the app's final step (src/http/reply.ts, listener.ts). */

describe('answers', async () => {
  const port = await serve((app) => {
    app.get('/text', (_req, res) => sendText(res, 421, 'text/plain', 'refused\n'));
    app.get('/metrics', (_req, res) => sendText(res, 200, 'text/plain; version=0.0.4; charset=utf-8', 'x 1\n'));
    app.get('/bytes', (_req, res) => sendText(res, 200, 'text/plain; charset=utf-8', Buffer.from('{"a":"é"}')));
    app.get('/json', (_req, res) => sendJson(res, 202, { café: true }));
    app.get('/async', async () => {
      await new Promise((r) => setImmediate(r));
      throw new AppError('not_pending', 409, 'the update is not waiting');
    });
  });

  it('text gets a UTF-8 charset unless it names one, and its length', async () => {
    const a = await send(port, 'GET /text HTTP/1.1');
    assert.equal(a.status, 421);
    assert.equal(a.header('content-type'), 'text/plain; charset=utf-8');
    assert.equal(a.header('content-length'), '8');
    assert.equal(a.body.toString(), 'refused\n');
    assert.equal((await send(port, 'GET /metrics HTTP/1.1')).header('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
    const bytes = await send(port, 'GET /bytes HTTP/1.1');
    assert.equal(bytes.header('content-type'), 'text/plain; charset=utf-8');
    assert.equal(bytes.header('content-length'), String(Buffer.byteLength('{"a":"é"}')));
  });

  it('JSON says so with a UTF-8 charset and its byte length; HEAD gets the headers only', async () => {
    const a = await send(port, 'GET /json HTTP/1.1');
    assert.equal(a.status, 202);
    assert.equal(a.header('content-type'), 'application/json; charset=utf-8');
    assert.equal(a.header('content-length'), String(Buffer.byteLength('{"café":true}')));
    assert.deepEqual(a.json(), { café: true });
    const head = await send(port, 'HEAD /json HTTP/1.1');
    assert.equal(head.status, 202);
    assert.equal(head.header('content-length'), a.header('content-length'));
    assert.equal(head.body.length, 0);
  });

  it('a rejected async handler reaches the error handler', async () => {
    const a = await send(port, 'GET /async HTTP/1.1');
    assert.equal(a.status, 409);
    assert.deepEqual(a.json(), { error: { id: 'not_pending', message: 'the update is not waiting' } });
  });
});

describe('the final step of a router app', () => {
  async function listen(build: (app: Router.Router) => void, withErrorHandler = false): Promise<number> {
    const app = Router();
    build(app);
    const fail = errorMiddleware(silentLogger);
    if (withErrorHandler) app.use(fail);
    const server = http.createServer(requestListener(app, fail));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));
    return (server.address() as AddressInfo).port;
  }

  it('answers what no handler answered with 404 not_found, and an error no handler took with its answer', async () => {
    const port = await listen((app) => {
      app.get('/boom', () => {
        throw new AppError('too_many_windows', 503, 'too many status windows are open');
      });
      app.get('/router', (_req, _res, next) => next('router'));
    });
    const none = await send(port, 'GET /nope HTTP/1.1');
    assert.equal(none.status, 404);
    assert.deepEqual(none.json(), { error: { id: 'not_found', message: 'no such endpoint' } });
    assert.equal((await send(port, 'GET /router HTTP/1.1')).status, 404);
    const boom = await send(port, 'GET /boom HTTP/1.1');
    assert.equal(boom.status, 503);
    assert.equal((boom.json() as { error: { id: string } }).error.id, 'too_many_windows');
  });

  it('ends the connection when an error comes after the answer began (never a second answer, never a crash)', async () => {
    const port = await listen((app) => {
      app.get('/half', (_req, res, next) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('partial');
        setImmediate(() => next(new Error('the file went away')));
      });
    }, true);
    const a = await send(port, 'GET /half HTTP/1.1');
    assert.equal(a.status, 200);
    assert.equal(a.body.toString(), 'partial');
    assert.equal(a.complete, false, 'cut, not ended as if whole');
    assert.equal((await send(port, 'GET /nope HTTP/1.1')).status, 404, 'the server goes on');
  });
});

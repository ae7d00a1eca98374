import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { clientWindowStep, serviceLoginLink, serviceRunning, type ClientWindowShows, type ServiceEndpoints, type ServiceView } from '../../../src/electron/service-client';

/**
 * The desktop app as a client of the service (service-client.ts): its window loads only login links
 * the service gave over its control channel, on the address the service bound at its start, and leaves
 * them for its local page while the service is stopped.
 */

const STATUS: ServiceView = {
  kind: 'status',
  summary: { generatedAt: '2026-11-25T10:00:00.000Z', light: 'green', label: 'Up to date', headline: 'x', reasons: [], paused: false, pausedBy: null, pausedAt: null, adminUrl: 'http://127.83.4.201:8780/' },
};
const STOPPED: ServiceView[] = [
  { kind: 'no-channel', running: false },
  { kind: 'refused', running: false },
];
const RUNNING: ServiceView[] = [STATUS, { kind: 'failed', message: 'database is locked' }, { kind: 'no-channel', running: true }, { kind: 'refused', running: true }];

describe('serviceRunning', () => {
  it('running when the channel answers (even with an error), by the health check otherwise; unknown before asking', () => {
    for (const view of RUNNING) assert.equal(serviceRunning(view), true, view.kind);
    for (const view of STOPPED) assert.equal(serviceRunning(view), false, view.kind);
    assert.equal(serviceRunning({ kind: 'looking' }), null);
  });
});

describe('clientWindowStep', () => {
  it('leaves the service\'s window for the local page as soon as the service is seen stopped', () => {
    for (const view of STOPPED) assert.equal(clientWindowStep(view, 'page'), 'show-not-running', view.kind);
    for (const view of [STATUS, { kind: 'failed', message: 'database is locked' } as const]) assert.equal(clientWindowStep(view, 'page'), 'none', view.kind);
    assert.equal(clientWindowStep({ kind: 'looking' }, 'page'), 'none');
  });

  it('leaves it too when only the health check answers: the channel that gave the link is gone, and anyone may answer on a port', () => {
    for (const view of [{ kind: 'no-channel', running: true }, { kind: 'refused', running: true }] as const) assert.equal(clientWindowStep(view, 'page'), 'show-not-running', view.kind);
  });

  it('asks again for a login link once a service that gave none answers', () => {
    for (const view of RUNNING) assert.equal(clientWindowStep(view, 'not-running'), 'ask-link', view.kind);
    for (const view of [...STOPPED, { kind: 'looking' } as const]) assert.equal(clientWindowStep(view, 'not-running'), 'none', view.kind);
  });

  it('does not ask again by itself after a refusal, nor for a window not opened yet', () => {
    for (const shows of ['refused', 'nothing'] as ClientWindowShows[]) {
      for (const view of [...RUNNING, ...STOPPED]) assert.equal(clientWindowStep(view, shows), 'none', `${shows} ${view.kind}`);
    }
  });
});

describe('serviceLoginLink against a control channel', { skip: process.platform === 'win32' ? 'a Unix socket stands in for the channel' : false }, () => {
  let dir: string;
  let server: http.Server;
  let reply: unknown = null;
  let service: ServiceEndpoints;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pos-link-'));
    const control = path.join(dir, 'control.sock');
    server = http.createServer((req, res) => {
      res.writeHead(req.method === 'POST' && req.url === '/login-link' ? 200 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply));
    });
    await new Promise<void>((resolve) => server.listen(control, resolve));
    service = { configFile: path.join(dir, 'config.json'), adminUrl: 'http://127.0.0.1:8780/', healthUrl: 'http://127.0.0.1:1/healthz', control };
  });
  after(async () => {
    await new Promise((resolve) => server.close(resolve));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const answer = (url: string): void => {
    reply = { url, expiresAt: '2026-11-25T10:15:00.000Z', rotated: false };
  };

  it('takes the link\'s own loopback origin, not the configured address, when asked without one (the desktop app)', async () => {
    answer('http://127.83.4.201:8780/?login=abc');
    assert.deepEqual(await serviceLoginLink(service, null, { actor: 'maria@till-pc' }), { kind: 'link', url: 'http://127.83.4.201:8780/?login=abc' });
  });

  it('never a plain address or anything not loopback http, whoever answered on the channel', async () => {
    for (const url of ['http://127.83.4.201:8780/', 'http://evil.example/?login=abc', 'https://127.0.0.1:8780/?login=abc', 'file:///etc/passwd?login=abc']) {
      answer(url);
      const link = await serviceLoginLink(service, null, { actor: 'maria@till-pc' });
      assert.equal(link.kind, 'unavailable', url);
    }
  });

  it('still holds a link to the origin it is given, when it is given one', async () => {
    answer('http://127.83.4.201:8780/?login=abc');
    assert.equal((await serviceLoginLink(service, 'http://127.0.0.1:8780', { actor: 'maria@till-pc' })).kind, 'unavailable');
    assert.equal((await serviceLoginLink(service, 'http://127.83.4.201:8780', { actor: 'maria@till-pc' })).kind, 'link');
  });

  it('nothing listening on the channel (the service stopped): unavailable, with no link', async () => {
    const stopped = { ...service, control: path.join(dir, 'nobody.sock') };
    const link = await serviceLoginLink(stopped, null, { actor: 'maria@till-pc', timeoutMs: 2000 });
    assert.equal(link.kind, 'unavailable');
  });
});

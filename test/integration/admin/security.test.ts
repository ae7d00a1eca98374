import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { startAdminServer } from '../../../src/admin/server';
import { UiSettingsStore } from '../../../src/admin/settings';
import { csrfTokenFor, mintSession } from '../../../src/admin/security';
import { parseConfig } from '../../../src/config/load';
import { ConfigError } from '../../../src/errors';
import { silentLogger, type Logger } from '../../../src/log';
import { RENDERER_DIST, rawRequest, startAdminAgent } from '../../helpers/admin';
import { startTestAgent } from '../../helpers/agent';
import { tempDir } from '../../helpers/fixtures';

function collectingLogger(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const push = (...a: unknown[]): void => {
    lines.push(a.map(String).join(' '));
  };
  return { log: { error: push, warn: push, info: push, verbose: push, debug: push }, lines };
}

describe('admin server security over real HTTP', async () => {
  const { log, lines } = collectingLogger();
  const t = await startAdminAgent({}, { log });
  const host = `${t.adminHost}`;
  const auth = { authorization: `Bearer ${t.token}` };
  const csrf = csrfTokenFor(t.token);

  it('listens on loopback only, on its own port, at an address of its own', () => {
    assert.match(t.adminUrl, /^http:\/\/127\.\d{1,3}\.\d{1,3}\.\d{1,3}:\d+\/$/);
    assert.notEqual(new URL(t.adminUrl).hostname, '127.0.0.1');
    assert.notEqual(t.adminPort, Number(new URL(t.webhookUrl).port));
  });

  it('serves the window for a login link without trading the code or setting a cookie; the page\'s script trades it (POST /api/login)', async () => {
    const link = new URL(t.loginUrl);
    const page = await rawRequest(link.href);
    assert.equal(page.status, 200);
    assert.match(page.body, /<title>POS Sync Agent/);
    assert.match(String(page.headers['content-type']), /text\/html/);
    assert.equal(page.headers['set-cookie'], undefined, 'no cookie: another port of this host would receive it');
    assert.equal(page.headers.location, undefined);
    const code = link.searchParams.get('login')!;
    const origin = `http://${host}`;
    const traded = await rawRequest(`${t.adminUrl}api/login`, { method: 'POST', headers: { host, origin, 'content-type': 'application/json' }, body: JSON.stringify({ code }) });
    assert.equal(traded.status, 200, traded.body);
    assert.equal(traded.headers['set-cookie'], undefined);
    const session = (JSON.parse(traded.body) as { session: string }).session;
    assert.equal((await rawRequest(`${t.adminUrl}api/status`, { headers: { host, authorization: `Session ${session}` } })).status, 200);
    const again = await rawRequest(`${t.adminUrl}api/login`, { method: 'POST', headers: { host, origin, 'content-type': 'application/json' }, body: JSON.stringify({ code }) });
    assert.equal(again.status, 401);
    assert.equal(JSON.parse(again.body).error.id, 'login_code_used');
    // From another origin (another port of this host), even with a fresh code: refused.
    const code2 = new URL(t.loginUrl).searchParams.get('login')!;
    const crossPort = await rawRequest(`${t.adminUrl}api/login`, { method: 'POST', headers: { host, origin: 'http://127.0.0.1:1', 'content-type': 'application/json' }, body: JSON.stringify({ code: code2 }) });
    assert.equal(crossPort.status, 403);
  });

  it('a login link with a path naming another host (//evil.example/) never redirects off the window (issue 24)', async () => {
    const code = new URL(t.loginUrl).searchParams.get('login')!;
    const res = await rawRequest(`${t.adminUrl}/evil.example/?login=${code}`, { headers: { host } });
    assert.ok(res.status < 300 || res.status >= 400, `status ${res.status}`);
    assert.equal(res.headers.location, undefined);
  });

  it('a wrong token or code in a login URL gets no session', async () => {
    const res = await rawRequest(`${t.adminUrl}?token=${'x'.repeat(43)}`);
    assert.equal(res.headers['set-cookie'], undefined);
    const traded = await rawRequest(`${t.adminUrl}api/login`, { method: 'POST', headers: { host, 'content-type': 'application/json' }, body: JSON.stringify({ code: 'x'.repeat(43) }) });
    assert.equal(traded.status, 401);
    assert.doesNotMatch(traded.body, /session"/);
  });

  // On an address of its own, 127.0.0.1 and localhost at its port name another listener, not it.
  for (const badHost of ['evil.example:PORT', 'evil.example', '127.0.0.1.nip.io:PORT', 'localhost:1', '127.0.0.1', '[::2]:PORT', '', '127.0.0.1:PORT', 'localhost:PORT', '[::1]:PORT']) {
    it(`refuses Host "${badHost}" even with a valid token (DNS rebinding)`, async () => {
      const value = badHost.replace('PORT', String(t.adminPort));
      for (const p of ['/', '/api/status', '/app.js', `/?token=${t.token}`]) {
        const res = await rawRequest(`${t.adminUrl.slice(0, -1)}${p}`, { headers: { ...auth, host: value } });
        assert.ok(res.status === 421 || res.status === 400, `${p} with Host ${value}: ${res.status}`);
        assert.doesNotMatch(res.body, /POS Sync Agent|locations/);
        assert.equal(res.headers['set-cookie'], undefined);
      }
    });
  }

  it('at 127.0.0.1 and its port, serves no window: a page saying how it opens, asking the browser to drop what it kept there', async () => {
    const door = `http://127.0.0.1:${t.adminPort}`;
    const page = await rawRequest(`${door}/`, { headers: { host: `127.0.0.1:${t.adminPort}` } });
    assert.equal(page.status, 200);
    assert.equal(page.headers['clear-site-data'], '"cache", "storage"');
    assert.match(String(page.headers['content-security-policy'] ?? ''), /default-src 'none'/);
    assert.match(page.body, /pos-sync-agent admin-url/);
    assert.doesNotMatch(page.body, /<script/);
    // Neither the window's files nor its API, with the token or a login code from this start.
    for (const p of ['/app.js', '/index.html', '/api/status', '/api/session']) {
      const res = await rawRequest(`${door}${p}`, { headers: { ...auth, host: `127.0.0.1:${t.adminPort}` } });
      assert.equal(res.status, 404, p);
      assert.equal(res.headers['clear-site-data'], '"cache", "storage"', p);
    }
    const code = new URL(t.loginUrl).searchParams.get('login')!;
    const traded = await rawRequest(`${door}/api/login`, { method: 'POST', headers: { host: `127.0.0.1:${t.adminPort}`, origin: door, 'content-type': 'application/json' }, body: JSON.stringify({ code }) });
    assert.equal(traded.status, 404);
    assert.doesNotMatch(traded.body, /session/);
    // The code was not spent there: it still opens the window at its own address.
    const real = await rawRequest(`${t.adminUrl}api/login`, { method: 'POST', headers: { host: t.adminHost, origin: t.adminOrigin, 'content-type': 'application/json' }, body: JSON.stringify({ code }) });
    assert.equal(real.status, 200);
    // A rebinding page gets nothing there either.
    assert.equal((await rawRequest(`${door}/`, { headers: { host: `evil.example:${t.adminPort}` } })).status, 421);
  });

  it('accepts its own address as Host', async () => {
    const res = await rawRequest(`${t.adminUrl}api/status`, { headers: { ...auth, host: t.adminHost } });
    assert.equal(res.status, 200);
  });

  for (const p of ['/api/status', '/api/session', '/api/deliveries', '/api/payloads/inbox/1', '/api/events']) {
    it(`requires the session or token for ${p}; a cookie never counts (issue 24)`, async () => {
      const none = await rawRequest(`${t.adminUrl.slice(0, -1)}${p}`, { headers: { host } });
      assert.equal(none.status, 401, `no token: ${none.status}`);
      assert.doesNotMatch(none.body, /<script|csrfToken/);
      // A valid session value as the cookie 0.2 set: not accepted (any port of this host received that cookie).
      const oldCookie = await rawRequest(`${t.adminUrl.slice(0, -1)}${p}`, { headers: { host, cookie: `pos_admin_${t.adminPort}=${mintSession(t.token, new Date(), 12).value}` } });
      assert.equal(oldCookie.status, 401);
      const wrongSession = await rawRequest(`${t.adminUrl.slice(0, -1)}${p}`, { headers: { host, authorization: `Session ${'A'.repeat(43)}` } });
      assert.equal(wrongSession.status, 401);
      const wrongBearer = await rawRequest(`${t.adminUrl.slice(0, -1)}${p}`, { headers: { host, authorization: `Bearer ${t.token}x` } });
      assert.equal(wrongBearer.status, 401);
    });
  }

  for (const p of ['/', '/index.html', '/app.js']) {
    it(`serves ${p} (no data in it) without a session, to a loopback Host only`, async () => {
      const res = await rawRequest(`${t.adminUrl.slice(0, -1)}${p}`, { headers: { host } });
      assert.equal(res.status, 200);
      assert.doesNotMatch(res.body, /"csrfToken":"|"locations":\s*\[/);
    });
  }

  it('needs the CSRF header for every change, and refuses other origins', async () => {
    const body = JSON.stringify({ startAtLogin: false });
    const json = { ...auth, host, 'content-type': 'application/json' };
    const changes: [string, string, string][] = [
      ['PUT', '/api/settings', body],
      ['PUT', '/api/sync/paused', '{"paused":true}'],
      ['POST', '/api/warnings/acknowledge', '{"locationId":null}'],
      ['POST', '/api/import', '{}'],
      ['POST', '/api/updates/1/force-apply', '{"reason":"support said so"}'],
    ];
    for (const [method, p, b] of changes) {
      const missing = await rawRequest(`${t.adminUrl.slice(0, -1)}${p}`, { method, headers: json, body: b });
      assert.equal(missing.status, 403, `${method} ${p} without CSRF`);
      assert.equal(JSON.parse(missing.body).error.id, 'csrf_header_required');
      const wrong = await rawRequest(`${t.adminUrl.slice(0, -1)}${p}`, { method, headers: { ...json, 'x-csrf-token': `${csrf}x` }, body: b });
      assert.equal(wrong.status, 403);
      assert.equal(JSON.parse(wrong.body).error.id, 'csrf_header_invalid');
      const crossOrigin = await rawRequest(`${t.adminUrl.slice(0, -1)}${p}`, { method, headers: { ...json, 'x-csrf-token': csrf, origin: 'http://evil.example' }, body: b });
      assert.equal(crossOrigin.status, 403);
      const crossSite = await rawRequest(`${t.adminUrl.slice(0, -1)}${p}`, { method, headers: { ...json, 'x-csrf-token': csrf, 'sec-fetch-site': 'cross-site' }, body: b });
      assert.equal(crossSite.status, 403);
    }
    assert.equal(t.agent.isPaused, false, 'no refused request changed anything');
    const ok = await rawRequest(`${t.adminUrl}api/settings`, { method: 'PUT', headers: { ...json, 'x-csrf-token': csrf, origin: `http://${host}`, 'sec-fetch-site': 'same-origin' }, body });
    assert.equal(ok.status, 200);
    assert.equal(JSON.parse(ok.body).settings.startAtLogin, false);
    const paused = await rawRequest(`${t.adminUrl}api/sync/paused`, { method: 'PUT', headers: { ...json, 'x-csrf-token': csrf }, body: '{"paused":true}' });
    assert.equal(paused.status, 200);
    assert.equal(t.agent.isPaused, true);
    t.agent.setPaused(false);
  });

  it('sends a strict CSP, nosniff and no framing on pages, API and errors', async () => {
    for (const [p, headers] of [
      ['/', auth],
      ['/api/status', auth],
      ['/api/nope', auth],
      ['/api/status', {}],
    ] as const) {
      const res = await rawRequest(`${t.adminUrl.slice(0, -1)}${p}`, { headers: { ...headers, host } });
      const csp = String(res.headers['content-security-policy']);
      assert.match(csp, /default-src 'none'/, p);
      assert.match(csp, /script-src 'self'/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
      assert.equal(res.headers['x-frame-options'], 'DENY');
      assert.equal(res.headers['x-powered-by'], undefined);
    }
  });

  it('never writes the token to the log', () => {
    assert.ok(lines.length > 0);
    assert.ok(!lines.some((l) => l.includes(t.token)), 'token in log');
  });

  it('keeps the token in a 0600 file in the data folder', () => {
    const file = path.join(t.config.dataDir, 'admin-token');
    assert.equal(fs.readFileSync(file, 'utf8').trim(), t.token);
    if (process.platform !== 'win32') assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    assert.ok(t.token.length >= 43);
  });

  it('the webhook listener never serves the window or its API', async () => {
    for (const p of ['/', '/index.html', '/app.js', '/app.css', '/api/status', '/api/session', `/?token=${t.token}`, '/api/events']) {
      const res = await rawRequest(`${t.baseUrl}${p}`, { headers: { ...auth, cookie: `pos_admin_${t.adminPort}=${t.token}` } });
      assert.equal(res.status, 404, p);
      assert.doesNotMatch(res.body, /<html|<script|locations|csrfToken/i);
      assert.equal(res.headers['set-cookie'], undefined);
    }
  });
});

describe('admin server start-up refusals', () => {
  it('refuses to bind a non-loopback address', async () => {
    const t = await startTestAgent();
    const settings = new UiSettingsStore(t.config.dataDir);
    for (const host of ['0.0.0.0', '::', '192.168.1.10', 'localhost', 'example.com']) {
      await assert.rejects(
        startAdminServer({ agent: t.agent, token: 'x'.repeat(43), settings, rendererDir: RENDERER_DIST, shell: 'browser', log: silentLogger, panelServices: [] }, { host, port: 0 }),
        (err: Error & { id?: string }) => err.id === 'admin_bind_refused',
        host,
      );
    }
  });

  it('the configuration refuses a non-loopback admin host', () => {
    for (const host of ['0.0.0.0', '192.168.1.10', 'localhost']) {
      assert.throws(() => parseConfig({ dataDir: tempDir(), admin: { host } }), ConfigError);
    }
  });

  it("refuses the webhook's port", async () => {
    const t = await startTestAgent();
    const settings = new UiSettingsStore(t.config.dataDir);
    const webhookPort = Number(new URL(t.webhookUrl).port);
    await assert.rejects(
      startAdminServer({ agent: t.agent, token: 'x'.repeat(43), settings, rendererDir: RENDERER_DIST, shell: 'browser', log: silentLogger, panelServices: [] }, { host: '127.0.0.1', port: webhookPort }),
      (err: Error & { id?: string }) => err.id === 'admin_port_conflict',
    );
  });

  it('fails clearly when the renderer is not built', async () => {
    const t = await startTestAgent();
    const settings = new UiSettingsStore(t.config.dataDir);
    await assert.rejects(
      startAdminServer({ agent: t.agent, token: 'x'.repeat(43), settings, rendererDir: path.join(tempDir(), 'dist'), shell: 'browser', log: silentLogger, panelServices: [] }, { host: '127.0.0.1', port: 0 }),
      (err: Error & { id?: string }) => err.id === 'renderer_missing' && /npm run build:renderer/.test(err.message),
    );
  });

  it('keeps the same token across restarts', async () => {
    const dataDir = tempDir();
    const a = await startAdminAgent({ dataDir });
    const first = a.token;
    await a.agent.stop();
    const b = await startAdminAgent({ dataDir });
    assert.equal(b.token, first);
  });
});

describe('admin server on 127.0.0.1 (admin.newAddressEachStart false)', async () => {
  const t = await startAdminAgent({ admin: { newAddressEachStart: false } });
  const auth = { authorization: `Bearer ${t.token}` };

  it('listens on 127.0.0.1 and answers to every loopback name at its port', async () => {
    assert.match(t.adminUrl, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    for (const goodHost of ['127.0.0.1:PORT', 'localhost:PORT', 'LOCALHOST:PORT', '[::1]:PORT']) {
      const res = await rawRequest(`${t.adminUrl}api/status`, { headers: { ...auth, host: goodHost.replace('PORT', String(t.adminPort)) } });
      assert.equal(res.status, 200, goodHost);
    }
    const other = await rawRequest(`${t.adminUrl}api/status`, { headers: { ...auth, host: `127.0.0.2:${t.adminPort}` } });
    assert.equal(other.status, 421);
  });

  it('stops', async () => {
    await t.agent.stop();
  });
});

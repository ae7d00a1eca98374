import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { chromium } from 'playwright-core';
import { tokenFilePath } from '../../src/admin/token';
import { startAdminAgent } from '../helpers/admin';
import { CHROMIUM } from '../helpers/browser';
import { freePort, REPO_ROOT, writeConfig } from '../helpers/child-agent';
import { tempDir } from '../helpers/fixtures';

/**
 * Issue 10, point 9, in real Chromium: the token never reaches the address bar, the session history
 * or the profile on disk; the session lasts admin.sessionHours; `admin-url --rotate` ends sessions.
 * Issue 24: the session is no cookie, but this origin's sessionStorage.
 */

const CLI = path.join(REPO_ROOT, 'bin', 'pos-sync-agent.cjs');
/** Where the window keeps its session (renderer/src/api.ts), and an API call as its script makes it. */
const SESSION_KEY = 'pos-sync-agent.session';
const API_STATUS = `fetch('/api/status', { headers: { authorization: 'Session ' + sessionStorage.getItem('${SESSION_KEY}') } }).then((r) => r.status)`;

function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true }).filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

describe('status-window login in Chromium', async () => {
  const adminPort = await freePort();
  const t = await startAdminAgent({ admin: { port: adminPort } });
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pos-sync-chromium-login-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  let closed = false;
  after(async () => {
    if (!closed) await context.close();
    fs.rmSync(userDataDir, { recursive: true, force: true });
  });
  const page = await context.newPage();
  const firstLink = t.loginUrl;
  const firstCode = new URL(firstLink).searchParams.get('login')!;

  it('the login link carries a one-time code, not the token', () => {
    assert.ok(firstCode.length > 40);
    assert.ok(!firstLink.includes(t.token));
    assert.equal(new URL(firstLink).searchParams.get('token'), null);
  });

  it('after login the address and the session history carry no code and no token', async () => {
    await page.goto(firstLink);
    await page.locator('#summary-label').waitFor();
    assert.equal(page.url(), t.adminUrl);
    assert.equal(await page.evaluate('location.search'), '');
    const cdp = await context.newCDPSession(page);
    const { entries } = (await cdp.send('Page.getNavigationHistory')) as { entries: { url: string; originalUrl?: string }[] };
    assert.ok(entries.length >= 1);
    for (const e of entries) {
      for (const u of [e.url, e.originalUrl ?? '']) {
        assert.ok(!u.includes(firstCode) && !u.includes('login=') && !u.includes(t.token), `history entry ${u}`);
      }
    }
    assert.equal(await page.evaluate('history.length'), entries.length);
    await cdp.detach();
  });

  it('no cookie: the session lives in this tab\'s sessionStorage for this origin, not the token, and lasts admin.sessionHours', async () => {
    assert.deepEqual(await context.cookies(), [], 'a cookie would go to every port of this host (issue 24)');
    const value = (await page.evaluate(`sessionStorage.getItem('${SESSION_KEY}')`)) as string;
    assert.ok(value && !value.includes(t.token));
    const hoursLeft = (Number(value.split('.')[0]) * 1000 - Date.now()) / 3_600_000;
    assert.ok(hoursLeft > 11.9 && hoursLeft <= 12.01, `expires in ${hoursLeft} h`);
  });

  it("only a person using the window renews its session, not the window's own polls", async () => {
    // The server renews only a request that says the window was used (src/admin/security.ts,
    // USED_HEADER): polls and live refreshes come whether anyone is there or not.
    const seen: { path: string; used: string | undefined }[] = [];
    const onRequest = (r: import('playwright-core').Request): void => {
      const u = new URL(r.url());
      if (u.pathname.startsWith('/api/')) seen.push({ path: u.pathname, used: r.headers()['x-pos-used'] });
    };
    page.on('request', onRequest);
    try {
      const status = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/status');
      await page.reload();
      await page.locator('#summary-label').waitFor();
      await status;
      assert.ok(seen.some((r) => r.path === '/api/status'), 'the window asked the agent for its status');
      assert.deepEqual(seen.filter((r) => r.used !== undefined), [], 'no request says the window was used before anyone touched it');
      seen.length = 0;
      const next = page.waitForRequest((r) => new URL(r.url()).pathname.startsWith('/api/'));
      await page.locator('#tab-deliveries').click();
      await next;
      assert.ok(seen.some((r) => r.used === '1'), `after a click the window says it was used: ${JSON.stringify(seen)}`);
    } finally {
      page.off('request', onRequest);
    }
  });

  it('the used link, taken from history or autocomplete, opens nothing', async () => {
    const p = await context.newPage();
    await p.goto(firstLink);
    // A locator, not waitForFunction('...'): a string predicate is eval'd again at each poll, which
    // the window's CSP (no 'unsafe-eval') refuses whenever the text is not there at the first look.
    await p.getByText(/already been used/).waitFor();
    assert.equal(await p.evaluate(`sessionStorage.getItem('${SESSION_KEY}')`), null);
    await p.close();
    assert.equal(await page.evaluate(API_STATUS), 200, 'the window that used it is still signed in');
  });

  it('admin-url --rotate: a new token; the open window and unused links stop working; the new link works', async () => {
    const unused = t.loginUrl;
    const config = writeConfig(tempDir(), { dataDir: t.config.dataDir, admin: { port: adminPort } });
    const r = spawnSync(process.execPath, [CLI, 'admin-url', '--rotate', '--config', config], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, r.stderr);
    // This test's agent runs in the test's process, without a control channel: the command finds
    // none and only rotates the token, printing no link (one made without the agent could be
    // used by whoever listens on the port). The agent itself gives the new link.
    assert.doesNotMatch(r.stdout, /login=/);
    assert.match(r.stdout, /New access token written/);
    const newLink = t.loginUrl;
    const newToken = fs.readFileSync(tokenFilePath(t.config.dataDir, null), 'utf8').trim();
    assert.notEqual(newToken, t.token);
    assert.ok(!r.stdout.includes(newToken), 'the token itself is never printed');

    assert.equal(await page.evaluate(API_STATUS), 401, 'the open session ended');
    const unusedUrl = new URL(unused);
    const stale = await fetch(`${t.adminUrl}api/login`, { method: 'POST', headers: { 'content-type': 'application/json', origin: unusedUrl.origin }, body: JSON.stringify({ code: unusedUrl.searchParams.get('login') }) });
    assert.equal(stale.status, 401, 'a link minted before the rotation');
    assert.equal((await fetch(`${t.adminUrl}api/status`, { headers: { authorization: `Bearer ${t.token}` } })).status, 401, 'the old token');
    assert.equal((await fetch(`${t.adminUrl}api/status`, { headers: { authorization: `Bearer ${newToken}` } })).status, 200, 'the new token');

    await page.goto(newLink);
    await page.locator('#summary-label').waitFor();
    assert.equal(page.url(), t.adminUrl);
    assert.equal(await page.evaluate(API_STATUS), 200);
  });

  it("the browser profile on disk (history database included) never holds the token", async () => {
    const tokens = [t.token, fs.readFileSync(tokenFilePath(t.config.dataDir, null), 'utf8').trim()];
    await context.close();
    closed = true;
    const historyFile = path.join(userDataDir, 'Default', 'History');
    assert.ok(fs.existsSync(historyFile), 'Chromium wrote its history database');
    const db = new Database(historyFile, { readonly: true });
    const urls = (db.prepare('SELECT url FROM urls').all() as { url: string }[]).map((u) => u.url);
    db.close();
    assert.ok(urls.some((u) => u.startsWith(t.adminUrl)), `the window's visits are recorded (${urls.join(', ')})`);
    for (const u of urls) for (const token of tokens) assert.ok(!u.includes(token), u);
    for (const file of filesUnder(userDataDir)) {
      const bytes = fs.readFileSync(file);
      for (const token of tokens) assert.equal(bytes.indexOf(token), -1, `${path.relative(userDataDir, file)} holds the token`);
    }
  });
});

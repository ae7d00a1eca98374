import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import type { SecretsBridge } from '../../src/admin/routes/secrets';
import { silentLogger, type Logger } from '../../src/log';
import { ExposureService } from '../../src/ops/exposure';
import { WebhookTokenReplySchema } from '../../src/admin/webhook-token-schema';
import { startAdminAgent, type RunningAdminAgent } from '../helpers/admin';
import { launchBrowser } from '../helpers/browser';
import { tempDir, testConfig } from '../helpers/fixtures';

/**
 * Issue 24, item 2: the webhook token head office must be given, revealed in the status window
 * (Settings, beside the webhook address) to the signed-in manager, in real Chromium; and the route
 * behind it at the HTTP level: no session, another origin (another port of 127.0.0.1) and a GET get
 * nothing; each reveal is in the audit log with the person's name and never in the agent's log.
 */

const NAME = 'Siân Ní Bhriain';
const ARTIFACTS = path.resolve(__dirname, '..', '..', 'test-artifacts', 'browser');
const REVEAL = 'api/webhook-token/reveal';

function capturingLogger(lines: string[]): Logger {
  const put = (...a: unknown[]): void => void lines.push(a.map(String).join(' '));
  return { error: put, warn: put, info: put, verbose: put, debug: put };
}

function shownRows(t: RunningAdminAgent): { actor: string; details: string }[] {
  return t.agent.core.agentDb.prepare("SELECT actor, details FROM audit_log WHERE action = 'secret-shown' ORDER BY id").all() as { actor: string; details: string }[];
}

/** The CSRF value a script with the admin token gets, as the window gets it with its session. */
async function csrf(t: RunningAdminAgent): Promise<{ header: string; token: string }> {
  const s = (await (await fetch(`${t.adminUrl}api/session`, { headers: { authorization: `Bearer ${t.token}` } })).json()) as { csrfToken: string; csrfHeader: string };
  return { header: s.csrfHeader, token: s.csrfToken };
}

/** A window session, as the window's script gets one: a login link's one-time code traded at /api/login. */
async function windowSession(t: RunningAdminAgent): Promise<string> {
  const link = new URL(t.loginUrl);
  const res = await fetch(`${link.origin}/api/login`, { method: 'POST', headers: { 'content-type': 'application/json', origin: link.origin }, body: JSON.stringify({ code: link.searchParams.get('login') }) });
  assert.equal(res.status, 200);
  return `Session ${((await res.json()) as { session: string }).session}`;
}

/** Another account's page on another loopback port: it tries the reveal route from there. */
async function otherPortPage(adminPort: number): Promise<string> {
  const page = `<!doctype html><title>waiting</title><script>
    fetch('http://127.0.0.1:${adminPort}/${REVEAL}', { method: 'POST', credentials: 'include', headers: { 'content-type': 'text/plain' }, body: '{}' })
      .then((r) => r.text().then((t) => { document.title = 'read ' + r.status + ' ' + t; }), () => { document.title = 'refused'; });
  </script>`;
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(page);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(() => {
    server.close();
    // The browser keeps its connection open; the test need not wait for it to time out.
    server.closeAllConnections();
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

describe('the webhook token in the status window', { timeout: 180_000 }, async () => {
  const token = crypto.randomBytes(32).toString('base64url');
  const logLines: string[] = [];
  const t = await startAdminAgent({ webhook: { bearerToken: token }, admin: { liveCheckMs: 200 } }, { log: capturingLogger(logLines) });
  const { page, context } = await launchBrowser();
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(t.adminUrl).origin });

  it('is hidden in Settings until the manager asks; Show reveals it, Copy puts it on the clipboard, Hide clears it', async () => {
    await page.goto(t.loginUrl);
    await page.locator('#person-ask').waitFor();
    await page.getByLabel('Your name').fill(NAME);
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('tab', { name: 'Settings' }).click();
    const field = page.getByLabel('Token', { exact: true });
    await field.waitFor();
    assert.equal(await field.inputValue(), '');
    assert.equal(await field.getAttribute('type'), 'password');
    assert.ok(!(await page.content()).includes(token), 'the page holds no token before Show');
    assert.equal(shownRows(t).length, 0);

    const row = page.locator('#webhook-token-row');
    await row.getByRole('button', { name: 'Show' }).click();
    await row.getByRole('button', { name: 'Hide' }).waitFor();
    assert.equal(await field.inputValue(), token);
    assert.equal(await field.getAttribute('type'), 'text');
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    await page.locator('#webhook-token-row').screenshot({ path: path.join(ARTIFACTS, 'webhook-token-shown.png') });
    const rows = shownRows(t);
    assert.equal(rows.length, 1);
    assert.match(rows[0]!.actor, new RegExp(`^${NAME} \\(status window on .+\\)$`));
    assert.deepEqual(JSON.parse(rows[0]!.details), { name: 'webhook.bearerToken' });

    await row.getByRole('button', { name: 'Hide' }).click();
    await row.getByRole('button', { name: 'Show' }).waitFor();
    assert.equal(await field.inputValue(), '');

    await row.getByRole('button', { name: 'Copy' }).click();
    await page.getByText('Webhook token copied.').waitFor();
    assert.equal(await page.evaluate(() => (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText()), token);
    assert.equal(shownRows(t).length, 2, 'Copy fetched it again, and that is recorded too');

    for (const line of logLines) assert.ok(!line.includes(token), `the token reached the agent's log: ${line}`);
    assert.ok(logLines.some((l) => /status window: webhook\.bearerToken shown to \S+ \(status window\)$/.test(l)), logLines.join('\n'));
    assert.ok(!logLines.some((l) => l.includes(NAME)), 'the person\'s name stays out of the agent\'s log');
  });

  it('the Activity view says who showed it', async () => {
    await page.getByRole('tab', { name: 'Activity' }).click();
    const first = page.locator('#activity-table tbody tr').first();
    await first.waitFor();
    assert.match(await first.innerText(), new RegExp(`${NAME}\\s+Showed the webhook token \\(to give head office\\)\\.`));
  });

  it('a page on another loopback port gets nothing, and nothing is recorded', async () => {
    const before = shownRows(t).length;
    const other = await context.newPage();
    await other.goto(await otherPortPage(t.adminPort));
    await other.waitForFunction(() => (globalThis as unknown as { document: { title: string } }).document.title !== 'waiting');
    const title = await other.title();
    assert.ok(!title.includes(token));
    assert.equal(title, 'refused', 'the browser gives the other origin no reply to read');
    await other.close();
    assert.equal(shownRows(t).length, before);
  });

  it('HTTP: no session 401, another origin 403, a GET 404, the session the value (not cached); each reveal audited', async () => {
    const before = shownRows(t).length;
    const c = await csrf(t);
    const own = new URL(t.adminUrl).origin;
    const post = (headers: Record<string, string>): Promise<Response> => fetch(`${t.adminUrl}${REVEAL}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{}' });

    const none = await post({ [c.header]: c.token, origin: own });
    assert.equal(none.status, 401);
    assert.ok(!(await none.text()).includes(token));

    const session = await windowSession(t);
    const otherPort = `http://127.0.0.1:${t.adminPort === 65535 ? 1 : t.adminPort + 1}`;
    const cross = await post({ authorization: session, [c.header]: c.token, origin: otherPort, 'sec-fetch-site': 'same-site' });
    assert.equal(cross.status, 403);
    assert.equal(((await cross.json()) as { error: { id: string } }).error.id, 'cross_site_refused');
    const noCsrf = await post({ authorization: session, origin: own });
    assert.equal(noCsrf.status, 403);

    const get = await fetch(`${t.adminUrl}${REVEAL}`, { headers: { authorization: session } });
    assert.equal(get.status, 404);
    assert.ok(!(await get.text()).includes(token));
    assert.equal(shownRows(t).length, before, 'nothing refused is recorded as shown');

    const ok = await post({ authorization: session, [c.header]: c.token, origin: own, 'sec-fetch-site': 'same-origin' });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get('cache-control'), 'no-store');
    assert.deepEqual(WebhookTokenReplySchema.parse(await ok.json()), { name: 'webhook.bearerToken', value: token, allowUnauthenticated: false });
    assert.equal(shownRows(t).length, before + 1);
  });
});

describe('webhook.allowUnauthenticated in the status window', { timeout: 120_000 }, async () => {
  const overrides = { dataDir: tempDir(), webhook: { allowUnauthenticated: true } };
  const t = await startAdminAgent(overrides, { services: [new ExposureService(testConfig(overrides), silentLogger)] });
  const { page } = await launchBrowser();

  it('the status tab and Settings show it red, and there is no token to show', async () => {
    await page.goto(t.loginUrl);
    const banner = page.locator('[data-alert="exposure"]');
    await banner.waitFor();
    assert.match((await banner.getAttribute('class')) ?? '', /\balert-red\b/);
    assert.match(await banner.innerText(), /Any program or account on this PC can change your prices\./);
    await page.getByRole('tab', { name: 'Settings' }).click();
    const none = page.locator('#webhook-token-none');
    await none.waitFor();
    assert.match(await none.innerText(), /No token: the webhook takes updates without one \(webhook\.allowUnauthenticated is on\)/);
    assert.equal(await none.getAttribute('class'), 'error');
    assert.equal(await page.locator('#webhook-token-row').count(), 0);
    await page.locator('section[aria-labelledby="webhook-heading"]').screenshot({ path: path.join(ARTIFACTS, 'webhook-token-none.png') });
  });

  it('the route answers that no token is checked, and records nothing', async () => {
    const c = await csrf(t);
    const own = new URL(t.adminUrl).origin;
    const res = await fetch(`${t.adminUrl}${REVEAL}`, { method: 'POST', headers: { authorization: `Bearer ${t.token}`, [c.header]: c.token, origin: own, 'content-type': 'application/json' }, body: '{}' });
    assert.equal(res.status, 200);
    assert.deepEqual(WebhookTokenReplySchema.parse(await res.json()), { name: 'webhook.bearerToken', value: null, allowUnauthenticated: true });
    assert.equal(shownRows(t).length, 0);
  });
});

describe('only the webhook token can be revealed (desktop app, where the window also stores secrets)', { timeout: 60_000 }, async () => {
  const stored: Record<string, string> = { 'employees.auth.password': 'staff-api-password-98765' };
  const bridge: SecretsBridge = {
    sources: () => ({ 'employees.auth.password': 'store' }),
    set: () => Promise.resolve({}),
    restart: () => undefined,
  };
  const t = await startAdminAgent({ webhook: { bearerToken: 'desktop-webhook-token-1234' } }, { admin: { shell: 'electron', secrets: bridge } });

  it('no route reveals another secret, and the secrets listing carries no value', async () => {
    const c = await csrf(t);
    const own = new URL(t.adminUrl).origin;
    const headers = { authorization: `Bearer ${t.token}`, [c.header]: c.token, origin: own, 'content-type': 'application/json' };
    for (const route of ['api/secrets/employees.auth.password/reveal', 'api/secrets/employees.auth.password', 'api/webhook-token/reveal/employees.auth.password']) {
      const res = await fetch(`${t.adminUrl}${route}`, { method: 'POST', headers, body: JSON.stringify({ name: 'employees.auth.password' }) });
      assert.equal(res.status, 404, route);
      assert.ok(!(await res.text()).includes(stored['employees.auth.password']!));
    }
    const reveal = await fetch(`${t.adminUrl}${REVEAL}`, { method: 'POST', headers, body: JSON.stringify({ name: 'employees.auth.password' }) });
    assert.equal(WebhookTokenReplySchema.parse(await reveal.json()).value, 'desktop-webhook-token-1234', 'the body names nothing: the route only ever answers the webhook token');
    const listing = await (await fetch(`${t.adminUrl}api/secrets`, { headers: { authorization: `Bearer ${t.token}` } })).text();
    assert.ok(!listing.includes(stored['employees.auth.password']!));
    assert.ok(!listing.includes('desktop-webhook-token-1234'));
  });
});

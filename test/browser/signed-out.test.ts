import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { Page, Request } from 'playwright-core';
import { tokenFilePath } from '../../src/admin/token';
import { launchBrowser } from '../helpers/browser';
import { startAdminAgent, type RunningAdminAgent } from '../helpers/admin';
import { freePort } from '../helpers/child-agent';
import { sampleBodies } from '../helpers/fixtures';

/**
 * A window whose session ends (the token rotated, the agent restarted) says it is signed out: no
 * status left over from before, no "Live", no actions. It closes its live stream (the agent serves a
 * bounded number) and stops calling the API. Screenshots in test-artifacts/browser/signed-out-*.png.
 */

const ARTIFACTS = path.resolve(__dirname, '..', '..', 'test-artifacts', 'browser');
/** As src/admin/routes/events.ts bounds them. */
const MAX_EVENT_CLIENTS = 16;

let t: RunningAdminAgent;
let page: Page;
const openStreams = new Set<Request>();
const apiCalls: string[] = [];

const currentToken = (): string => fs.readFileSync(tokenFilePath(t.config.dataDir, t.config.admin.tokenFile), 'utf8').trim();

/** How many live streams the agent still lets a script open (each is closed again at once). */
async function streamsLeft(): Promise<number> {
  const controllers: AbortController[] = [];
  let opened = 0;
  try {
    for (let i = 0; i < MAX_EVENT_CLIENTS; i++) {
      const c = new AbortController();
      controllers.push(c);
      const res = await fetch(`${t.adminUrl}api/events`, { headers: { authorization: `Bearer ${currentToken()}` }, signal: c.signal });
      if (res.status !== 200) break;
      opened++;
    }
  } finally {
    for (const c of controllers) c.abort();
  }
  // The agent notices each closed stream when its socket closes.
  await new Promise((r) => setTimeout(r, 200));
  return opened;
}

async function header(): Promise<{ label: string; text: string; live: string; pauseUsable: boolean; top: string }> {
  const pause = page.locator('#pause-button');
  return {
    label: await page.locator('#summary-label').innerText(),
    text: await page.locator('#summary-text').innerText(),
    live: (await page.locator('#live').isVisible()) ? await page.locator('#live').innerText() : '',
    pauseUsable: (await pause.isVisible()) && (await pause.isEnabled()),
    top: await page.locator('header.top').innerText(),
  };
}

async function signIn(): Promise<void> {
  await page.goto(t.loginUrl);
  await page.locator('[data-location="3021"]').waitFor();
  await page.locator('#live.live-on').waitFor();
  assert.equal(openStreams.size, 1, 'one live stream while signed in');
}

async function assertSignedOut(name: string): Promise<void> {
  await page.getByRole('heading', { name: 'This window is not signed in' }).waitFor({ timeout: 15_000 });
  const h = await header();
  await page.screenshot({ path: path.join(ARTIFACTS, `signed-out-${name}.png`) });
  assert.equal(h.label, 'Signed out');
  assert.match(h.text, /session has ended|not signed in/i);
  assert.doesNotMatch(h.top, /Live|Reconnecting|unreachable|Check|Up to date|Pause applying|Resume applying/);
  assert.equal(h.pauseUsable, false, 'no pause or resume while signed out');
  assert.equal(await page.locator('main button:enabled, main input:enabled, nav [role="tab"]:visible').count(), 0, 'no actions or tabs');
  // The live stream is closed, in the page and on the agent.
  for (const deadline = Date.now() + 5_000; openStreams.size > 0 && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 50));
  assert.equal(openStreams.size, 0, 'the page holds no live stream');
  assert.equal(await streamsLeft(), MAX_EVENT_CLIENTS, 'the agent serves no stream to the signed-out window');
  // And the window stops calling the API (the fast poll while the agent is unreachable runs every few seconds).
  apiCalls.length = 0;
  await new Promise((r) => setTimeout(r, 4_000));
  assert.deepEqual(apiCalls, [], 'no API calls while signed out');
  assert.equal(await header().then((x) => x.label), 'Signed out');
}

describe('status window: signed out', { timeout: 120_000 }, async () => {
  {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    // A fixed port and address (127.0.0.1), so the admin service can be restarted where the window looks for it.
    t = await startAdminAgent({ admin: { port: await freePort(), newAddressEachStart: false, liveCheckMs: 100 }, locations: { '3021': { timezone: 'Europe/London' } } });
    assert.equal((await t.post(sampleBodies()[0]!.raw)).status, 200);
    await t.settle();
    ({ page } = await launchBrowser());
    page.on('request', (r) => {
      if (new URL(r.url()).pathname === '/api/events') openStreams.add(r);
      if (new URL(r.url()).pathname.startsWith('/api/')) apiCalls.push(new URL(r.url()).pathname);
    });
    page.on('requestfinished', (r) => openStreams.delete(r));
    page.on('requestfailed', (r) => openStreams.delete(r));
    // A status window asks who is using it once per window.
    await page.addInitScript(() => sessionStorage.setItem('pos-sync-person', 'Tester'));
  }

  it('after the token is rotated and applying is paused, says it is signed out, not the old status', async () => {
    await signIn();
    assert.equal(await page.locator('#pause-button').innerText(), 'Pause applying');
    t.admin.loginLink(true); // as `admin-url --rotate`: every session ends
    t.agent.setPaused(true, 'test', 'signed-out window');
    try {
      await assertSignedOut('rotated');
    } finally {
      t.agent.setPaused(false, 'test');
    }
  });

  it('after the agent restarts, says it is signed out, not that the agent is unreachable', async () => {
    await signIn();
    await t.admin.stop();
    await page.locator('#live.live-off').waitFor({ timeout: 10_000 });
    await page.getByText(/unreachable/i).first().waitFor({ timeout: 10_000 });
    await t.admin.start(t.agent);
    await assertSignedOut('restarted');
  });

  it('after the agent restarts at a new address (the default), says where the window is opened again', async () => {
    await t.admin.stop();
    const moved = await startAdminAgent({ admin: { port: await freePort(), liveCheckMs: 100 } });
    try {
      await page.goto(moved.loginUrl);
      await page.locator('#live.live-on').waitFor();
      const old = moved.adminOrigin;
      await moved.admin.stop();
      await moved.admin.start(moved.agent);
      assert.notEqual(moved.admin.url, `${old}/`, 'the window has a new address');
      await page.getByText(/nothing answers at this window's address; if the agent was restarted, the window has a new address: open it again from the tray, or with pos-sync-agent admin-url/).first().waitFor({ timeout: 15_000 });
      assert.equal(await page.locator('#summary-label').innerText(), 'Agent unreachable');
      await page.screenshot({ path: path.join(ARTIFACTS, 'signed-out-moved.png') });
      // A new link opens it at its new address.
      await page.goto(moved.loginUrl);
      await page.locator('#live.live-on').waitFor();
    } finally {
      await moved.agent.stop();
    }
  });
});

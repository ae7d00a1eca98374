import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { launchBrowser } from '../helpers/browser';
import type { BrowserContext, Page } from 'playwright-core';
import { startAdminAgent, type RunningAdminAgent } from '../helpers/admin';
import { item, price, sampleBodies, schedule, update } from '../helpers/fixtures';

/**
 * The status window in real Chromium against a running agent fed with the sample updates. Screenshots
 * go to test-artifacts/browser/ (look at them).
 */

const ARTIFACTS = path.resolve(__dirname, '..', '..', 'test-artifacts', 'browser');
const XSS = '<img src=x onerror=alert(1)>';

let t: RunningAdminAgent;
let context: BrowserContext;
let page: Page;
const dialogs: string[] = [];
const consoleErrors: string[] = [];

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: false });
}

async function tab(name: string): Promise<void> {
  await page.getByRole('tab', { name }).click();
}

describe('status window in Chromium', { timeout: 120_000 }, async () => {
  {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    t = await startAdminAgent({ admin: { liveCheckMs: 200, gapAlertMinutes: 30 }, locations: { '3021': { timezone: 'Europe/London' } }, sync: { acceptOtherLocations: true } });
    const [first, second, third] = sampleBodies();
    assert.equal((await t.post(first!.raw)).status, 200);
    assert.equal((await t.post(third!.raw)).status, 200); // 1043 before 1042: a gap
    void second;
    const hostile = update(5000, 7, 6, [
      item('666', 'X-1', [price('2026-12-01', '2027-02-28', `Eat In ${XSS}`, 3.5, `<b>S</b>`, 20)], [schedule('2026-12-01', '2027-02-28', `<script>alert(2)</script>`)], { ItemName: XSS }),
    ], { LocationName: `Evil <iframe src=javascript:alert(3)>` });
    assert.equal((await t.post(hostile)).status, 200);
    await t.settle();
    ({ context, page } = await launchBrowser());
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => consoleErrors.push(e.message));
  }

  it('logs in through the one-time URL and drops the token from the address bar', async () => {
    await page.goto(t.loginUrl);
    assert.equal(new URL(page.url()).search, '');
    await page.locator('[data-location="3021"]').waitFor();
  });

  it('shows the sync status with the gap in plain words', async () => {
    const card = page.locator('[data-location="3021"]');
    await assert.doesNotReject(card.getByText('Riverside Kitchen (3021)').waitFor());
    const text = await card.innerText();
    // One gap, said once: the missing update, since when, and what resolves it.
    assert.match(text, /Update 1042 has not arrived from head office \(missing since \d\d:\d\d\); 1 later update waits for it\. Head office usually resends it by itself; nothing to do yet\./);
    assert.equal((text.match(/has not arrived from head office/g) ?? []).length, 1);
    assert.match(text, /Last applied update\s+1041/);
    assert.match(text, /Currency\s+GBP/);
    assert.match(text, /Updates not applied yet\s+1/);
    assert.match(text, /Missing\s+update 1042 \(since \d\d:\d\d\)/);
    assert.match(await card.locator('.badge').innerText(), /Check/);
    assert.match(await page.locator('#summary-text').innerText(), /^Riverside Kitchen \(3021\): Update 1042 has not arrived from head office/);
    await page.locator('#chart-section canvas').first().waitFor();
    await page.locator('#live.live-on').waitFor();
    await shot('01-status-gap');
  });

  it('renders hostile vendor text as text', async () => {
    const card = page.locator('[data-location="5000"]');
    await card.waitFor();
    assert.equal(await card.locator('h2').innerText(), 'Evil <iframe src=javascript:alert(3)> (5000)');
    assert.equal(await page.locator('main img, main iframe, main script').count(), 0);
  });

  it('updates live when the missing update arrives (no reload)', async () => {
    await page.evaluate('window.marker = 42');
    const second = sampleBodies()[1]!;
    assert.equal((await t.post(second.raw)).status, 200);
    const card = page.locator('[data-location="3021"]');
    // Green alone is not the end: "Applying" with an update still queued is green too.
    await card.getByText(/Up to date: update 1043 applied/).waitFor({ timeout: 10_000 });
    assert.match(await card.getAttribute('class') ?? '', /\bcard-green\b/);
    assert.equal(await page.evaluate('window.marker'), 42, 'the page was not reloaded');
    await shot('02-status-live-green');
  });

  it('counts refused webhook calls on the Sync status tab (issue 10: counted, not logged one by one)', async () => {
    const url = t.agent.webhook!.url;
    // A web page's request and a foreign Origin: both refused before the body is read.
    for (let i = 0; i < 3; i++) assert.equal((await fetch(url, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json', 'sec-fetch-site': 'cross-site' } })).status, 403);
    assert.equal((await fetch(url, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json', origin: 'https://evil.example' } })).status, 403);
    // The receiver thread sends its counts to the main thread in batches (at most every 50 ms): load
    // the page once the agent has all four, so it is the page's rendering that is tested here.
    const browserRefusals = (): number => t.agent.refusals.snapshot().lastHour.browser_request ?? 0;
    for (const deadline = Date.now() + 10_000; browserRefusals() < 4 && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 20));
    assert.equal(browserRefusals(), 4, 'the agent counted the four refusals');
    await page.reload();
    const line = page.locator('#refusals');
    await line.getByText('made by a web browser').waitFor({ timeout: 10_000 });
    assert.match(await line.innerText(), /^Refused webhook calls in the last hour: 4 made by a web browser\./);
    await shot('02b-status-refusals');
  });

  it('lists recent deliveries and shows a stored payload as text', async () => {
    await tab('Deliveries');
    const rows = page.locator('#deliveries-table tbody tr');
    await rows.first().waitFor();
    assert.equal(await rows.count(), 4);
    const texts = await rows.allInnerTexts();
    assert.match(texts[0]!, /3021\s+1042\s+.*applied/s);
    assert.ok(texts.some((r) => /5000\s+7\s+.*applied/s.test(r)));
    await shot('03-deliveries');
    await rows.filter({ hasText: '5000' }).getByRole('button', { name: /View payload/ }).click();
    const dialog = page.locator('dialog[open]');
    await dialog.waitFor();
    assert.match(await dialog.locator('pre').innerText(), /"ItemName": "<img src=x onerror=alert\(1\)>"/);
    assert.equal(await dialog.locator('img').count(), 0);
    await shot('04-payload');
    await dialog.getByRole('button', { name: 'Close' }).click();
  });

  it('imports a payload file after confirmation', async () => {
    const body = Buffer.from(JSON.stringify(update(7000, 100, 99, [item('42', 'I-42', [price('2026-12-01', '2027-02-28', 'Eat In', 2.25)])])));
    await page.setInputFiles('#import-file', { name: 'support-7000.json', mimeType: 'application/json', buffer: body });
    await page.getByRole('button', { name: 'Import…' }).click();
    const dialog = page.locator('dialog[open]');
    await dialog.getByRole('button', { name: 'Import' }).click();
    await page.locator('.toast').getByText(/Imported update 100: new; applied 100/).waitFor();
    await page.locator('#deliveries-table tbody tr', { hasText: '7000' }).first().waitFor();
    assert.match(await page.locator('#deliveries-table tbody tr').first().innerText(), /7000\s+100\s+.*applied.*imported/s);
  });

  it('force-applies a waiting update only after confirmation with a reason (audited)', async () => {
    assert.equal((await t.post(update(8000, 20, 19, [item('1', 'A')]))).status, 200);
    assert.equal((await t.post(update(8000, 22, 21, [item('1', 'A', [price('2026-12-01', '2027-02-28', 'Eat In', 9.99)])]))).status, 200);
    await t.settle();
    await tab('Sync status');
    const card = page.locator('[data-location="8000"]');
    await card.getByRole('button', { name: 'Force apply update 22 for location 8000…' }).click();
    let dialog = page.locator('dialog[open]');
    await shot('05-force-apply-confirm');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    assert.equal(t.agent.core.status().find((l) => l.locationId === 8000)!.lastChangeSequence, 20);
    await card.getByRole('button', { name: 'Force apply update 22 for location 8000…' }).click();
    dialog = page.locator('dialog[open]');
    await dialog.getByLabel('Reason (required)').fill('support ticket 881: 21 was never published');
    await dialog.getByRole('button', { name: 'Force apply update 22' }).click();
    await page.locator('.toast').getByText('Update 22 for location 8000 applied.').waitFor();
    assert.equal(t.agent.core.status().find((l) => l.locationId === 8000)!.lastChangeSequence, 22);
    const audit = t.agent.core.agentDb.prepare("SELECT actor, details FROM audit_log WHERE action LIKE 'force%'").all() as { actor: string; details: string }[];
    assert.equal(audit.length, 1);
    assert.match(audit[0]!.actor, /status window/);
    assert.match(audit[0]!.details, /support ticket 881/);
  });

  it('answers "what will the till charge?" like the POS views', async () => {
    await tab('What will the till charge?');
    await page.getByLabel('PLU', { exact: true }).fill('1001');
    await page.getByLabel('Date (optional, default today)').fill('2026-12-25');
    await page.getByRole('button', { name: 'Look up' }).click();
    const result = page.locator('#till-results article');
    await result.first().waitFor();
    assert.equal(await result.count(), 1);
    const text = await result.innerText();
    assert.match(text, /Full English Breakfast/);
    assert.match(text, /Eat In\s+15\.00 GBP\s+S\s+20%\s+Standard\s+2026-12-25/);
    assert.match(text, /Take Away\s+10\.95 GBP\s+S\s+20%/);
    assert.match(text, /Breakfast\s+Available/);
    await shot('06-till-1001-christmas');
    await page.getByLabel('PLU', { exact: true }).fill('2040');
    await page.getByLabel('Date (optional, default today)').fill('2027-01-05');
    await page.getByRole('button', { name: 'Look up' }).click();
    await page.locator('#till-results').getByText('Sunday Roast Menu').waitFor();
    const roast = await page.locator('#till-results article').innerText();
    assert.match(roast, /Dinner\s+Not available\s+2027-01-04 to 2027-01-10/);
    assert.match(roast, /Lunch\s+Available/);
    await page.getByLabel('PLU', { exact: true }).fill('3300');
    await page.getByRole('button', { name: 'Look up' }).click();
    await page.locator('#till-results').getByText('Bottled Water 500ml').waitFor();
    const water = await page.locator('#till-results article').innerText();
    assert.match(water, /Take Away\s+1\.50 GBP\s+Z\s+0%/);
    assert.match(water, /Not tied to meal periods/);
  });

  it('shows an item named like HTML as text, never as markup', async () => {
    await page.getByLabel('PLU', { exact: true }).fill('666');
    await page.getByLabel('Date (optional, default today)').fill('2026-12-25');
    await page.getByRole('button', { name: 'Look up' }).click();
    const name = page.locator('#till-results .item-name');
    await name.waitFor();
    assert.equal(await name.innerText(), XSS);
    assert.equal(await page.locator('#till-results img, #till-results script, #till-results b').count(), 0);
    assert.match(await page.locator('#till-results').innerText(), /<script>alert\(2\)<\/script>\s+Available/);
    await shot('07-till-hostile-text');
    assert.deepEqual(dialogs, [], 'no script ran');
  });

  it('shows settings: the webhook address for head office and start-at-login (desktop only)', async () => {
    await tab('Settings');
    const url = page.getByLabel('Address', { exact: true });
    await url.waitFor();
    assert.equal(await url.inputValue(), t.webhookUrl);
    assert.equal(await page.getByLabel('Start the agent when this PC user logs in').isDisabled(), true);
    await page.getByText('This applies to the desktop app only').waitFor();
    await page.getByText('No operations panel is installed').waitFor();
    await shot('08-settings');
  });

  it('says staff lookups are not configured when the agent has no employees section', async () => {
    await tab('Staff');
    await page.getByText('Staff lookups are not configured on this agent.').waitFor();
  });

  it('supports the keyboard between tabs', async () => {
    await page.getByRole('tab', { name: 'Settings' }).focus();
    await page.keyboard.press('ArrowLeft');
    assert.equal(await page.getByRole('tab', { name: 'Activity' }).getAttribute('aria-selected'), 'true');
    await page.keyboard.press('Home');
    assert.equal(await page.getByRole('tab', { name: 'Sync status' }).getAttribute('aria-selected'), 'true');
  });

  it('had no script errors, CSP violations or alerts', () => {
    assert.deepEqual(consoleErrors, []);
    assert.deepEqual(dialogs, []);
  });

  it('a browser without the token gets no window', async () => {
    const other = await context.browser()?.newContext();
    const p = other ? await other.newPage() : await context.newPage();
    await p.context().clearCookies();
    // The page itself holds no data; without a session (a tab that never opened a login link) the API refuses it.
    await p.goto(t.adminUrl);
    await p.getByText('This window is not signed in').waitFor();
    assert.doesNotMatch(await p.locator('body').innerText(), /Location \d|ChangeSequence/);
    await p.close();
    // Log the shared context back in for the tests that follow (a login link works once, so a new one).
    const again = await context.newPage();
    await again.goto(t.loginUrl);
    await again.close();
  });
});

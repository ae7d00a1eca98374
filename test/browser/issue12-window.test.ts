import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { launchBrowser } from '../helpers/browser';
import { startAdminAgent, type RunningAdminAgent } from '../helpers/admin';
import { item, price, update } from '../helpers/fixtures';

/**
 * Issue 12, points 10, 13, 14 and 15 in real Chromium against a running agent whose new locations
 * settle for 60 s (the default), as on a site. Screenshots in test-artifacts/browser/issue12-*.png.
 */

const ARTIFACTS = path.resolve(__dirname, '..', '..', 'test-artifacts', 'browser');

let t: RunningAdminAgent;
let page: Page;
const consoleErrors: string[] = [];

const menu = (location: number, sequence: number, parent: number, sell: number): Record<string, unknown> =>
  update(location, sequence, parent, [item(1001, 1, [price('2026-01-01', '2027-12-31', 'Eat In', sell)])]);

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: path.join(ARTIFACTS, `issue12-${name}.png`), fullPage: true });
}

const inbox = (id: number): string => t.agent.core.agentDb.prepare<[number], { state: string }>('SELECT state FROM inbox WHERE id = ?').get(id)!.state;

describe('status window: issue 12', { timeout: 120_000 }, async () => {
  {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    t = await startAdminAgent({ sync: { baselineSettleSeconds: 60 } });
    assert.equal((await t.post(menu(118, 1047, 1046, 4.5))).status, 200);
    ({ page } = await launchBrowser());
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => consoleErrors.push(e.message));
    await page.goto(t.loginUrl);
    await page.locator('[data-location="118"]').waitFor();
  }

  it('is amber and says it waits for the first publication while a new location settles (point 13)', async () => {
    assert.equal(await page.locator('#summary-label').innerText(), 'Check');
    assert.equal(await page.locator('#summary-text').innerText(), "New location: waiting up to 60 s for head office's first publication.");
    const card = page.locator('[data-location="118"]');
    assert.match(await card.getAttribute('class') ?? '', /card-amber/);
    const text = await card.innerText();
    assert.match(text, /Waiting up to 60 s for head office's first publication: update 1047 arrived at \d\d:\d\d/);
    assert.doesNotMatch(text, /up to date/i);
    // One delivery so far: "1 delivery", not "1 deliveries" (point 15).
    await page.locator('#chart-section').getByText(/^1 delivery received, 0 refused/).waitFor();
    await shot('01-settling-amber');
  });

  it('names the update by location and sequence on the button, and sends that name (point 10)', async () => {
    const card = page.locator('[data-location="118"]');
    const button = card.getByRole('button', { name: 'Force apply update 1047 for location 118…' });
    assert.equal(await button.getAttribute('data-update'), '118:1047');
    await button.click();
    const dialog = page.locator('dialog[open]');
    assert.match(await dialog.innerText(), /Force apply update 1047 for location 118\?[\s\S]*pos-sync-agent force-apply 118:1047 --reason/);
    await shot('02-force-apply-named');
    await dialog.getByLabel('Reason (required)').fill('support: adopt 1047 now, no earlier update is coming');
    const request = page.waitForRequest((r) => r.method() === 'POST' && r.url().includes('/force-apply'));
    await dialog.getByRole('button', { name: 'Force apply update 1047' }).click();
    assert.equal(new URL((await request).url()).pathname, '/api/updates/118%3A1047/force-apply');
    await page.locator('.toast').getByText('Update 1047 for location 118 applied.').waitFor();
    await page.locator('[data-location="118"].card-green').waitFor({ timeout: 10_000 });
    assert.equal(t.agent.core.status().find((l) => l.locationId === 118)!.lastChangeSequence, 1047);
  });

  it('shows a conflicting redelivery side by side and keeps the later body, with a reason (point 14)', async () => {
    // 118 has 1047 applied: 1049 waits for 1048, then arrives again with another price.
    assert.equal((await t.post(menu(118, 1049, 1048, 5))).status, 200);
    assert.equal((await t.post(menu(118, 1049, 1048, 5.25))).status, 200);
    const [first, later] = t.agent.core.agentDb.prepare<[], { id: number }>('SELECT id FROM inbox WHERE location_id = 118 AND change_sequence = 1049 ORDER BY id').all();
    const section = page.locator('[data-conflict="118:1049"]');
    await section.waitFor({ timeout: 10_000 });
    assert.match(await page.locator('[data-location="118"]').innerText(), /An update arrived again with different content under the same number — compare the two copies and keep one\./);
    assert.doesNotMatch(await page.locator('[data-location="118"]').innerText(), /different content[^\n]*contact support/);
    assert.equal(await section.locator('h2').innerText(), 'Update 1049 for location 118 arrived again with different content');
    // Side by side: the first body's line on the left, the later one's on the right, in the same row.
    const changed = section.locator('tr', { has: page.locator('td.diff-removed') });
    assert.equal(await changed.count(), 1);
    assert.match(await changed.locator('td').nth(0).innerText(), /"SellPrice": 5$/);
    assert.match(await changed.locator('td').nth(1).innerText(), /"SellPrice": 5\.25$/);
    assert.match(await section.locator('thead').innerText(), /Received first: \d\d:\d\d, \d+ B, waiting\s+Received later: \d\d:\d\d, \d+ B, not applied/);
    await shot('03-conflict-side-by-side');

    await section.getByRole('button', { name: /^Keep the later/ }).click();
    const dialog = page.locator('dialog[open]');
    await dialog.getByLabel('Reason (required)').fill('head office: the resend has the right price');
    await dialog.getByRole('button', { name: 'Keep the later' }).click();
    await page.locator('.toast').getByText('Kept the later copy of update 1049.').waitFor();
    await section.waitFor({ state: 'detached', timeout: 10_000 });
    assert.equal(inbox(first!.id), 'superseded');
    assert.equal(inbox(later!.id), 'pending');
    const status = t.agent.core.status().find((l) => l.locationId === 118)!;
    assert.equal(status.conflicts, 0);
    const [audit] = t.agent.core.agentDb.prepare<[], { actor: string; details: string }>("SELECT actor, details FROM audit_log WHERE action = 'resolve-conflict'").all();
    assert.match(audit!.actor, /status window/);
    assert.equal((JSON.parse(audit!.details) as { reason: string }).reason, 'head office: the resend has the right price');
    // The missing 1048 arrives: the kept body is what the till charges.
    assert.equal((await t.post(menu(118, 1048, 1047, 4.75))).status, 200);
    await t.settle();
    assert.equal(t.agent.core.status().find((l) => l.locationId === 118)!.lastChangeSequence, 1049);
    assert.equal(t.agent.core.lookup('1001', { locationId: 118, date: '2026-06-01' }).items[0]!.prices[0]!.sellPrice, '5.25');
    await page.locator('[data-location="118"].card-green').waitFor({ timeout: 10_000 });
    await shot('04-conflict-resolved');
  });

  it('allows only the applied body to be kept once it is on the till', async () => {
    assert.equal((await t.post(menu(118, 1049, 1048, 6))).status, 200); // a third body for an applied update
    const section = page.locator('[data-conflict="118:1049"]');
    await section.waitFor({ timeout: 10_000 });
    assert.equal(await section.getByRole('button', { name: /^Keep the later/ }).isDisabled(), true);
    assert.match(await section.innerText(), /Only the first can be kept: the body received first is already on the till/);
    await shot('05-conflict-only-first');
    await section.getByRole('button', { name: /^Keep the first/ }).click();
    const dialog = page.locator('dialog[open]');
    await dialog.getByLabel('Reason (required)').fill('the till already has the right one');
    await dialog.getByRole('button', { name: 'Keep the first' }).click();
    await section.waitFor({ state: 'detached', timeout: 10_000 });
    assert.equal(t.agent.core.status().find((l) => l.locationId === 118)!.conflicts, 0);
    assert.equal(await page.locator('#summary-label').innerText(), 'Up to date');
    assert.deepEqual(consoleErrors, []);
  });

  it('shows at most 400 rows of a large comparison and says where the rest is', async () => {
    const big = (sell: number): Record<string, unknown> =>
      update(9300, 5, 4, Array.from({ length: 300 }, (_, i) => item(2000 + i, i, [price('2026-01-01', '2027-12-31', 'Eat In', sell + i)])));
    assert.equal((await t.post(big(1))).status, 200);
    assert.equal((await t.post(big(2))).status, 200);
    const section = page.locator('[data-conflict="9300:5"]');
    await section.waitFor({ timeout: 10_000 });
    assert.equal(await section.locator('tbody tr').count(), 401);
    assert.match(await section.locator('tbody tr').last().innerText(), /more rows not shown; the whole comparison: pos-sync-agent conflicts 9300:5/);
  });
});

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { launchBrowser } from '../helpers/browser';
import { startAdminAgent, type RunningAdminAgent } from '../helpers/admin';
import { sampleBodies } from '../helpers/fixtures';

/**
 * The payload View and the conflict comparison show numbers as head office wrote them: a price with
 * two decimals keeps them, and a long number keeps every digit (reading the body as JavaScript values
 * would print doubles). Screenshots in test-artifacts/browser/payload-text-*.png.
 */

const ARTIFACTS = path.resolve(__dirname, '..', '..', 'test-artifacts', 'browser');

let t: RunningAdminAgent;
let page: Page;

/** A body written by hand, so its number text is exactly this. */
const body = (sequence: number, parent: number, plu: string): string =>
  `{"ChangeSequence":${sequence},"ParentChangeSequence":${parent},"LocationID":4400,"LocationName":"Harbour","CurrencyIsoCode":"GBP","ScheduledItems":[` +
  `{"PLU":${plu},"ItemID":"1","ItemName":"Tea","ItemType":"RECIPE","PriceUpdates":[{"DateFrom":"2026-01-01","DateTo":"2027-12-31","TariffName":"Eat In","PriceModel":"Standard","TaxCode":"S","TaxRate":20,"SellPrice":2.50}],"ScheduleUpdates":[]}]}`;

describe('status window: payload and conflict text as stored', { timeout: 120_000 }, async () => {
  {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    t = await startAdminAgent({ locations: { '3021': { timezone: 'Europe/London' } }, sync: { acceptOtherLocations: true } });
    assert.equal((await t.post(sampleBodies()[0]!.raw)).status, 200);
    await t.settle();
    ({ page } = await launchBrowser());
    await page.goto(t.loginUrl);
    await page.locator('[data-location="3021"]').waitFor();
  }

  it('View shows each price with the decimals it was sent with', async () => {
    await page.getByRole('tab', { name: 'Deliveries' }).click();
    const row = page.locator('#deliveries-table tbody tr', { hasText: '3021' }).first();
    await row.getByRole('button', { name: /View payload/ }).click();
    const pre = page.locator('dialog[open] pre');
    await pre.waitFor();
    const text = await pre.innerText();
    await page.screenshot({ path: path.join(ARTIFACTS, 'payload-text-view.png') });
    await page.locator('dialog[open]').getByRole('button', { name: 'Close' }).click();
    assert.match(text, /^ {10}"SellPrice": 11\.50$/m);
    assert.match(text, /"SellPrice": 24\.00$/m);
    assert.match(text, /"SellPrice": 1\.80$/m);
    assert.doesNotMatch(text, /"SellPrice": (11\.5|24|1\.8)$/m);
  });

  it('shows two bodies that differ only in the last digit of a long number as differing', async () => {
    assert.equal((await t.post(body(1, 0, '77'))).status, 200);
    await t.settle();
    // 3 waits for 2; it arrives again with one digit changed.
    assert.equal((await t.post(body(3, 2, '12345678901234567890'))).status, 200);
    assert.equal((await t.post(body(3, 2, '12345678901234567891'))).status, 200);
    await page.getByRole('tab', { name: 'Sync status' }).click();
    const section = page.locator('[data-conflict="4400:3"]');
    await section.waitFor({ timeout: 10_000 });
    const changed = section.locator('tr', { has: page.locator('td.diff-removed') });
    assert.equal(await changed.count(), 1);
    assert.match(await changed.locator('td').nth(0).innerText(), /"PLU": 12345678901234567890,$/);
    assert.match(await changed.locator('td').nth(1).innerText(), /"PLU": 12345678901234567891,$/);
    await page.screenshot({ path: path.join(ARTIFACTS, 'payload-text-conflict.png'), fullPage: true });
  });
});

import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { ComingUpReplySchema } from '../../src/admin/changes-schema';
import { addDays, todayIn, type IsoDate } from '../../src/domain/dates';
import { startAdminAgent, type RunningAdminAgent } from '../helpers/admin';
import { launchBrowser } from '../helpers/browser';
import { item, price, schedule, update } from '../helpers/fixtures';

/**
 * The Coming up tab in real Chromium against a running agent: the next 14 days of changes by date,
 * searchable by name or PLU, each with the update that caused it. Screenshots go to /tmp (look at them).
 */
const SHOTS = process.env.COMING_UP_SHOTS ?? '/tmp';
const XSS = '<img src=x onerror=alert(1)>';

let t: RunningAdminAgent;
let page: Page;
const dialogs: string[] = [];
const pageErrors: string[] = [];

describe('Coming up tab in Chromium', { timeout: 120_000 }, async () => {
  const today = todayIn('Europe/London');
  const day = (n: number): string => addDays(today, n);
  {
    t = await startAdminAgent({ locations: { 3021: { timezone: 'Europe/London', name: 'Riverside Kitchen' } } });
    // The menu as it stands, then head office's update with next week's changes.
    const first = update(3021, 1041, 1040, [
      item(1001, 'burger', [price(day(-30), '9999-12-31', 'Eat In', '11.50'), price(day(-30), '9999-12-31', 'Take Away', '10.95')], [schedule(day(-30), '9999-12-31', 'Lunch')], { ItemName: 'Cheeseburger' }),
      item(3001, 'breakfast', [price(day(-30), '9999-12-31', 'Eat In', '8.00')], [schedule(day(-30), '9999-12-31', 'Breakfast')], { ItemName: 'Full English Breakfast' }),
      item(4000, 'soup', [price(day(-30), day(9), 'Eat In', '4.50')], [], { ItemName: `Soup of the day ${XSS}` }),
      item(5000, 'later', [price(day(20), '9999-12-31', 'Eat In', '9.00')], [], { ItemName: 'Autumn special' }),
    ], { LocationName: 'Riverside Kitchen' });
    const second = update(3021, 1042, 1041, [
      item(1001, 'burger', [price(day(3), '9999-12-31', 'Eat In', '12.00')], [], { ItemName: 'Cheeseburger' }),
      item(3001, 'breakfast', [], [schedule(day(5), day(6), 'Breakfast', 'UNAVAILABLE')], { ItemName: 'Full English Breakfast' }),
    ], { LocationName: 'Riverside Kitchen' });
    for (const body of [first, second]) assert.equal((await t.post(body)).status, 200);
    await t.settle();
    let context;
    ({ context, page } = await launchBrowser());
    void context;
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    page.on('pageerror', (e) => pageErrors.push(e.message));
  }

  it('answers GET /api/changes in the shape its schema gives (checked with zod)', async () => {
    // London's date when the agent answered: today's, or the next day's if midnight passed since the
    // menu was posted (the changes below have fixed dates and stay inside the window either way).
    const before = todayIn('Europe/London');
    const res = await fetch(`${t.adminUrl}api/changes?location=3021`, { headers: { authorization: `Bearer ${t.token}` } });
    const after = todayIn('Europe/London');
    assert.equal(res.status, 200);
    const reply = ComingUpReplySchema.parse(await res.json());
    const from = reply.windows[0]?.from;
    assert.ok(from === before || from === after, `the window starts ${from}, London's date is ${before}..${after}`);
    assert.deepEqual(reply.windows, [{ locationId: 3021, from, to: addDays(from as IsoDate, 13) }]);
    assert.deepEqual(
      reply.changes.map((c) => [c.date, c.plu, c.tariffName ?? c.mealPeriod, c.before, c.after, c.cause?.changeSequence]),
      [
        [day(3), '1001', 'Eat In', '11.50', '12.00', 1042],
        [day(5), '3001', 'Breakfast', 'AVAILABLE', 'UNAVAILABLE', 1042],
        [day(7), '3001', 'Breakfast', 'UNAVAILABLE', 'AVAILABLE', 1042],
        [day(10), '4000', 'Eat In', '4.50', null, 1041],
      ],
    );
    const bad = await fetch(`${t.adminUrl}api/changes?days=0`, { headers: { authorization: `Bearer ${t.token}` } });
    assert.equal(bad.status, 400);
  });

  it('lists the next 14 days by date with before, after and the update that caused each change', async () => {
    await page.goto(t.loginUrl);
    await page.getByRole('tab', { name: 'Coming up' }).click();
    await page.locator('#coming-results .coming-day').first().waitFor();
    const days = page.locator('#coming-results .coming-day');
    assert.equal(await days.count(), 4);
    const burger = days.nth(0);
    assert.match(await burger.locator('h2').innerText(), /^\w+day \d{1,2} \w+ \d{4}$/);
    const row = await burger.locator('tbody tr').innerText();
    assert.match(row, /1001\s+Cheeseburger\s+Riverside Kitchen \(3021\)\s+Eat In price\s+11\.50 GBP\s+12\.00 GBP\s+update 1042, applied (\d{1,2} \w{3}, )?\d\d:\d\d/);
    assert.match(await days.nth(1).innerText(), /Full English Breakfast.*Breakfast\s+Available\s+Not available/s);
    // The Autumn special starts in 20 days: beyond the window.
    assert.doesNotMatch(await page.locator('#coming-results').innerText(), /Autumn special/);
    assert.equal(await page.locator('#coming-count').innerText(), `4 changes in ${today} to ${day(13)}.`);
    // Vendor text is shown as text.
    assert.match(await days.nth(3).innerText(), /Soup of the day <img src=x onerror=alert\(1\)>\s+Riverside Kitchen \(3021\)\s+Eat In price\s+4\.50 GBP\s+no price/);
    await page.screenshot({ path: path.join(SHOTS, 'coming-up-01-next-14-days.png'), fullPage: true });
  });

  it('searches by name and by PLU as you type', async () => {
    await page.locator('#coming-search').fill('burger');
    await page.locator('#coming-count').filter({ hasText: /^1 change in / }).waitFor();
    assert.equal(await page.locator('#coming-results .coming-day').count(), 1);
    assert.match(await page.locator('#coming-results').innerText(), /Cheeseburger/);
    assert.doesNotMatch(await page.locator('#coming-results').innerText(), /Breakfast/);
    await page.locator('#coming-search').fill('3001');
    await page.locator('#coming-count').filter({ hasText: /^2 changes in / }).waitFor();
    assert.equal(await page.locator('#coming-results .coming-day').count(), 2);
    assert.match(await page.locator('#coming-count').innerText(), /^2 changes/);
    await page.locator('#coming-location').selectOption('3021');
    // One location chosen: the count names its own dates, and the Location column goes.
    await page.locator('#coming-results thead').first().filter({ hasNotText: 'Location' }).waitFor();
    assert.doesNotMatch(await page.locator('#coming-results thead').first().innerText(), /Location/);
    await page.screenshot({ path: path.join(SHOTS, 'coming-up-02-search-plu.png'), fullPage: true });
    await page.locator('#coming-search').fill('nothing like this');
    await page.locator('#coming-results .empty').waitFor();
    assert.match(await page.locator('#coming-results').innerText(), /No changes for “nothing like this” in \d{4}-\d\d-\d\d to \d{4}-\d\d-\d\d/);
    await page.screenshot({ path: path.join(SHOTS, 'coming-up-03-no-match.png'), fullPage: false });
    assert.deepEqual(dialogs, []);
    assert.deepEqual(pageErrors, []);
  });
});

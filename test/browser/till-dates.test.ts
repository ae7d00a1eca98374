import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { addDays, todayIn } from '../../src/domain/dates';
import { launchBrowser } from '../helpers/browser';
import { startAdminAgent, type RunningAdminAgent } from '../helpers/admin';
import { item, price, schedule, update } from '../helpers/fixtures';

/**
 * "What will the till charge?" in Chromium: each item card says the date it is answered for (across
 * locations in different timezones, each location's own today), and what it says about selling the
 * item never contradicts itself. Screenshots in test-artifacts/browser/till-dates-*.png.
 */

const ARTIFACTS = path.resolve(__dirname, '..', '..', 'test-artifacts', 'browser');
/** Always on different dates (UTC+14 and UTC-11). */
const ZONES: Record<number, string> = { 1: 'Pacific/Kiritimati', 2: 'Pacific/Pago_Pago' };

let t: RunningAdminAgent;
let page: Page;

/** One-day prices from two days before the location's today to two after, each its own: `<location>.<day>0`, today `.30`. */
function menu(locationId: number): Record<string, unknown> {
  const today = todayIn(ZONES[locationId]!);
  const items = [item('1001', `i${locationId}`, [-2, -1, 0, 1, 2].map((d, i) => price(addDays(today, d), addDays(today, d), 'Eat In', `${locationId}.${i + 1}0`)))];
  if (locationId === 1) {
    // Priced and tied to Breakfast from 2026-12-01 only; and one with Breakfast but no price before then.
    items.push(item('2002', 'porridge', [price('2026-12-01', '2027-02-28', 'Eat In', '3.50')], [schedule('2026-12-01', '2027-02-28', 'Breakfast')]));
    items.push(item('2003', 'toast', [price('2026-12-01', '2027-02-28', 'Eat In', '2.00')], [schedule('2026-11-01', '2027-02-28', 'Breakfast')]));
  }
  return update(locationId, 1, 0, items, {
    LocationName: `Zone ${locationId}`,
  });
}

async function lookUp(plu: string, date = ''): Promise<void> {
  await page.getByLabel('PLU', { exact: true }).fill(plu);
  await page.getByLabel('Date (optional, default today)').fill(date);
  await page.getByRole('button', { name: 'Look up' }).click();
  await page.locator('#till-results article').first().waitFor();
}

const card = (locationId: number) => page.locator('#till-results article', { hasText: `(${locationId})` });

describe('status window: what the till charges, date by date', { timeout: 120_000 }, async () => {
  {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    t = await startAdminAgent({ locations: { 1: { timezone: ZONES[1] }, 2: { timezone: ZONES[2] } }, defaultTimezone: 'Europe/London', sync: { acceptOtherLocations: true } });
    for (const id of [1, 2]) assert.equal((await t.post(menu(id))).status, 200);
    await t.settle();
    ({ page } = await launchBrowser());
    await page.goto(t.loginUrl);
    await page.locator('[data-location="1"]').waitFor();
    await page.getByRole('tab', { name: 'What will the till charge?' }).click();
  }

  it("puts each location's price under that location's own date", async () => {
    const today = { 1: todayIn(ZONES[1]!), 2: todayIn(ZONES[2]!) };
    await lookUp('1001');
    await page.screenshot({ path: path.join(ARTIFACTS, 'till-dates-all-locations.png'), fullPage: true });
    const count = await page.locator('#till-count').innerText();
    assert.doesNotMatch(count, /\d{4}-\d\d-\d\d/, 'no one date for items answered on different dates');
    assert.match(count, /^2 items with PLU 1001, each on today's date at its own location/);
    for (const id of [1, 2] as const) {
      const text = await card(id).innerText();
      // Midnight at a location may pass during the test: then both its date and its price move on a day.
      const shown = /On (\d{4}-\d\d-\d\d) \(today at this location\)/.exec(text)?.[1];
      assert.ok(shown === today[id] || shown === addDays(today[id], 1), `${id}: ${text}`);
      assert.match(text, new RegExp(`Eat In\\s+${id}\\.${shown === today[id] ? 3 : 4}0 GBP`));
    }
  });

  it('names the date asked for, on the count and on every card', async () => {
    const date = todayIn(ZONES[1]!);
    await lookUp('1001', date);
    assert.equal(await page.locator('#till-count').innerText(), `2 items with PLU 1001 on ${date}:`);
    const expected = t.agent.core.lookup('1001', { date }).items;
    for (const id of [1, 2]) {
      const text = await card(id).innerText();
      assert.match(text, new RegExp(`On ${date}:`));
      const sell = expected.find((i) => i.locationId === id)!.prices[0]!.sellPrice;
      assert.match(text, new RegExp(`Eat In\\s+${sell.replace('.', '\\.')} GBP`));
    }
  });

  it('never says an item with no price that day is sold, whatever its meal periods', async () => {
    await lookUp('2002', '2026-11-26');
    const porridge = await card(1).innerText();
    assert.match(porridge, /No price on 2026-11-26: the till cannot sell this item that day\./);
    assert.doesNotMatch(porridge, /sold whenever|till is open|Not tied to meal periods/);
    await page.screenshot({ path: path.join(ARTIFACTS, 'till-dates-no-price.png'), fullPage: true });
    await lookUp('2003', '2026-11-26');
    const toast = await card(1).innerText();
    assert.match(toast, /Breakfast\s+Available/);
    assert.match(toast, /Without a price on 2026-11-26, the till does not sell it in these meal periods either\./);
    // Priced, not tied to meal periods that day: sold whenever it is priced.
    await lookUp('1001', todayIn(ZONES[2]!));
    assert.match(await card(2).innerText(), new RegExp(`Not tied to meal periods on ${todayIn(ZONES[2]!)}: sold whenever it is priced, at any time of day\\.`));
  });
});

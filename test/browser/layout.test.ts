import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { startAdminAgent } from '../helpers/admin';
import { launchBrowser } from '../helpers/browser';
import { item, price, sampleBodies, update } from '../helpers/fixtures';

/**
 * The window at the sizes a back-office PC gives it: 1280x800 and 800x600. Every tab reflows with
 * nothing cut off: no horizontal overflow of the page, and the key elements inside the viewport.
 * Screenshots go to test-artifacts/browser/ (look at them).
 */

const ARTIFACTS = path.resolve(__dirname, '..', '..', 'test-artifacts', 'browser');
const TABS = ['Sync status', 'Deliveries', 'What will the till charge?', 'Coming up', 'Staff', 'Activity', 'Settings'] as const;
/** Elements that must be wholly visible across (not cut at the right edge) when present. */
const KEY = ['#pause-button', '#summary-text', '#live', '.tabs', '#location-cards .card', '#chart-section', '#deliveries-table', '#activity-table', 'main .card', 'main button', 'main input', 'main table'];

interface Overflow {
  readonly page: { scrollWidth: number; clientWidth: number };
  readonly cut: string[];
}

/** Runs in the page (a string: this project's tests are typed without the DOM library). */
const MEASURE = `(selectors) => {
  const width = document.documentElement.clientWidth;
  const cut = [];
  for (const sel of selectors) {
    for (const el of Array.from(document.querySelectorAll(sel))) {
      if (el.offsetParent === null && getComputedStyle(el).position !== 'fixed') continue;
      // Inside a scroll box of its own (a wide table): what matters is that the box fits.
      const scroller = el.closest('.table-scroll');
      const box = (scroller || el).getBoundingClientRect();
      if (box.width > 0 && (box.right > width + 0.5 || box.left < -0.5)) cut.push(sel + ' (' + Math.round(box.left) + '..' + Math.round(box.right) + ' of ' + width + ')');
      const ox = getComputedStyle(el).overflowX;
      if (!scroller && el.scrollWidth > el.clientWidth + 1 && ox !== 'auto' && ox !== 'scroll' && el.tagName !== 'SPAN' && el.id !== 'summary-text') {
        cut.push(sel + ': content ' + el.scrollWidth + ' wider than its box ' + el.clientWidth);
      }
    }
  }
  return { page: { scrollWidth: document.documentElement.scrollWidth, clientWidth: width }, cut };
}`;

async function overflow(page: Page): Promise<Overflow> {
  return (await page.evaluate(`(${MEASURE})(${JSON.stringify(KEY)})`)) as Overflow;
}

describe('the window at 1280x800 and 800x600', { timeout: 180_000 }, async () => {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const t = await startAdminAgent({ admin: { liveCheckMs: 200 } });
  const [first, , third] = sampleBodies();
  assert.equal((await t.post(first!.raw)).status, 200);
  assert.equal((await t.post(third!.raw)).status, 200); // a gap: the waiting table and the force-apply button
  assert.equal((await t.post(update(4000, 5, 4, [item('1001', 'LONG-ITEM-NAME-WITHOUT-SPACES-THAT-COULD-PUSH-A-TABLE-WIDER', [price('2026-12-01', '2027-12-31', 'Eat In a very long tariff name indeed', 12.5)])], { LocationName: 'A location with a really rather long name for a card heading' }))).status, 200);
  await t.settle();
  const { page }: { page: Page } = await launchBrowser();
  await page.goto(t.loginUrl);
  await page.locator('[data-location="3021"]').waitFor();

  for (const [width, height] of [
    [1280, 800],
    [800, 600],
  ] as const) {
    it(`has nothing cut off at ${width}x${height}, on every tab`, async () => {
      await page.setViewportSize({ width, height });
      for (const name of TABS) {
        await page.getByRole('tab', { name }).click();
        await page.waitForTimeout(300);
        if (name === 'What will the till charge?') {
          await page.getByLabel('PLU', { exact: true }).fill('1001');
          await page.getByRole('button', { name: 'Look up' }).click();
          await page.locator('#till-results article').first().waitFor();
        }
        const o = await overflow(page);
        const slug = name.toLowerCase().replace(/[^a-z]+/g, '-').replace(/-$/, '');
        await page.screenshot({ path: path.join(ARTIFACTS, `layout-${width}x${height}-${slug}.png`), fullPage: true });
        assert.ok(o.page.scrollWidth <= o.page.clientWidth, `${name} at ${width}x${height}: the page scrolls sideways (${o.page.scrollWidth} > ${o.page.clientWidth})`);
        assert.deepEqual(o.cut, [], `${name} at ${width}x${height}`);
      }
      // The header's controls stay on screen (the Pause button was cut off at 800 wide).
      const pause = await page.locator('#pause-button').boundingBox();
      assert.ok(pause && pause.x + pause.width <= width, 'the Pause button is on screen');
    });
  }

  it('takes the till date as YYYY-MM-DD (not the browser\'s mm/dd/yyyy) and says that PLUs repeat', async () => {
    await page.getByRole('tab', { name: 'What will the till charge?' }).click();
    const date = page.locator('#till-date');
    assert.equal(await date.getAttribute('type'), 'text');
    assert.equal(await date.getAttribute('placeholder'), 'YYYY-MM-DD');
    await date.fill('12/25/2026');
    await page.getByRole('button', { name: 'Look up' }).click();
    assert.match(await page.locator('#till-date-error').innerText(), /Write the date as YYYY-MM-DD/);
    await date.fill('2027-01-05');
    await page.getByRole('button', { name: 'Look up' }).click();
    await page.locator('#till-count', { hasText: 'on 2027-01-05' }).waitFor();
    assert.match(await page.locator('#till-plu-repeats').innerText(), /^PLUs can repeat: these 2 items share PLU 1001/);
  });

  it('shows no search box on the Staff tab when staff lookups are not configured', async () => {
    await page.getByRole('tab', { name: 'Staff' }).click();
    await page.getByText('Staff lookups are not configured on this agent.').waitFor();
    assert.equal(await page.locator('#staff-search').isVisible(), false);
  });
});

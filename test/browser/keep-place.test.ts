import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { startAdminAgent } from '../helpers/admin';
import { launchBrowser } from '../helpers/browser';
import { item, price, schedule, update } from '../helpers/fixtures';

/**
 * A refresh keeps a keyboard user's place (real agent, real Chromium): on Sync status a warnings list
 * opened with Enter stays open and "Mark warnings as seen" keeps focus when another location arrives
 * and when that card itself changes; on Deliveries a focused View button keeps focus when a delivery
 * arrives and when its own row changes. Focus never leaves the control (no focus event, so a screen
 * reader hears nothing again), and the header's live region is left alone while its text is the same.
 */

/** An update applied with two warnings: an inverted date range and an unknown meal-period status. */
const withWarnings = update(10, 101, 100, [
  item('1', 'A', [price('2026-12-01', '2026-12-31', 'Eat In', 5), price('2026-12-31', '2026-12-01', 'Eat In', 5)], [schedule('2026-12-01', '2026-12-31', 'Lunch', 'SOLD_OUT' as 'AVAILABLE')]),
]);

/**
 * From now on, counts focus moves and records changes to live regions (read with `watched`); called
 * again, it counts from zero. In the page's own script, as tests here have no DOM types.
 */
const WATCH = `(() => {
  window.focusMoves = 0;
  window.liveChanges = [];
  if (window.watching) return;
  window.watching = true;
  document.addEventListener('focusin', () => window.focusMoves++, true);
  document.addEventListener('focusout', () => window.focusMoves++, true);
  const observer = new MutationObserver((records) => {
    for (const r of records) window.liveChanges.push((r.target.nodeType === 1 ? r.target : r.target.parentElement).closest('[aria-live]').id + ' ' + r.type);
  });
  for (const region of document.querySelectorAll('[aria-live]')) observer.observe(region, { childList: true, characterData: true, subtree: true });
})()`;

async function watched(page: Page): Promise<{ focusMoves: number; liveChanges: string[] }> {
  return (await page.evaluate('({ focusMoves: window.focusMoves, liveChanges: window.liveChanges })')) as { focusMoves: number; liveChanges: string[] };
}

/** The control with focus: its name, and for a View button its row's update number (the names repeat a time). */
const FOCUSED = `(() => {
  const el = document.activeElement;
  if (!el || el === document.body) return 'the page body';
  const update = el.closest('tr')?.querySelector('td:nth-child(3)')?.textContent;
  return el.tagName + ' ' + (el.getAttribute('aria-label') ?? el.textContent) + (update ? ' (update ' + update + ')' : '');
})()`;

async function focused(page: Page): Promise<string> {
  return (await page.evaluate(FOCUSED)) as string;
}

describe('a refresh keeps a keyboard user\'s place', { timeout: 120_000 }, async () => {
  const t = await startAdminAgent({ admin: { liveCheckMs: 200 } });
  assert.equal((await t.post(withWarnings)).status, 200);
  await t.settle();
  assert.equal(t.agent.core.status()[0]!.warnings, 2);
  const { page } = await launchBrowser();
  await page.goto(t.loginUrl);
  const card = page.locator('[data-location="10"]');
  await card.waitFor();
  const warnings = card.locator('details.warnings');
  const isOpen = async (): Promise<boolean> => (await warnings.getAttribute('open')) !== null;

  /** As a manager does it: the warnings' summary, Enter to open it, Tab to the button. */
  async function toMarkAsSeen(): Promise<void> {
    await warnings.locator('summary').focus();
    if (!(await isOpen())) await page.keyboard.press('Enter');
    assert.equal(await isOpen(), true);
    await page.keyboard.press('Tab');
    assert.equal(await focused(page), 'BUTTON Mark warnings as seen');
  }

  it('keeps the warnings open and focus on "Mark warnings as seen" when another location arrives', async () => {
    // A short window, so the page scrolls to the button: the scroll position must stay too.
    await page.setViewportSize({ width: 1280, height: 420 });
    await toMarkAsSeen();
    const scrollY = await page.evaluate('window.scrollY');
    const header = await page.locator('#summary').innerText();
    await page.evaluate(WATCH);
    assert.equal((await t.post(update(20, 1, 0, [item('2', 'B', [price('2026-12-01', '2026-12-31', 'Eat In', 2)])]))).status, 200);
    await page.locator('[data-location="20"]').waitFor({ timeout: 10_000 });
    assert.equal(await isOpen(), true, 'the warnings stay open');
    assert.equal(await focused(page), 'BUTTON Mark warnings as seen');
    assert.equal(await page.evaluate('window.scrollY'), scrollY, 'the page stays where it was scrolled');
    const seen = await watched(page);
    assert.equal(seen.focusMoves, 0, 'focus never left the button');
    assert.equal(await page.locator('#summary').innerText(), header, 'the header says the same');
    assert.deepEqual(seen.liveChanges, [], 'no live region was written to again');
  });

  it('keeps them when that location\'s own card changes', async () => {
    await toMarkAsSeen();
    await page.evaluate(WATCH);
    assert.equal((await t.post(update(10, 102, 101, [item('3', 'C', [price('2026-12-01', '2026-12-31', 'Eat In', 3)])]))).status, 200);
    await card.locator('dd', { hasText: /^102$/ }).waitFor({ timeout: 10_000 });
    assert.equal(await isOpen(), true, 'the warnings stay open');
    assert.equal(await focused(page), 'BUTTON Mark warnings as seen');
    assert.equal((await watched(page)).focusMoves, 0, 'focus never left the button');
    // The button still acts on its own location.
    await page.keyboard.press('Enter');
    await page.locator('#toast').getByText('2 warnings marked as seen.').waitFor({ timeout: 10_000 });
    await warnings.waitFor({ state: 'detached', timeout: 10_000 });
    assert.equal(t.agent.core.status().find((l) => l.locationId === 10)!.warnings, 0);
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('keeps focus on a View button when a delivery arrives and when its row changes', async () => {
    // 104 waits for 103; the View of its delivery has focus while 103 arrives and 104 is applied.
    assert.equal((await t.post(update(10, 104, 103, [item('4', 'D', [price('2026-12-01', '2026-12-31', 'Eat In', 4)])]))).status, 200);
    await t.settle();
    await page.getByRole('tab', { name: 'Deliveries' }).click();
    const row = (sequence: number) => page.locator('#deliveries-table tbody tr', { has: page.locator('td:nth-child(3)', { hasText: new RegExp(`^${sequence}$`) }) });
    await row(104).waitFor();
    assert.equal(await row(104).getAttribute('data-result'), 'waiting');
    await page.setInputFiles('#import-file', { name: 'support.json', mimeType: 'application/json', buffer: Buffer.from('{}') });
    const view = row(104).getByRole('button', { name: /View payload/ });
    const label = await view.getAttribute('aria-label');
    await view.focus();
    await page.evaluate(WATCH);
    assert.equal((await t.post(update(10, 103, 102, [item('5', 'E', [price('2026-12-01', '2026-12-31', 'Eat In', 5)])]))).status, 200);
    await row(103).waitFor({ timeout: 10_000 });
    await page.locator('#deliveries-table tbody tr[data-result="applied"]', { has: page.locator('td:nth-child(3)', { hasText: /^104$/ }) }).waitFor({ timeout: 10_000 });
    assert.equal(await focused(page), `BUTTON ${label} (update 104)`);
    assert.equal((await watched(page)).focusMoves, 0, 'focus never left the button');
    assert.equal(await page.evaluate(`document.getElementById('import-file').files[0]?.name`), 'support.json', 'the chosen file stays chosen');
    // The next Tab goes on from there: to the View of the row below (102, older).
    await page.keyboard.press('Tab');
    assert.equal(await focused(page), `BUTTON ${await row(102).getByRole('button', { name: /View payload/ }).getAttribute('aria-label')} (update 102)`);
  });

  it('opens the list of waiting updates once one of them can be forced, though it was shown closed', async () => {
    assert.equal((await t.post(update(50, 1, 0, [item('8', 'H', [price('2026-12-01', '2026-12-31', 'Eat In', 9)])]))).status, 200);
    await t.settle();
    // Paused: the next update is queued, listed closed (nothing to force).
    t.agent.setPaused(true, 'test');
    assert.equal((await t.post(update(50, 2, 1, [item('8', 'H', [price('2026-12-01', '2026-12-31', 'Eat In', 10)])]))).status, 200);
    await page.getByRole('tab', { name: 'Sync status' }).click();
    const list = page.locator('[data-location="50"] details.waiting');
    await list.waitFor({ timeout: 10_000 });
    assert.equal(await list.getAttribute('open'), null);
    // Update 4 arrives without 3: a gap, and 4 can be forced. The list opens with its button.
    assert.equal((await t.post(update(50, 4, 3, [item('8', 'H', [price('2026-12-01', '2026-12-31', 'Eat In', 11)])]))).status, 200);
    await page.locator('[data-location="50"] button[data-update="50:4"]').waitFor({ state: 'visible', timeout: 10_000 });
    assert.notEqual(await list.getAttribute('open'), null);
    t.agent.setPaused(false, 'test');
  });

  it('keeps focus on a "Keep the first" button of a conflict when something else arrives', async () => {
    // 30:1 sent twice with different content: a conflict, compared on Sync status.
    assert.equal((await t.post(update(30, 1, 0, [item('6', 'F', [price('2026-12-01', '2026-12-31', 'Eat In', 6)])]))).status, 200);
    await t.settle();
    assert.equal((await t.post(update(30, 1, 0, [item('6', 'F', [price('2026-12-01', '2026-12-31', 'Eat In', 7)])]))).status, 200);
    await page.getByRole('tab', { name: 'Sync status' }).click();
    const keep = page.locator('#conflicts button[data-keep]').first();
    await keep.waitFor({ timeout: 10_000 });
    await keep.focus();
    const before = await focused(page);
    assert.match(before, /^BUTTON Keep the first/);
    await page.evaluate(WATCH);
    assert.equal((await t.post(update(40, 1, 0, [item('7', 'G', [price('2026-12-01', '2026-12-31', 'Eat In', 8)])]))).status, 200);
    await page.locator('[data-location="40"]').waitFor({ timeout: 10_000 });
    assert.equal(await focused(page), before);
    assert.equal((await watched(page)).focusMoves, 0, 'focus never left the button');
  });
});

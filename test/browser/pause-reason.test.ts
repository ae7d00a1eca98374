import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { startAdminAgent } from '../helpers/admin';
import { launchBrowser } from '../helpers/browser';
import { sampleBodies } from '../helpers/fixtures';

/**
 * Pausing applying from the window's header asks first, in a dialog of the window's own (no
 * window.prompt or window.confirm), for an optional reason: the audit log and Activity keep it with
 * the person's name. All of it by keyboard. Screenshot in test-artifacts/browser/pause-reason-dialog.png.
 */

const ARTIFACTS = path.resolve(__dirname, '..', '..', 'test-artifacts', 'browser');
const NAME = 'Priya Shah';
const REASON = 'Head office asked us to hold the Christmas menu until Monday';

describe('status window: pausing asks for a reason', { timeout: 120_000 }, async () => {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const t = await startAdminAgent({ admin: { liveCheckMs: 200 } });
  const [first] = sampleBodies();
  assert.equal((await t.post(first!.raw)).status, 200);
  await t.settle();
  const { page }: { page: Page } = await launchBrowser();
  const nativeDialogs: string[] = [];
  page.on('dialog', (d) => {
    nativeDialogs.push(d.message());
    void d.dismiss();
  });
  const pauses = () => t.agent.core.agentDb.prepare("SELECT actor, details FROM audit_log WHERE action = 'pause' ORDER BY id").all() as { actor: string; details: string }[];
  const dialog = () => page.getByRole('dialog', { name: 'Pause applying updates?' });

  it('asks before pausing; Esc leaves applying running', async () => {
    await page.goto(t.loginUrl);
    await page.getByLabel('Your name').fill(NAME);
    await page.keyboard.press('Enter');
    await page.locator('[data-location="3021"]').waitFor();
    await page.locator('#pause-button').focus();
    await page.keyboard.press('Enter');
    await dialog().waitFor();
    assert.match(await dialog().innerText(), /Updates from head office are still received and stored, but none is applied until you resume\./);
    assert.match(await dialog().innerText(), /pos-sync-agent pause --reason "…"/);
    // The reason field has the focus, so it can be typed at once.
    assert.equal(await page.evaluate('document.activeElement?.tagName'), 'TEXTAREA');
    assert.equal(await page.getByLabel('Reason (optional)').count(), 1);
    await page.keyboard.press('Escape');
    await dialog().waitFor({ state: 'detached' });
    assert.equal(t.agent.isPaused, false);
    assert.deepEqual(pauses(), []);
    assert.equal(await page.locator('#pause-button').innerText(), 'Pause applying');
  });

  it('pauses with the reason given, recorded with the name and shown in Activity', async () => {
    await page.locator('#pause-button').focus();
    await page.keyboard.press('Enter');
    await dialog().waitFor();
    await page.keyboard.type(REASON);
    await page.screenshot({ path: path.join(ARTIFACTS, 'pause-reason-dialog.png') });
    // Tab past Cancel to the confirming button.
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate('document.activeElement?.textContent'), 'Pause now');
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Resume applying' }).waitFor();
    assert.equal(t.agent.isPaused, true);
    const rows = pauses();
    assert.equal(rows.length, 1);
    assert.match(rows[0]!.actor, new RegExp(`^${NAME} \\(status window on .+\\)$`));
    assert.deepEqual(JSON.parse(rows[0]!.details), { reason: REASON });
    await page.getByRole('tab', { name: 'Activity' }).click();
    await page.locator('#activity-table tbody tr[data-action="pause"]').waitFor();
    assert.match(await page.locator('#activity-table tbody tr[data-action="pause"]').innerText(), new RegExp(`${NAME}\\s+Paused applying updates — reason: ${REASON}\\.`));
  });

  it('resumes in one click, and pauses without a reason when none is given', async () => {
    await page.getByRole('button', { name: 'Resume applying' }).click();
    await page.getByRole('button', { name: 'Pause applying' }).waitFor();
    assert.equal(t.agent.isPaused, false);
    await page.getByRole('button', { name: 'Pause applying' }).click();
    await dialog().getByRole('button', { name: 'Pause now' }).click();
    await page.getByRole('button', { name: 'Resume applying' }).waitFor();
    assert.deepEqual(JSON.parse(pauses()[1]!.details), {});
    await page.getByRole('button', { name: 'Resume applying' }).click();
    await page.getByRole('button', { name: 'Pause applying' }).waitFor();
    assert.deepEqual(nativeDialogs, []);
  });
});

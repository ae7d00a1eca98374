import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { launchBrowser } from '../helpers/browser';
import type { BrowserContext, Page } from 'playwright-core';
import { listBackups } from '../../src/ops/backup/files';
import { backupDir } from '../../src/ops/paths';
import { sampleBodies } from '../helpers/fixtures';
import { startOpsAdminAgent, zoneDifferentFromMachine, type OpsAdminAgent } from '../helpers/ops/ops-admin-agent';
import { readZip } from '../helpers/ops/read-zip';

/**
 * The operations part of the status window in real Chromium, against the real operations services
 * and the stand-in tunnel: banners on the Sync status tab, the panels under Settings → Operations,
 * their actions, and the retention settings. Screenshots: test-artifacts/browser/11-… to 16-….
 */

const ARTIFACTS = path.resolve(__dirname, '..', '..', 'test-artifacts', 'browser');

let context: BrowserContext;
let page: Page;
const consoleErrors: string[] = [];

async function shot(name: string, target: Page = page): Promise<void> {
  await target.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: false });
}

const panel = (name: string, target: Page = page) => target.locator(`[data-panel="${name}"]`);

/**
 * The status tab with no banner and "Up to date", as one snapshot of the page once it shows that.
 * The tunnel is checked every 0.2 s from the busy test process: a check failing on a stalled event
 * loop shows a banner until the next one, so the quiet view is awaited rather than read once.
 */
async function quietStatus(target: Page = page): Promise<{ alerts: number; label: string }> {
  const handle = await target.waitForFunction(
    `(() => {
      const alerts = document.querySelectorAll('[data-alert]').length;
      const label = document.getElementById('summary-label')?.innerText ?? '';
      return alerts === 0 && label === 'Up to date' && { alerts, label };
    })()`,
    undefined,
    { timeout: 20_000 },
  );
  return (await handle.jsonValue()) as { alerts: number; label: string };
}

describe('operations in the status window (Chromium)', { timeout: 180_000 }, async () => {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  // Slow restarts, so "restarting" stays on screen long enough to look at; a hung tunnel is left
  // unreachable (no restart for failed checks) so the red banner is steady.
  const t: OpsAdminAgent = await startOpsAdminAgent(
    { admin: { liveCheckMs: 200 } },
    { tunnel: { restartInitialDelayMs: 2500, restartMaxDelayMs: 4000, restartAfterFailedChecks: 0, startupGraceSeconds: 1 } },
  );
  const [first, second] = sampleBodies();
  assert.equal((await t.post(first!.raw)).status, 200);
  assert.equal((await t.post(second!.raw)).status, 200);
  await t.settle();
  ({ context, page } = await launchBrowser());
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => consoleErrors.push(e.message));

  it('shows no banner while the tunnel runs', async () => {
    await page.goto(t.loginUrl);
    await page.locator('[data-location="3021"].card-green').waitFor();
    await page.locator('#live.live-on').waitFor();
    assert.deepEqual(await quietStatus(), { alerts: 0, label: 'Up to date' });
  });

  it('a tunnel that dies shows "restarting" with why, live, on the status tab', async () => {
    t.tunnelMode('die');
    const banner = page.locator('[data-alert="tunnel"]');
    await banner.waitFor({ timeout: 15_000 });
    await banner.getByText('exited with code 3').waitFor({ timeout: 10_000 });
    // The program's last words may arrive on stderr just after its exit is seen.
    await banner.getByText('connection to edge lost').first().waitFor({ timeout: 10_000 });
    const text = await banner.innerText();
    assert.match(text, /The tunnel is restarting — updates cannot arrive meanwhile\./);
    assert.ok(text.includes(t.publicUrl!), 'the public URL is shown');
    assert.match(text, /connection to edge lost/, 'the tunnel program’s last output');
    assert.equal(await page.locator('#summary-label').innerText(), 'Check');
    assert.match(await page.locator('#summary-text').innerText(), /^The tunnel is restarting/);
    await shot('11-tunnel-restarting');
  });

  it('a tunnel that hangs shows "unreachable from outside" in red', async () => {
    t.tunnelMode('hang');
    const banner = page.locator('[data-alert="tunnel"].alert-red');
    await banner.waitFor({ timeout: 20_000 });
    assert.match(await banner.innerText(), /Head office cannot reach this PC: the tunnel does not answer from outside\./);
    assert.equal(await page.locator('#summary-label').innerText(), 'Attention');
    await shot('12-tunnel-unreachable');
  });

  it('the banner leads to Settings → Operations, where each service has its panel', async () => {
    await page.locator('[data-alert="tunnel"]').getByRole('button', { name: 'Details under Settings → Operations' }).click();
    assert.equal(await page.getByRole('tab', { name: 'Settings' }).getAttribute('aria-selected'), 'true');
    await panel('tunnel').waitFor();
    const tunnelText = await panel('tunnel').innerText();
    assert.match(tunnelText, /State\s+unreachable from outside\s+Why\s+http:\/\/127\.0\.0\.1:\d+\/healthz not reachable from outside/);
    assert.ok(tunnelText.includes(`Public address\n${t.publicUrl}`) || tunnelText.includes(t.publicUrl!));
    for (const name of ['disk', 'backup', 'retention', 'clock', 'ops']) await panel(name).waitFor();
    assert.match(await panel('backup').innerText(), /Last backup\s+.*backup-\d{8}T\d+Z/);
    assert.match(await panel('retention').innerText(), /Update bodies \(after applying\)\s+30 days \(configured\)/);
    await shot('13-operations-panels');
    t.tunnelMode('ok');
    await page.getByRole('tab', { name: 'Sync status' }).click();
    await page.locator('[data-alert="tunnel"]').waitFor({ state: 'detached', timeout: 20_000 });
    assert.deepEqual(await quietStatus(), { alerts: 0, label: 'Up to date' });
  });

  it('Back up now writes a backup set and says where', async () => {
    await page.getByRole('tab', { name: 'Settings' }).click();
    const before = listBackups(backupDir(t.config)).length;
    await new Promise((r) => setTimeout(r, 5));
    await panel('backup').getByRole('button', { name: 'Back up now' }).click();
    const result = panel('backup').locator('.action-result-ok');
    await result.waitFor();
    const file = /^Backup written: (.+backup-\d{8}T\d+Z) \(/.exec(await result.innerText())?.[1];
    assert.ok(file && fs.existsSync(file), `backup set ${file}`);
    assert.equal(listBackups(backupDir(t.config)).length, before + 1);
    assert.equal(await page.evaluate('document.activeElement.dataset.action'), 'backup-now', 'focus stays on the button after the panel is rebuilt');
  });

  it('Write diagnostics writes the zip and shows its path as text', async () => {
    await panel('ops').getByRole('button', { name: 'Write diagnostics' }).click();
    const result = panel('ops').locator('.action-result-ok');
    await result.waitFor();
    const file = /^Diagnostics written to (.+\.zip) \(/.exec(await result.innerText())?.[1];
    assert.ok(file, await result.innerText());
    assert.ok(readZip(file).has('operations.json'));
    assert.match(await panel('ops').innerText(), new RegExp(`Last diagnostics\\s+${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    // The panels are rebuilt on each live refresh: scroll by query, not by a held element.
    await page.evaluate(`document.querySelector('[data-panel="ops"]').scrollIntoView({ block: 'center' })`);
    await shot('14-diagnostics-written');
  });

  it('retention set in the window wins over the configuration; Prune now asks first', async () => {
    const input = page.getByLabel('Update bodies');
    assert.equal(await input.inputValue(), '30');
    await input.fill('14');
    await page.getByRole('button', { name: 'Save retention' }).click();
    await page.locator('#retention-rawPayloadDays-note', { hasText: 'set here (configured: 30)' }).waitFor();
    await panel('retention').getByText('14 days (set in this window; configured: 30)').waitFor();
    assert.deepEqual(JSON.parse(fs.readFileSync(path.join(t.config.dataDir, 'ui-settings.json'), 'utf8')).retention, { rawPayloadDays: 14 });
    await page.evaluate(`document.getElementById('retention-settings').scrollIntoView({ block: 'start' })`);
    await shot('15-retention-settings');
    await panel('retention').getByRole('button', { name: 'Prune now' }).click();
    const dialog = page.locator('dialog[open]');
    await dialog.getByText('Updates still waiting to be applied are never deleted.').waitFor();
    await dialog.getByRole('button', { name: 'Prune now' }).click();
    await panel('retention').locator('.action-result-ok', { hasText: /^Pruned: / }).waitFor();
    await page.getByRole('button', { name: 'Use configured values' }).click();
    await page.locator('#retention-rawPayloadDays-note', { hasText: 'as configured' }).waitFor();
    assert.equal(await page.getByLabel('Update bodies').inputValue(), '30');
  });

  it('a nearly full disk and a wrong timezone show as banners; no tunnel shows "not configured"', async () => {
    const other = await startOpsAdminAgent({ disk: { criticalFreeBytes: 2 ** 52 }, locations: { '3021': { timezone: zoneDifferentFromMachine() } } });
    assert.equal((await other.post(sampleBodies()[0]!.raw)).status, 200);
    await other.settle();
    const second = await context.newPage();
    second.on('pageerror', (e) => consoleErrors.push(e.message));
    await second.goto(other.loginUrl);
    await second.locator('[data-alert="disk"].alert-red').waitFor();
    await second.locator('[data-alert="timezone"]').waitFor();
    assert.match(await second.locator('[data-alert="disk"]').innerText(), /The disk is almost full — updates will be refused when it is\./);
    // A note, not an alarm: the views follow the location whatever the PC's timezone.
    assert.match(await second.locator('[data-alert="timezone"]').innerText(), /This PC's timezone shows another local time than the site's\./);
    assert.match(await second.locator('[data-alert="timezone"]').innerText(), /this PC's timezone does not matter, its clock does/);
    assert.equal(await second.locator('#summary-label').innerText(), 'Attention');
    await shot('16-disk-clock-banners', second);
    await second.getByRole('tab', { name: 'Settings' }).click();
    await panel('ops', second).getByText(/^not configured/).waitFor();
    assert.equal(await panel('tunnel', second).count(), 0);
    await second.close();
  });

  it('had no script errors', () => {
    assert.deepEqual(consoleErrors, []);
  });
});

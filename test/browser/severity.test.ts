import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { createEmployeeApi } from '../../src/dev/employee-api/app';
import { StaffService } from '../../src/employees/service';
import { trayState } from '../../src/electron/policy';
import { silentLogger } from '../../src/log';
import { startAdminAgent } from '../helpers/admin';
import { launchBrowser } from '../helpers/browser';
import { sampleBodies, tempDir, testConfig } from '../helpers/fixtures';

/**
 * The severity model rendered by the real window (Chromium), the tray model and `status` (a real CLI
 * process): an expired right to work is red everywhere; a paused agent shows no green card; an agent
 * that cannot be reached turns the window red, says since when and disables every action.
 */

const ARTIFACTS = path.resolve(__dirname, '..', '..', 'test-artifacts', 'browser');
const CLI = path.resolve(__dirname, '..', '..', 'bin', 'pos-sync-agent.cjs');

describe('severity in the window, the tray model and status', { timeout: 120_000 }, async () => {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const sim = createEmployeeApi({ employees: 30, organisationId: 42 });
  const simServer = await sim.listen(0, '127.0.0.1');
  after(() => simServer.close());
  const overrides = {
    dataDir: tempDir(),
    admin: { liveCheckMs: 200 },
    employees: { baseUrl: simServer.url, organisationId: 42, timeoutMs: 2000, retries: 0, retryBaseDelayMs: 5, syncIntervalMinutes: 0 },
  };
  const staff = new StaffService(testConfig(overrides), silentLogger);
  const t = await startAdminAgent(overrides, { services: [staff] });
  const [first] = sampleBodies();
  assert.equal((await t.post(first!.raw)).status, 200);
  await t.settle();
  await staff.sync({ full: true });

  const { page }: { page: Page } = await launchBrowser();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));

  it('shows an expired right to work in red in the header, the Staff tab and the person card', async () => {
    await page.goto(t.loginUrl);
    await page.locator('[data-location="3021"]').waitFor();
    assert.equal(await page.locator('#summary-label').innerText(), 'Attention');
    assert.match(await page.locator('#summary-light').getAttribute('class') ?? '', /light-red/);
    assert.match(await page.locator('#summary-text').innerText(), /^1 employee's right to work has expired or ends today — see Staff\./);
    await page.getByRole('tab', { name: 'Staff' }).click();
    const expired = page.locator('#residency-expired');
    await expired.waitFor();
    assert.notEqual(await expired.getAttribute('open'), null, 'the expired list is open');
    assert.match(await expired.innerText(), /Nguyễn \(Huong\) Thị Hương: pre-settled status expired on .* \(5 days ago\)/);
    // Ending soon is listed apart, in amber.
    assert.doesNotMatch(await page.locator('#residency-warnings').innerText(), /expired/);
    await expired.getByRole('button', { name: 'Nguyễn (Huong) Thị Hương' }).click();
    await page.locator('#staff-name').getByText('Nguyễn (Huong) Thị Hương').waitFor();
    assert.equal(await page.locator('#staff-card .card-head .badge').innerText(), 'Right to work expired');
    assert.equal(await page.locator('#residency-warning').getAttribute('data-expired'), 'true');
    await page.screenshot({ path: path.join(ARTIFACTS, 'severity-01-expired.png') });
  });

  it('gives the tray the same red (the tray renders the model)', () => {
    const summary = t.admin.summary();
    assert.ok(summary);
    assert.equal(summary.light, 'red');
    assert.equal(trayState(summary).colour, 'red');
    assert.match(trayState(summary).tooltip, /right to work has expired/);
  });

  it('shows a paused agent as paused: no green "Up to date" card', async () => {
    await page.getByRole('tab', { name: 'Sync status' }).click();
    await page.getByRole('button', { name: 'Pause applying' }).click();
    await page.getByRole('dialog', { name: 'Pause applying updates?' }).getByRole('button', { name: 'Pause now' }).click();
    await page.locator('#summary-label', { hasText: 'Paused' }).waitFor();
    const card = page.locator('[data-location="3021"]');
    await card.locator('.badge', { hasText: 'Paused' }).waitFor();
    assert.equal(await page.locator('.card-green').count(), 0);
    assert.doesNotMatch(await card.innerText(), /Up to date/);
    assert.match(await card.innerText(), /Applying is paused: nothing is held yet/);
    await page.getByRole('button', { name: 'Resume applying' }).click();
    await page.locator('[data-location="3021"] .badge', { hasText: 'Up to date' }).waitFor();
  });

  it('turns red while the agent cannot be reached, says since when, and disables every action', async () => {
    await t.agent.stop();
    await page.locator('#summary-label', { hasText: 'Agent unreachable' }).waitFor({ timeout: 15_000 });
    assert.match(await page.locator('#summary-light').getAttribute('class') ?? '', /light-red/);
    assert.match(await page.locator('#summary-text').innerText(), /^The agent cannot be reached since \d\d:\d\d/);
    assert.equal(await page.locator('#pause-button').isDisabled(), true);
    const enabled = await page.locator('main button:enabled:not([role="tab"]), main input:enabled').count();
    assert.equal(enabled, 0, 'no action is left enabled');
    assert.equal(await page.locator('[data-location="3021"] .badge').innerText(), 'Not known');
    await page.screenshot({ path: path.join(ARTIFACTS, 'severity-02-unreachable.png') });
    assert.deepEqual(errors, []);
  });

  it('prints the same model in `status` (a real process): red, with the expired right to work', () => {
    const configFile = path.join(overrides.dataDir, 'cli-config.json');
    fs.writeFileSync(configFile, JSON.stringify({ dataDir: overrides.dataDir, employees: overrides.employees }));
    const r = spawnSync(process.execPath, [CLI, '--config', configFile, 'status'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^Data folder: /);
    assert.match(r.stdout, /\nRED — /);
    assert.match(r.stdout, /\[red\] 1 employee's right to work has expired or ends today/);
    assert.match(r.stdout, /\[red\] The agent cannot be reached \(no agent is running on /);
    const json = JSON.parse(spawnSync(process.execPath, [CLI, '--config', configFile, 'status', '--json'], { encoding: 'utf8' }).stdout) as { severity: { light: string; reasons: { id: string; light: string }[] } };
    assert.equal(json.severity.light, 'red');
    assert.deepEqual(json.severity.reasons.filter((r2) => r2.id === 'staff').map((r2) => r2.light), ['red']);
  });
});

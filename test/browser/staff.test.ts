import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { launchBrowser } from '../helpers/browser';
import type { Page } from 'playwright-core';
import { createEmployeeApi } from '../../src/dev/employee-api/app';
import { StaffService } from '../../src/employees/service';
import { silentLogger } from '../../src/log';
import { startAdminAgent } from '../helpers/admin';
import { tempDir, testConfig } from '../helpers/fixtures';

/**
 * Staff lookup in Chromium against the employee-interface simulator on loopback: refresh, search as
 * you type (accent-insensitive), the card, the holiday balance on demand, then the simulator goes
 * away and the window says the data is from the offline cache.
 */

const ARTIFACTS = path.resolve(__dirname, '..', '..', 'test-artifacts', 'browser');

describe('staff lookup in Chromium', { timeout: 120_000 }, async () => {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const sim = createEmployeeApi({ employees: 30, organisationId: 42 });
  const simServer = await sim.listen(0, '127.0.0.1');
  let simClosed = false;
  after(async () => {
    if (!simClosed) await simServer.close();
  });
  const overrides = {
    dataDir: tempDir(),
    employees: { baseUrl: simServer.url, organisationId: 42, timeoutMs: 2000, retries: 0, retryBaseDelayMs: 5, syncIntervalMinutes: 0 },
  };
  const staff = new StaffService(testConfig(overrides), silentLogger);
  const t = await startAdminAgent(overrides, { services: [staff] });

  const { page }: { page: Page } = await launchBrowser();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/Failed to load resource: the server responded with a status of 50\d/.test(m.text())) errors.push(m.text());
  });

  it('before the first download, says there is no staff data and offers a refresh', async () => {
    await page.goto(t.loginUrl);
    await page.getByRole('tab', { name: 'Staff' }).click();
    await page.getByText('Staff data has not been downloaded yet.').waitFor();
    await page.locator('#staff-offline').waitFor();
    await page.getByRole('button', { name: 'Refresh staff data now' }).click();
    await page.locator('#staff-freshness').getByText(/Staff data refreshed just now/).waitFor({ timeout: 15_000 });
    assert.equal(await page.locator('#staff-offline').count(), 0);
    // Expired apart from ending soon: red and open, amber and folded.
    assert.match(await page.locator('#residency-expired summary').innerText(), /1 right-to-work permission has expired or ends today/);
    assert.match(await page.locator('#residency-warnings summary').innerText(), /^Check 2 right-to-work permissions expiring soon$/);
  });

  it('searches as you type, accent- and case-insensitively', async () => {
    const box = page.getByLabel('Search staff');
    await box.pressSequentially('zoe mu', { delay: 30 });
    const hit = page.locator('#staff-results button', { hasText: 'Zoë Müller' });
    await hit.waitFor();
    assert.equal(await page.locator('#staff-results button').count(), 1);
    assert.match(await hit.innerText(), /E1002 · furloughed/);
    await box.fill('E100');
    await page.locator('#staff-results button').nth(7).waitFor();
    assert.equal(await page.locator('#staff-results button').count(), 8);
    await box.fill('zoë');
    await page.locator('#staff-results button', { hasText: 'Zoë Müller' }).waitFor();
    await page.waitForFunction(() => (globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }).document.querySelectorAll('#staff-results button').length === 1);
  });

  it("shows a person's card: employment, manager, IR35, furlough, hours, residency warning", async () => {
    await page.locator('#staff-results button', { hasText: 'Zoë Müller' }).click();
    const card = page.locator('#staff-card article');
    await card.waitFor();
    const text = await card.innerText();
    assert.match(text, /Zoë Müller/);
    assert.match(text, /Employee number\s+E1002/);
    assert.match(text, /Manager\s+Siobhán Ó Súilleabháin \(E1001\)/);
    assert.match(text, /IR35 \(off-payroll\)\s+No/);
    assert.match(text, /Furloughed\s+Yes/);
    assert.match(text, /Contract hours\s+18\.5 hours a week/);
    assert.match(text, /Server\s+.*101/);
    assert.match(await page.locator('#residency-warning').innerText(), /pre-settled status expires on \d{4}-\d\d-\d\d, in 30 days/);
  });

  it('fetches the holiday balance on demand, with its freshness', async () => {
    await page.getByRole('button', { name: 'Get current holiday balance' }).click();
    await page.locator('#staff-accrual').getByText('42.75 Hours').waitFor();
    assert.match(await page.locator('#staff-accrual').innerText(), /fetched from the employee service just now/);
    await page.screenshot({ path: path.join(ARTIFACTS, '09-staff-card.png') });
  });

  it('keeps working from the offline cache when the employee service is gone, and says so', async () => {
    await simServer.close();
    simClosed = true;
    await page.getByRole('button', { name: 'Get current holiday balance' }).click();
    await page.locator('#staff-accrual').getByText(/from the offline cache/).waitFor({ timeout: 15_000 });
    const accrual = await page.locator('#staff-accrual').innerText();
    assert.match(accrual, /42\.75 Hours[\s\S]*This is the last balance fetched\. Nothing answered at the employee service’s address/);
    assert.doesNotMatch(accrual, /could not be reached:|ECONNREFUSED|http:\/\//, 'issue 12, point 15: plain words, no raw URL or error code');
    await page.getByRole('button', { name: 'Refresh staff data now' }).click();
    await page.locator('#staff-offline').waitFor({ timeout: 15_000 });
    const banner = await page.locator('#staff-offline').innerText();
    assert.match(banner, /Offline: staff data is from the offline cache, last refreshed (just now|\d+ minutes? ago) \(\d\d:\d\d\)\. Nothing answered at the employee service’s address: the service may be down, or the address in the settings may be wrong\./);
    assert.doesNotMatch(banner, /could not be reached|ECONNREFUSED|http:\/\//, 'the technical text is folded away');
    // For support, the raw error is one click away.
    await page.locator('#staff-offline summary', { hasText: 'Technical details' }).click();
    assert.match(await page.locator('#staff-offline details code').innerText(), /ECONNREFUSED/);
    await page.getByLabel('Search staff').fill('wisniewski');
    await page.locator('#staff-results button', { hasText: 'Łukasz Wiśniewski' }).click();
    await page.locator('#staff-name', { hasText: 'Łukasz Wiśniewski' }).waitFor();
    assert.match(await page.locator('#staff-card').innerText(), /IR35 \(off-payroll\)\s+Yes/);
    // A balance never fetched, with the service gone: plain words, the technical text folded away.
    await page.getByRole('button', { name: 'Get current holiday balance' }).click();
    await page.locator('#staff-accrual .error').waitFor({ timeout: 15_000 });
    const unfetched = await page.locator('#staff-accrual').innerText();
    assert.match(unfetched, /^Could not get the balance\. Nothing answered at the employee service’s address/);
    assert.doesNotMatch(unfetched, /ECONNREFUSED|\/organisations\/|GET /, 'no endpoint or error code in view');
    await page.locator('#staff-accrual summary', { hasText: 'Technical details' }).click();
    assert.match(await page.locator('#staff-accrual details code').innerText(), /ECONNREFUSED/);
    await page.screenshot({ path: path.join(ARTIFACTS, '10-staff-offline.png') });
    assert.deepEqual(errors, []);
  });
});

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { addDays, todayIn } from '../../src/domain/dates';
import { startAdminAgent } from '../helpers/admin';
import { launchBrowser } from '../helpers/browser';
import { item, price, update } from '../helpers/fixtures';

/**
 * Coming up says when the update behind a change was applied in the same local time as the rest of
 * the window (the location card's "Applied at"), not as the UTC date. The browser is put in a
 * timezone whose date differs from UTC's at the moment of the apply, as London's does just after
 * midnight in summer. Screenshot in test-artifacts/browser/coming-up-local-time.png.
 */

const ARTIFACTS = path.resolve(__dirname, '..', '..', 'test-artifacts', 'browser');
/** Fourteen hours ahead of UTC and eleven behind: at any moment one of them is on another date than UTC. */
const ZONES = ['Pacific/Kiritimati', 'Pacific/Pago_Pago'];

const localDate = (iso: string, timeZone: string): string => new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date(iso));
const hhmm = (iso: string, timeZone: string): string => new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', minute: '2-digit' }).format(new Date(iso));
const dayMonth = (iso: string, timeZone: string): string => new Intl.DateTimeFormat('en-GB', { timeZone, day: 'numeric', month: 'short' }).format(new Date(iso));

describe('Coming up: the apply time in local time', { timeout: 120_000 }, async () => {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const t = await startAdminAgent({ locations: { 3021: { timezone: 'Europe/London', name: 'Riverside Kitchen' } }, defaultTimezone: 'Europe/London' });
  const today = todayIn('Europe/London');
  const body = update(3021, 1042, 0, [item(1001, 'burger', [price(addDays(today, -30), addDays(today, 2), 'Eat In', '11.50'), price(addDays(today, 3), '9999-12-31', 'Eat In', '12.00')], [], { ItemName: 'Cheeseburger' })], {
    LocationName: 'Riverside Kitchen',
  });
  assert.equal((await t.post(body)).status, 200);
  await t.settle();

  it("names the apply time as the location card does, in the browser's timezone, not the UTC date", async () => {
    const appliedAt = t.agent.core.status().find((l) => l.locationId === 3021)!.lastAppliedAt!;
    const zone = ZONES.find((z) => localDate(appliedAt, z) !== appliedAt.slice(0, 10))!;
    const { context, page } = await launchBrowser();
    const cdp = await context.newCDPSession(page);
    await cdp.send('Emulation.setTimezoneOverride', { timezoneId: zone });
    await page.goto(t.loginUrl);
    const appliedCard = page.locator('[data-location="3021"] dl.facts time');
    await appliedCard.waitFor();
    await page.getByRole('tab', { name: 'Coming up' }).click();
    const row = page.locator('#coming-results tbody tr', { hasText: 'Cheeseburger' });
    await row.waitFor();
    const cause = row.locator('td').last();
    const shown = await cause.locator('time').innerText();
    const expected = localDate(appliedAt, zone) === localDate(new Date().toISOString(), zone) ? hhmm(appliedAt, zone) : `${dayMonth(appliedAt, zone)}, ${hhmm(appliedAt, zone)}`;
    assert.equal(await cause.innerText(), `update 1042, applied ${expected}`);
    assert.equal(await cause.locator('time').getAttribute('datetime'), appliedAt);
    // The full moment on hover carries the local date.
    assert.match((await cause.locator('time').getAttribute('title')) ?? '', new RegExp(`^${new Intl.DateTimeFormat('en-GB', { timeZone: zone, dateStyle: 'medium' }).format(new Date(appliedAt))}, `));
    assert.doesNotMatch(await cause.innerText(), new RegExp(appliedAt.slice(0, 10)));
    // The same words as the location card's "Applied at" (the Sync status tab).
    await page.getByRole('tab', { name: 'Sync status' }).click();
    assert.ok((await appliedCard.innerText()).startsWith(`${shown} (`), `${await appliedCard.innerText()} / ${shown}`);
    await page.getByRole('tab', { name: 'Coming up' }).click();
    await row.waitFor();
    await page.screenshot({ path: path.join(ARTIFACTS, 'coming-up-local-time.png'), fullPage: true });
  });
});

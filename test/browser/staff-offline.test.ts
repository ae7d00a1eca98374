import assert from 'node:assert/strict';
import net from 'node:net';
import { after, describe, it } from 'node:test';
import type { Page, Response } from 'playwright-core';
import { createEmployeeApi, type RunningSimulator } from '../../src/dev/employee-api/app';
import { StaffService } from '../../src/employees/service';
import type { Logger } from '../../src/log';
import { startAdminAgent } from '../helpers/admin';
import { launchBrowser } from '../helpers/browser';
import { tempDir, testConfig } from '../helpers/fixtures';

/**
 * The staff banner says "offline" from the first failed attempt, while the retries go on in the
 * background, and says so (issue 27). Before, the window waited for the whole sync: every list went
 * through its own retries and back-offs, and only then was the banner drawn.
 *
 * The retry wait is configured long so that the retries cannot end by themselves during the test; the
 * test ends them with the banner's "Try again now". So each check is about the order of events (the
 * banner is shown while the sync is still waiting to try again; the sync answers after), never about
 * how long anything took.
 */

/** Resolves when `check` holds (no timing threshold: the test's own timeout bounds it). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 10));
}

describe('staff banner while the employee service cannot be reached (Chromium)', { timeout: 120_000 }, async () => {
  const sim = createEmployeeApi({ employees: 12, organisationId: 42 });
  let standIn: RunningSimulator | null = await sim.listen(0, '127.0.0.1');
  const port = standIn.port;
  after(async () => {
    await standIn?.close();
  });

  // Events in the order they happened: the agent's retry log lines, the banner, the sync's answer.
  const events: string[] = [];
  const log: Logger = {
    error() {},
    warn(...args: unknown[]) {
      const line = args.map(String).join(' ');
      if (/employee service: .*retrying in \d+ ms \(attempt (\d+) of (\d+)\)/.test(line)) events.push(`retry scheduled: ${/attempt \d+ of \d+/.exec(line)![0]}`);
    },
    info() {},
    verbose() {},
    debug() {},
  };
  const overrides = {
    dataDir: tempDir(),
    employees: {
      baseUrl: standIn.url,
      organisationId: 42,
      // Two attempts in all; the wait between them is minutes, so only "Try again now" ends it here.
      retries: 1,
      retryBaseDelayMs: 240_000,
      retryMaxDelayMs: 240_000,
      timeoutMs: 3_000,
      syncIntervalMinutes: 0,
    },
  };
  const staff = new StaffService(testConfig(overrides), log);
  const t = await startAdminAgent(overrides, { services: [staff], log });
  const { page }: { page: Page } = await launchBrowser();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('response', (r: Response) => {
    if (r.url().endsWith('/api/staff/sync') && r.request().method() === 'POST') events.push(`sync answered ${r.status()}`);
  });

  const banner = page.locator('#staff-offline');
  /** The answer to the window's next POST /api/staff/sync (started before the click that sends it). */
  const syncAnswer = (): Promise<Response> => page.waitForResponse((r) => r.url().endsWith('/api/staff/sync') && r.request().method() === 'POST', { timeout: 0 });

  it('first download with the stand-in up: no banner', async () => {
    await page.goto(t.loginUrl);
    await page.getByRole('tab', { name: 'Staff' }).click();
    await page.getByRole('button', { name: 'Refresh staff data now' }).click();
    await page.locator('#staff-freshness').getByText(/Staff data refreshed just now/).waitFor();
    await banner.waitFor({ state: 'detached' });
    assert.deepEqual(events, ['sync answered 200']);
    events.length = 0;
  });

  it('connection refused: the banner says offline and "trying again" at once, then the retry succeeds when the service is back', async () => {
    await standIn!.close();
    standIn = null;
    const answered = syncAnswer();
    await page.getByRole('button', { name: 'Refresh staff data now' }).click();
    await page.locator('#staff-offline[data-retrying="true"]').waitFor();
    events.push('banner shown');
    const text = await banner.innerText();
    assert.match(text, /^Offline: staff data is from the offline cache, last refreshed just now \(\d\d:\d\d\)\. Nothing answered at the employee service’s address/);
    assert.match(text, /Trying again in the background at \d\d:\d\d:\d\d \(attempt 2 of 2\); the cached data can be used meanwhile\./);
    assert.equal(await page.getByRole('button', { name: 'Refreshing…' }).isDisabled(), true, 'the refresh is still under way');
    // The order of events: the first attempt failed and its retry was scheduled, the banner showed it,
    // and the sync has not answered (it is waiting for the retry).
    assert.deepEqual(events, ['retry scheduled: attempt 2 of 2', 'banner shown']);
    assert.equal(staff.syncing, true);

    // The service comes back; "Try again now" ends the wait and the same sync completes.
    standIn = await sim.listen(port, '127.0.0.1');
    sim.requests.length = 0;
    await page.getByRole('button', { name: 'Try again now' }).click();
    await answered;
    await page.locator('#toast', { hasText: 'Staff data refreshed.' }).waitFor();
    await banner.waitFor({ state: 'detached' });
    assert.deepEqual(events, ['retry scheduled: attempt 2 of 2', 'banner shown', 'sync answered 200']);
    assert.ok(sim.requests.some((r) => r.path.endsWith('/Locations')), 'the retry reached the service');
    assert.equal(staff.link.problem, null);
    events.length = 0;
  });

  it('no answer: the banner comes after the configured timeout, while the retry waits; when the retries end it says no more attempts', async () => {
    await standIn!.close();
    standIn = null;
    // A service that takes the connection, reads the request and never answers.
    const held = new Set<net.Socket>();
    const asked: string[] = [];
    const silent = net.createServer((socket) => {
      held.add(socket);
      socket.on('close', () => held.delete(socket));
      socket.on('data', (chunk: Buffer) => {
        const line = /^(GET|POST) (\S+)/m.exec(chunk.toString('latin1'));
        if (line) asked.push(line[2]!);
      });
    });
    await new Promise<void>((resolve) => silent.listen(port, '127.0.0.1', resolve));
    try {
      const answered = syncAnswer();
      await page.getByRole('button', { name: 'Refresh staff data now' }).click();
      await page.locator('#staff-offline[data-retrying="true"]').waitFor();
      events.push('banner shown');
      const text = await banner.innerText();
      assert.match(text, /The employee service did not answer in time\./);
      assert.match(text, /Trying again in the background at \d\d:\d\d:\d\d \(attempt 2 of 2\)/);
      assert.deepEqual(events, ['retry scheduled: attempt 2 of 2', 'banner shown']);
      assert.equal(asked.length, 1, 'one attempt so far, and it timed out');
      assert.match(asked[0]!, /\/Employees\?/);

      await page.getByRole('button', { name: 'Try again now' }).click();
      // The employees' second and last attempt also times out. One list unanswered may be that
      // endpoint alone, so employments are asked next; their first attempt times out too.
      await until(() => events.filter((e) => e.startsWith('retry scheduled')).length === 2);
      events.push('second list waiting');
      await page.getByRole('button', { name: 'Try again now' }).click();
      // Two lists in a row unanswered: the sync ends, and the reference lists were not asked.
      await answered;
      await page.locator('#toast', { hasText: /Staff data refresh failed for: employees, employments, locations, divisions, sources\./ }).waitFor();
      await page.getByText('No more attempts for now: “Refresh staff data now” tries again.').waitFor();
      assert.deepEqual(events, ['retry scheduled: attempt 2 of 2', 'banner shown', 'retry scheduled: attempt 2 of 2', 'second list waiting', 'sync answered 200']);
      assert.deepEqual(
        asked.map((p) => p.replace(/\?.*$/, '').replace(/^\/organisations\/\d+/, '')),
        ['/Employees', '/Employees', '/Employees/Employments', '/Employees/Employments'],
        'the other lists were not asked once the service could not be reached',
      );
      assert.equal(await page.locator('#staff-offline[data-retrying="true"]').count(), 0);
      assert.match(await banner.innerText(), /The employee service did not answer in time\./);
      assert.equal(await page.getByRole('button', { name: 'Try again now' }).count(), 0);
    } finally {
      for (const s of held) s.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
    assert.deepEqual(errors, []);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startAdminAgent } from '../helpers/admin';
import { launchBrowser } from '../helpers/browser';
import { freePort } from '../helpers/child-agent';

/**
 * A person using the status window near the end of its session renews it at once, not with the
 * window's next poll, which could come only after the session ended (renderer/src/api.ts, noteUse).
 * The session here is the shortest admin.sessionHours allows, so every use is near its end.
 */

const SESSION_KEY = 'pos-sync-agent.session';

describe('status window: a use near the session end', async () => {
  const t = await startAdminAgent({ admin: { port: await freePort(), sessionHours: 0.01 } });
  const { page } = await launchBrowser();

  it('renews the session at once, before the next poll', async () => {
    await page.goto(t.loginUrl);
    await page.locator('#summary-label').waitFor();
    const before = (await page.evaluate(`sessionStorage.getItem('${SESSION_KEY}')`)) as string;
    const used: string[] = [];
    page.on('request', (r) => {
      const u = new URL(r.url());
      if (u.pathname.startsWith('/api/') && r.headers()['x-pos-used'] === '1') used.push(u.pathname);
    });
    // Old enough to be renewed (a tenth of this session: src/admin/security.ts, renewAfterSeconds),
    // and past the whole second its value names.
    await new Promise((r) => setTimeout(r, 5000));
    const renewal = page.waitForResponse((r) => r.request().headers()['x-pos-used'] === '1');
    await page.keyboard.press('Shift');
    const res = await renewal;
    assert.equal(res.status(), 200);
    assert.equal(used[0], '/api/session', `the first request after the key renews the session itself: ${JSON.stringify(used)}`);
    const after = (await page.evaluate(`sessionStorage.getItem('${SESSION_KEY}')`)) as string;
    assert.ok(Number(after.split('.')[0]) > Number(before.split('.')[0]), `renewed: ${before} -> ${after}`);
  });
});

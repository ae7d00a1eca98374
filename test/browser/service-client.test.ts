import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import type { SiteConfig } from '../../src/config/site';
import { desktopMode, serviceLoginLink } from '../../src/electron/service-client';
import { launchBrowser } from '../helpers/browser';
import { freePort, startChildAgent, writeConfig, type ChildAgent } from '../helpers/child-agent';
import { tempDir } from '../helpers/fixtures';

/**
 * Client mode (issue 25) in real Chromium: the desktop app's "Open status window" asks the service
 * agent (a real `serve` on a scratch data folder) over its control socket for a one-time login link,
 * and the window opens signed in; the same link does not work a second time.
 */

describe('client mode: the login link from the service\'s channel, in Chromium', async () => {
  const dir = tempDir();
  const dataDir = path.join(dir, 'data');
  const config = writeConfig(dir, { dataDir, admin: { port: await freePort() }, webhook: { port: await freePort() }, backup: { enabled: false } });
  const site: SiteConfig = { file: config, source: 'machine', machine: true, defaultDataDir: dataDir };
  const mode = desktopMode(site, JSON.parse(fs.readFileSync(config, 'utf8')) as Record<string, unknown>, dataDir);
  if (mode.kind !== 'client') throw new Error('expected client mode');
  const agent: ChildAgent = await startChildAgent(config);
  after(() => agent.kill('SIGTERM'));
  const { context, page } = await launchBrowser();

  it('opens the service\'s window signed in, once', async () => {
    // As the desktop app asks (main.ts): the window's origin is the link's, drawn at the service's start.
    const link = await serviceLoginLink(mode.service, null, { actor: 'maria@till-pc' });
    assert.equal(link.kind, 'link');
    if (link.kind !== 'link') return;
    const origin = new URL(link.url).origin;
    assert.notEqual(`${origin}/`, mode.service.adminUrl, 'the window is at an address of its own, not the configured one');
    assert.equal(new URL(link.url).port, new URL(mode.service.adminUrl).port);
    await page.goto(link.url);
    await page.locator('#summary-label').waitFor();
    assert.equal(page.url(), `${origin}/`, 'the code leaves the address bar');
    // Signed in: the window reads the service's status (its API answers this tab's session).
    await page.locator('#summary-label', { hasText: /^(Check|Up to date|Attention|Paused)$/ }).waitFor();

    const again = await context.newPage();
    await again.goto(link.url);
    await again.getByText(/already been used/).waitFor();
    await again.close();

    const db = new Database(path.join(dataDir, 'agent.db'), { readonly: true });
    try {
      const rows = db.prepare("SELECT actor, action FROM audit_log WHERE action IN ('login-link', 'login') ORDER BY id").all() as { actor: string; action: string }[];
      assert.deepEqual(rows.map((r) => r.action), ['login-link', 'login'], 'the link handed out and the one sign-in');
      assert.equal(rows[0]!.actor, 'maria@till-pc (desktop app)');
    } finally {
      db.close();
    }
  });
});

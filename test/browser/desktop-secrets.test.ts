import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { SecretsBridge } from '../../src/admin/routes/secrets';
import { desktopSecretStore, safeStorageSecretsFile, secretSources } from '../../src/electron/safe-storage-secrets';
import { startAdminAgent, type RunningAdminAgent } from '../helpers/admin';
import { launchBrowser } from '../helpers/browser';
import { FakeSafeStorage } from '../helpers/fake-safe-storage';
import { tempDir } from '../helpers/fixtures';
import { type SecretName } from '../../src/config/secret-names';

/**
 * Setting secrets in the desktop app's status window, in Chromium. The bridge here does what the
 * shell's main process does with a secret-set message (main.ts onSecretSet): it stores the value in
 * the safeStorage store (a stand-in for Electron's, which needs a running Electron) and answers with
 * the sources. The supervision test (test/integration/electron) covers the channel itself.
 */

describe('desktop status window: secrets', { timeout: 120_000 }, async () => {
  const dataDir = tempDir();
  const configFile = path.join(dataDir, 'config.json');
  fs.writeFileSync(configFile, JSON.stringify({ dataDir }));
  const store = desktopSecretStore({ file: configFile }, new FakeSafeStorage(), { POS_SYNC_SECRET_TUNNEL_TOKEN: 'tunnel-from-env-123' });
  let restarts = 0;
  const bridge: SecretsBridge = {
    sources: () => secretSources(store),
    set: (name: SecretName, value: string | null) => {
      if (value === null) store.delete(name);
      else store.set(name, value);
      return Promise.resolve(secretSources(store));
    },
    restart: () => void restarts++,
  };
  const t: RunningAdminAgent = await startAdminAgent({ dataDir }, { admin: { shell: 'electron', secrets: bridge } });
  const headless: RunningAdminAgent = await startAdminAgent();
  const { page } = await launchBrowser();

  it('stores a secret typed in Settings encrypted, never shows it again, and offers the restart that applies it', async () => {
    await page.goto(t.loginUrl);
    await page.getByRole('tab', { name: 'Settings' }).click();
    const row = page.locator('[data-secret="webhook.bearerToken"]');
    await row.getByText('not set').waitFor();
    await page.getByLabel('Webhook token (head office sends it with every update)').fill('typed-in-window-4567');
    await row.getByRole('button', { name: 'Save' }).click();
    await row.getByText('set (stored encrypted)').waitFor();
    const file = fs.readFileSync(safeStorageSecretsFile(dataDir), 'utf8');
    assert.doesNotMatch(file, /typed-in-window/);
    assert.equal(store.get('webhook.bearerToken'), 'typed-in-window-4567');
    assert.equal(await page.getByLabel('Webhook token (head office sends it with every update)').inputValue(), '', 'the field is empty after saving');
    assert.doesNotMatch(await page.content(), /typed-in-window/);
    await page.getByRole('button', { name: 'Restart the agent now' }).click();
    await page.getByText('Restarting the agent').waitFor();
    assert.equal(restarts, 1);
  });

  it('a secret from an environment variable is shown as such, with nothing to type', async () => {
    const row = page.locator('[data-secret="tunnel.token"]');
    await row.getByText('set by POS_SYNC_SECRET_TUNNEL_TOKEN').waitFor();
    assert.equal(await row.locator('input').count(), 0);
  });

  it('removes a stored secret', async () => {
    const row = page.locator('[data-secret="webhook.bearerToken"]');
    await row.getByRole('button', { name: 'Remove' }).click();
    await row.getByText('not set').waitFor();
    assert.equal(store.get('webhook.bearerToken'), null);
  });

  it('the API refuses a change from another site and a value for an environment secret', async () => {
    const cross = await fetch(`${t.adminUrl}api/secrets/webhook.bearerToken`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json', origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' },
      body: JSON.stringify({ value: 'from-a-web-page' }),
    });
    assert.equal(cross.status, 403);
    assert.equal(store.get('webhook.bearerToken'), null);
    const envSecret = await page.evaluate(async () => {
      // The window's own session, as its script sends it (renderer/src/api.ts).
      const storage = (globalThis as unknown as { sessionStorage: { getItem(key: string): string | null } }).sessionStorage;
      const authorization = `Session ${storage.getItem('pos-sync-agent.session') ?? ''}`;
      const session = (await (await fetch('/api/session', { headers: { authorization } })).json()) as { csrfToken: string; csrfHeader: string };
      const res = await fetch('/api/secrets/tunnel.token', { method: 'PUT', headers: { authorization, 'content-type': 'application/json', [session.csrfHeader]: session.csrfToken }, body: JSON.stringify({ value: 'x'.repeat(20) }) });
      return { status: res.status, body: (await res.json()) as { error: { id: string } } };
    });
    assert.deepEqual([envSecret.status, envSecret.body.error.id], [409, 'secret_from_environment']);
  });

  it('a headless agent has no secrets API and no card (there `secrets set` writes the owner-only file)', async () => {
    const res = await fetch(`${headless.adminUrl}api/secrets`, { headers: { authorization: `Bearer ${headless.token}` } });
    assert.equal(res.status, 404);
    await page.goto(headless.loginUrl);
    await page.getByRole('tab', { name: 'Settings' }).click();
    await page.getByLabel('Address', { exact: true }).waitFor();
    assert.equal(await page.locator('#secrets-settings').count(), 0);
  });
});

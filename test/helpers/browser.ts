import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after } from 'node:test';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Debian's Chromium (installed by .ci/run); playwright cannot download its own browser here. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Headless Chromium at the status window's target size, with a fresh profile, closed and removed when
 * the test file ends. The flags keep it from calling out to the network.
 */
export async function launchBrowser(): Promise<{ context: BrowserContext; page: Page }> {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pos-sync-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 800 },
    locale: 'en-GB',
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  after(async () => {
    await context.close();
    fs.rmSync(userDataDir, { recursive: true, force: true });
  });
  return { context, page: context.pages()[0] ?? (await context.newPage()) };
}

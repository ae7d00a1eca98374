import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { startAdminAgent } from '../helpers/admin';
import { launchBrowser } from '../helpers/browser';
import { REPO_ROOT } from '../helpers/child-agent';
import { sampleBodies } from '../helpers/fixtures';

/**
 * History a manager can read: the window asks the person's name once per window session and records
 * it with each action; the Activity view and `pos-sync-agent audit` (a real process) list who did what.
 */

const ARTIFACTS = path.resolve(__dirname, '..', '..', 'test-artifacts', 'browser');
const BIN = path.join(REPO_ROOT, 'bin', 'pos-sync-agent.cjs');
const NAME = 'Zoë Ó Brien';

describe('activity: who did what', { timeout: 120_000 }, async () => {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const t = await startAdminAgent({ admin: { liveCheckMs: 200 } });
  const [first] = sampleBodies();
  assert.equal((await t.post(first!.raw)).status, 200);
  await t.settle();
  const { page }: { page: Page } = await launchBrowser();

  it('asks the name once per window session, and records it with each action', async () => {
    await page.goto(t.loginUrl);
    await page.locator('#person-ask').waitFor();
    await page.getByLabel('Your name').fill(NAME);
    await page.getByRole('button', { name: 'Save' }).click();
    assert.equal(await page.locator('#person-current').innerText(), NAME);
    assert.equal(await page.locator('#person-ask').isHidden(), true);
    await page.getByRole('button', { name: 'Pause applying' }).click();
    await page.getByRole('dialog', { name: 'Pause applying updates?' }).getByRole('button', { name: 'Pause now' }).click();
    await page.getByRole('button', { name: 'Resume applying' }).waitFor();
    await page.getByRole('button', { name: 'Resume applying' }).click();
    await page.getByRole('button', { name: 'Pause applying' }).waitFor();
    // A reload is the same window session: not asked again.
    await page.reload();
    await page.locator('[data-location="3021"]').waitFor();
    assert.equal(await page.locator('#person-ask').isHidden(), true);
    assert.equal(await page.locator('#person-current').innerText(), NAME);
    const rows = t.agent.core.agentDb.prepare("SELECT actor, action FROM audit_log WHERE action IN ('pause', 'resume') ORDER BY id").all() as { actor: string; action: string }[];
    assert.deepEqual(rows.map((r) => r.action), ['pause', 'resume']);
    for (const r of rows) assert.match(r.actor, new RegExp(`^${NAME} \\(status window on .+\\)$`));
  });

  it('lists who did what in the Activity view', async () => {
    await page.getByRole('tab', { name: 'Activity' }).click();
    const table = page.locator('#activity-table tbody tr');
    await table.first().waitFor();
    const texts = await table.allInnerTexts();
    assert.match(texts[0]!, new RegExp(`\\d\\d:\\d\\d\\s+${NAME}\\s+Resumed applying updates\\.`));
    assert.match(texts[1]!, new RegExp(`${NAME}\\s+Paused applying updates\\.`));
    assert.ok(texts.some((x) => /Opened the status window \(signed in\)\./.test(x)), texts.join('\n'));
    await page.screenshot({ path: path.join(ARTIFACTS, 'activity-01.png') });
  });

  it('prints the same records with `pos-sync-agent audit` and --json', async () => {
    const configFile = path.join(t.config.dataDir, '..', 'audit-config.json');
    fs.writeFileSync(configFile, JSON.stringify({ dataDir: t.config.dataDir }));
    const text = spawnSync(process.execPath, [BIN, 'audit', '--config', configFile], { encoding: 'utf8' });
    assert.equal(text.status, 0, text.stderr);
    assert.ok(text.stdout.includes(t.config.dataDir), 'the data folder is named');
    assert.match(text.stdout, /\nAudit log \(newest first\):\n/);
    assert.match(text.stdout, new RegExp(`${NAME} \\(status window on [^)]+\\): Resumed applying updates\\.`));
    const json = JSON.parse(spawnSync(process.execPath, [BIN, 'audit', '--json', '--limit', '2', '--config', configFile], { encoding: 'utf8' }).stdout) as { records: { person: string; action: string; text: string }[] };
    assert.deepEqual(json.records.map((r) => [r.person, r.action]), [[NAME, 'resume'], [NAME, 'pause']]);
    const bad = spawnSync(process.execPath, [BIN, 'audit', '--since', '25/11/2026', '--config', configFile], { encoding: 'utf8' });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--since takes a date as YYYY-MM-DD/);
  });
});

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import type { Page } from 'playwright-core';
import { storeFilePath } from '../../src/store/database';
import { launchBrowser } from '../helpers/browser';
import { freePort, runCli, startChildAgent, writeConfig, type ChildAgent, type CliResult } from '../helpers/child-agent';
import { item, price, schedule, tempDir, update } from '../helpers/fixtures';

/**
 * A restart says what it resumes (issue 27: "a restart resumes silently"). A real `serve` is killed
 * inside the apply of a large update (the test-only crash hook, src/crash-points.ts, as in
 * test/faults/apply-crash.test.ts) with a second update queued behind it. Then:
 * - `status` without an agent says the apply was cut short and is redone at the next start;
 * - the next `serve` says at start that it resumes, and `status` and the window (Chromium) say the
 *   same sentence until the update is applied; then none of them says it any more.
 * To check "until done" without racing the apply, the next start is paused (it says it resumes when
 * applying resumes), and once applying resumes the test holds the till file's write lock while it
 * looks (the apply waits for it, as it would for any other writer), and lets go after.
 */

const ITEMS = 3_000;

function bigUpdate(sequence: number, parent: number): Buffer {
  const items = Array.from({ length: ITEMS }, (_, i) =>
    item(String(10_000 + i), `IT-${i}`, [price('2026-12-01', '2027-12-31', 'Eat In', '3.50'), price('2026-12-01', '2027-12-31', 'Take Away', '3.10')], [schedule('2026-12-01', '2027-12-31', 'Lunch')]),
  );
  return Buffer.from(JSON.stringify(update(42, sequence, parent, items)));
}

const cli = (config: string, args: string[]): CliResult => runCli(config, args, { timeoutMs: 120_000 });

async function until(what: string, check: () => boolean | Promise<boolean>, output: () => string = () => ''): Promise<void> {
  for (let i = 0; ; i++) {
    if (await check()) return;
    // No timing threshold: the test's own timeout ends a wait that never comes; this only says what.
    if (i % 400 === 399) process.stderr.write(`still waiting for ${what}\n${output()}\n`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const RESUMING = 'Resuming: applying update 42:100 again (the agent stopped during it), then 1 queued update.';
const RESUMING_PAUSED = 'Resuming when applying resumes: update 42:100 is applied again (the agent stopped during it), then 1 queued update.';

describe('a restart says what it resumes', { timeout: 300_000 }, async () => {
  const dir = tempDir();
  const dataDir = path.join(dir, 'data');
  // A fixed admin port (a free one): `admin-url` makes the window's login link for it.
  const config = writeConfig(dir, { dataDir, webhook: { port: 0 }, admin: { port: await freePort() }, sync: { baselineSettleSeconds: 0, pollIntervalMs: 200 } });
  const running: ChildAgent[] = [];
  after(async () => {
    for (const a of running) await a.kill('SIGKILL');
  });

  it('status says an apply was cut short while no agent runs', async () => {
    // The crash hook kills the process inside the till file's transaction of update 100, after this many rows.
    const doomed = await startChildAgent(config, { POS_SYNC_TEST_CRASH_AT: 'apply-row:2000' });
    running.push(doomed);
    // Both stored while paused, so that 101 is queued behind 100 when the agent dies.
    assert.equal(cli(config, ['pause', '--reason', 'test']).status, 0);
    for (const [seq, parent] of [
      [100, 99],
      [101, 100],
    ] as const) {
      const res = await fetch(doomed.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bigUpdate(seq, parent) });
      assert.equal(res.status, 200);
    }
    const died = new Promise<string | null>((resolve) => doomed.child.once('exit', (_code, signal) => resolve(signal)));
    assert.equal(cli(config, ['resume']).status, 0);
    assert.equal(await died, 'SIGKILL', 'the crash hook fired inside the apply');

    const s = cli(config, ['status']);
    assert.match(s.stdout, /Interrupted: the agent stopped while applying update 42:100; it applies it again, from the start, when it starts\./, s.stdout);
    const json = JSON.parse(cli(config, ['status', '--json']).stdout) as { resuming: unknown; locations: { lastChangeSequence: number | null }[] };
    assert.deepEqual(json.resuming, { interrupted: { locationId: 42, changeSequence: 100 }, queued: 0, since: (json.resuming as { since: string }).since });
    assert.equal(json.locations[0]!.lastChangeSequence, null, 'nothing of the cut-short apply is on the till');
  });

  it('the next start says it resumes, and status and the window say so until the update is applied', async () => {
    // Paused before the start, so the resume waits for the test to look: the start says so in its
    // paused form, then `resume` lets the apply run.
    assert.equal(cli(config, ['pause', '--reason', 'look first']).status, 0);
    const agent = await startChildAgent(config);
    running.push(agent);
    // Said at start, in the log (stderr and agent.log), before anything is applied.
    await until('the start-up line', () => agent.output().includes(RESUMING_PAUSED), agent.output);
    const paused = cli(config, ['status']);
    assert.ok(paused.stdout.includes(RESUMING_PAUSED), paused.stdout);

    const link = /(http:\/\/\S+\?login=\S+)/.exec(cli(config, ['admin-url']).stdout)![1]!;
    const { page }: { page: Page } = await launchBrowser();
    await page.goto(link);
    const reason = page.locator('[data-reason="resuming"]');
    await page.locator('[data-reason="resuming"]', { hasText: RESUMING_PAUSED }).waitFor({ state: 'attached' });

    // Hold the till file's write lock, then resume applying: the apply waits for the lock (and tries
    // again), so what status and the window say during it can be read without racing it.
    const holder = new Database(storeFilePath(dataDir, 'till'));
    holder.exec('BEGIN IMMEDIATE');
    let held = true;
    const release = (): void => {
      if (!held) return;
      holder.exec('ROLLBACK');
      holder.close();
      held = false;
    };
    after(release);
    assert.equal(cli(config, ['resume']).status, 0);
    const during = cli(config, ['status']);
    assert.ok(during.stdout.includes(RESUMING), during.stdout);
    await page.locator('[data-reason="resuming"]', { hasText: RESUMING }).waitFor({ state: 'attached' });
    // The location's card says it about its own update; the header shows it when nothing else needs saying.
    await page.locator('#panel-status').getByText('Resuming: applying update 42:100 again (the agent stopped during it).').first().waitFor();
    assert.ok((await page.locator('#summary-text').innerText()) === RESUMING || (await page.locator('#reasons').isVisible()), 'the headline or the list of reasons shows it');

    release();
    await until('both updates applied', () => (JSON.parse(cli(config, ['status', '--json']).stdout) as { locations: { lastChangeSequence: number | null }[] }).locations[0]?.lastChangeSequence === 101, agent.output);
    await until('the agent to finish resuming', () => agent.output().includes('finished resuming what the agent left when it stopped'), agent.output);
    const afterwards = cli(config, ['status']);
    assert.doesNotMatch(afterwards.stdout, /Resuming|Interrupted/, afterwards.stdout);
    assert.equal((JSON.parse(cli(config, ['status', '--json']).stdout) as { resuming: unknown }).resuming, null);
    await reason.waitFor({ state: 'detached' });
    assert.doesNotMatch(await page.locator('#panel-status').innerText(), /Resuming/);
    assert.doesNotMatch(await page.locator('#summary-text').innerText(), /Resuming/);
    const logFile = fs.readFileSync(path.join(dataDir, 'logs', 'agent.log'), 'utf8');
    assert.ok(logFile.includes(RESUMING_PAUSED), 'the start-up line is in agent.log');
    await agent.kill('SIGINT');
  });
});

import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { waitFor } from '../../src/dev/child-agent';
import { startChildAgent, writeConfig } from '../helpers/child-agent';

/**
 * What `pos-sync-agent serve` loads on its main thread, as a site runs it (bin/ and the build in
 * dist/): modules the running agent does not need are a resident cost of every idle agent (issue 29,
 * docs/performance.md). prom-client is loaded only with a metrics token; express and the developer
 * tools' HTTP stack not at all.
 */
const PROBE = path.join(__dirname, '..', 'helpers', 'loaded-modules-probe.cjs');
const METRICS_TOKEN = 'serve-modules-metrics-token-0123456789';

async function packagesLoadedBy(config: Record<string, unknown>, whileRunning?: (adminUrl: string) => Promise<void>): Promise<string[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'serve-modules-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const list = path.join(dir, 'loaded.txt');
  const file = writeConfig(dir, { dataDir: path.join(dir, 'data'), webhook: { port: 0 }, admin: { port: 0 }, ...config });
  const agent = await startChildAgent(file, { NODE_OPTIONS: `--require ${JSON.stringify(PROBE)}`, POS_SYNC_LOADED_MODULES_FILE: list });
  try {
    await waitFor('the status window', () => /status window at http:\/\/127\.0\.0\.1:\d+\//.test(agent.output()), 20_000);
    await whileRunning?.(/status window at (http:\/\/127\.0\.0\.1:\d+\/)/.exec(agent.output())![1]!);
    agent.child.kill('SIGUSR2');
    await waitFor('the probe to write what serve loaded', () => fs.existsSync(list), 20_000);
    return fs.readFileSync(list, 'utf8').split('\n').filter(Boolean);
  } finally {
    await agent.kill('SIGTERM');
  }
}

describe('modules serve loads on its main thread', () => {
  it('without a metrics token: neither prom-client nor express', async () => {
    const loaded = await packagesLoadedBy({});
    // The probe itself works: what every serve needs is in the list.
    for (const needed of ['better-sqlite3', 'zod', 'router']) assert.ok(loaded.includes(needed), `${needed} missing from ${loaded.join(', ')}`);
    for (const unwanted of ['prom-client', 'express', 'body-parser', 'serve-static']) assert.ok(!loaded.includes(unwanted), `serve loaded ${unwanted}`);
  });

  it('with a metrics token: prom-client, loaded when the agent starts, and GET /metrics answers', async () => {
    const loaded = await packagesLoadedBy({ metrics: { bearerToken: METRICS_TOKEN } }, async (adminUrl) => {
      const res = await fetch(`${adminUrl}metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      assert.equal(res.status, 200);
      assert.match(await res.text(), /^# HELP pos_sync_/m);
    });
    assert.ok(loaded.includes('prom-client'), `prom-client missing from ${loaded.join(', ')}`);
    assert.ok(!loaded.includes('express'), 'serve loaded express');
  });
});

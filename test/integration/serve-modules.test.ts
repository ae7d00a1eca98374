import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { waitFor } from '../../src/dev/child-agent';
import { REPO_ROOT, startChildAgent, writeConfig } from '../helpers/child-agent';

/**
 * What `pos-sync-agent serve` loads on its main thread, as a site runs it (bin/ and the build in
 * dist/): modules the running agent does not need, and every file it loads, are a resident cost of
 * every idle agent (issue 29, docs/performance.md). The agent's own code and the packages bundled with
 * it come as one file, dist/agent/cli.js (scripts/bundle-agent.mjs; what it holds is checked by
 * test/unit/packaging/agent-bundle.test.ts); prom-client is loaded only with a metrics token; express and
 * the developer tools' HTTP stack not at all.
 */
const PROBE = path.join(__dirname, '..', 'helpers', 'loaded-modules-probe.cjs');
const METRICS_TOKEN = 'serve-modules-metrics-token-0123456789';

interface Loaded {
  /** Packages loaded from node_modules. */
  readonly packages: string[];
  /** Every other file loaded, relative to the checkout. */
  readonly own: string[];
}

async function loadedBy(config: Record<string, unknown>, whileRunning?: (adminUrl: string) => Promise<void>): Promise<Loaded> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'serve-modules-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const list = path.join(dir, 'loaded.txt');
  const file = writeConfig(dir, { dataDir: path.join(dir, 'data'), webhook: { port: 0 }, admin: { port: 0 }, ...config });
  const agent = await startChildAgent(file, { NODE_OPTIONS: `--require ${JSON.stringify(PROBE)}`, POS_SYNC_LOADED_MODULES_FILE: list });
  try {
    await waitFor('the status window', () => /status window at http:\/\/127\.\d+\.\d+\.\d+:\d+\//.test(agent.output()), 20_000);
    await whileRunning?.(/status window at (http:\/\/127\.\d+\.\d+\.\d+:\d+\/)/.exec(agent.output())![1]!);
    agent.child.kill('SIGUSR2');
    await waitFor('the probe to write what serve loaded', () => fs.existsSync(list), 20_000);
    const lines = (file: string): string[] => fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
    return { packages: lines(list), own: lines(`${list}.own`).map((f) => path.relative(REPO_ROOT, f).split(path.sep).join('/')) };
  } finally {
    await agent.kill('SIGTERM');
  }
}

describe('modules serve loads on its main thread', () => {
  it('without a metrics token: the bundle and better-sqlite3, neither prom-client nor express', async () => {
    const { packages, own } = await loadedBy({});
    // The probe itself works: what every serve needs is in the lists.
    assert.ok(packages.includes('better-sqlite3'), `better-sqlite3 missing from ${packages.join(', ')}`);
    for (const unwanted of ['prom-client', 'express', 'body-parser', 'serve-static', 'zod', 'router']) assert.ok(!packages.includes(unwanted), `serve loaded ${unwanted} from node_modules`);
    // The agent's own code: bin/'s two files, the flags module bin/ loads first, and the command's
    // bundle (the malloc settings module is loaded only before bin/ starts serve again, on Linux).
    assert.deepEqual(own, ['bin/node-version.cjs', 'bin/pos-sync-agent.cjs', 'dist/agent/cli.js', 'dist/src/threads/agent-v8-flags.js']);
  });

  it('with a metrics token: prom-client, loaded when the agent starts, and GET /metrics answers', async () => {
    const { packages: loaded } = await loadedBy({ metrics: { bearerToken: METRICS_TOKEN } }, async (adminUrl) => {
      const res = await fetch(`${adminUrl}metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      assert.equal(res.status, 200);
      assert.match(await res.text(), /^# HELP pos_sync_/m);
    });
    assert.ok(loaded.includes('prom-client'), `prom-client missing from ${loaded.join(', ')}`);
    assert.ok(!loaded.includes('express'), 'serve loaded express');
  });
});

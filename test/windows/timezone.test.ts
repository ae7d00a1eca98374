import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { laneDir, lastSequence, post, sample } from './lane';
import { REPO_ROOT, runWindows, startAgent, waitFor, winPath, writeWindowsConfig } from './wine';

/**
 * This PC's timezone on Windows, as a Windows process of Node reads it: from the registry's
 * TimeZoneKeyName through CLDR's mapping (src/clock.ts), the answer Intl gives, and without building
 * an ICU formatter in a running agent (test/integration/serve-icu.test.ts says why it matters). TZ is
 * not passed on: a Windows PC has none, and both readings would take it first. Wine names one zone,
 * the one it finds for this machine's own timezone, in its registry and to ICU alike: the mapping of
 * every other name is held to CLDR's data by test/unit/domain/windows-zones.test.ts.
 */
const CLOCK = winPath(path.join(REPO_ROOT, 'dist', 'src', 'clock.js'));
const PROBE = winPath(path.join(REPO_ROOT, 'test', 'helpers', 'icu-probe.cjs'));

describe('Windows: this PC’s timezone', () => {
  const work = laneDir('timezone');
  const out = { outDir: path.join(work, 'out'), unset: ['TZ'] };

  it('is read from the registry, and is the zone Intl reads', async () => {
    const script = `const { machineTimezone } = require(${JSON.stringify(CLOCK)});
      const ours = machineTimezone();
      process.stdout.write(JSON.stringify({ ours, intl: Intl.DateTimeFormat().resolvedOptions().timeZone, tz: process.env.TZ ?? null }));`;
    const r = await runWindows(['-e', script], out);
    assert.equal(r.code, 0, r.stderr);
    const { ours, intl, tz } = JSON.parse(r.stdout) as { ours: string; intl: string; tz: string | null };
    assert.equal(tz, null);
    assert.equal(ours, intl);
  });

  it('a running agent builds no ICU formatter from its start through an apply', async () => {
    const dataDir = path.join(work, 'data');
    const calls = path.join(work, 'icu-calls.txt');
    const config = writeWindowsConfig(path.join(work, 'site.json'), { dataDir: winPath(dataDir), webhook: { port: 0 }, admin: { port: 0 }, sync: { pollIntervalMs: 200, baselineSettleSeconds: 0 } });
    const agent = await startAgent(config, dataDir, { ...out, env: { NODE_OPTIONS: `--require ${JSON.stringify(PROBE)}`, POS_SYNC_ICU_CALLS_FILE: winPath(calls) } });
    try {
      assert.equal((await post(agent.url, sample(1))).status, 200);
      await waitFor('the apply', () => lastSequence(dataDir, 3021) !== null, 60_000);
    } finally {
      await agent.stop();
    }
    const recorded = fs.existsSync(calls) ? fs.readFileSync(calls, 'utf8') : '';
    assert.equal(recorded, '', `the running agent used ICU:\n${recorded}`);
    // The probe works under Wine: Intl in the same kind of process is recorded.
    const seen = path.join(work, 'icu-seen.txt');
    await runWindows(['-e', 'Intl.DateTimeFormat().resolvedOptions()'], { ...out, env: { NODE_OPTIONS: `--require ${JSON.stringify(PROBE)}`, POS_SYNC_ICU_CALLS_FILE: winPath(seen) } });
    assert.match(fs.readFileSync(seen, 'utf8'), /Intl\.DateTimeFormat/);
  });
});

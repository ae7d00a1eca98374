import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { statusMemory } from '../../bench/peak-sampler';
import { spawnAgent, writeConfig } from '../../src/dev/child-agent';
import { tempDir } from '../helpers/fixtures';

/**
 * The benches read an agent's peak RSS from the child agent's `stats`. It used getrusage's maxRSS,
 * which on Linux also counts the RSS of the process that spawned the agent as it was when it forked:
 * the bench, holding the L publication, was read as the agent's peak. The peak is now the process's
 * own (VmHWM), whatever its spawner holds.
 */

const HELD_BYTES = 600e6;

describe("the child agent's peak RSS", { skip: process.platform !== 'linux' && 'reads /proc (Linux)' }, () => {
  it('is its own, not the RSS of the process that spawned it', { timeout: 60_000 }, async () => {
    // Resident in this process when the agent is spawned (filled, so every page is touched).
    const held = Buffer.alloc(HELD_BYTES, 1);
    const spawnerRss = process.memoryUsage().rss;
    assert.ok(spawnerRss > HELD_BYTES, `this process holds ${spawnerRss} bytes`);
    const dir = tempDir('child-peak-');
    const dataDir = path.join(dir, 'data');
    const agent = await spawnAgent(writeConfig(dir, { dataDir, webhook: { port: 0 }, admin: { enabled: false } }));
    try {
      const before = statusMemory(agent.pid).highWaterBytes;
      const stats = await agent.stats();
      const after = statusMemory(agent.pid).highWaterBytes;
      assert.ok(stats.maxRssBytes >= before && stats.maxRssBytes <= after, `peak ${stats.maxRssBytes} is the agent's VmHWM (${before}..${after})`);
      assert.ok(stats.maxRssBytes >= stats.rssBytes, 'the peak is at least the RSS now');
      assert.ok(stats.maxRssBytes < HELD_BYTES, `peak ${stats.maxRssBytes} is below what the spawner held (${spawnerRss})`);
    } finally {
      await agent.stop();
    }
    assert.equal(held[HELD_BYTES - 1], 1);
  });
});

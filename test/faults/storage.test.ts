import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { encode, generateChains, planDeliveries, postOnce, Prng, referenceFor, runDeliveries, type DeliveryPlan, type LocationChain, type RunReport } from '../../src/dev/publisher';
import { tempDir } from '../helpers/fixtures';
import { checkEndState, reachedExpected } from './helpers';
import { sleep, spawnAgent, waitFor, writeConfig, type ChildAgent, type SpawnOptions } from '../../src/dev/child-agent';

/**
 * Storage faults: the disk fills up, fsync or write fails. While the agent cannot store, it must
 * answer 503 (never 200), keep serving, and once the fault clears, the sender's own retries must
 * complete every chain with nothing lost, nothing applied twice and a database that passes
 * integrity_check.
 */
const SEED = Number(process.env.FAULT_SEED ?? 777);

/** Writes `file` until the file system is full, then truncates it by `leaveBytes`; returns its size. */
function fillUntilFull(file: string, leaveBytes: number): number {
  const chunk = Buffer.alloc(256 * 1024);
  const fd = fs.openSync(file, 'w');
  let size = 0;
  try {
    for (;;) {
      try {
        size += fs.writeSync(fd, chunk);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
        // A chunk that did not fit whole: fill the rest a page at a time.
        const page = Buffer.alloc(4096);
        for (;;) {
          try {
            size += fs.writeSync(fd, page);
          } catch (inner) {
            if ((inner as NodeJS.ErrnoException).code !== 'ENOSPC') throw inner;
            break;
          }
        }
        break;
      }
    }
    size = Math.max(0, size - leaveBytes);
    fs.ftruncateSync(fd, size);
    return size;
  } finally {
    fs.closeSync(fd);
  }
}

function chainsFor(seed: number): LocationChain[] {
  return generateChains({
    seed,
    locations: 3,
    updatesPerLocation: 25,
    itemsPerLocation: 120,
    tariffs: 3,
    mealPeriods: 3,
    rangesPerKey: 3,
    startDate: '2026-12-01',
    days: 60,
    editItems: [2, 8],
    currencies: ['GBP', 'EUR', 'JPY'],
  });
}

function firstPublications(chains: readonly LocationChain[]): DeliveryPlan {
  return { deliveries: chains.map((c) => ({ update: c.updates[0]!, copy: 0, delayMs: 0 })), dropped: [] };
}

function edits(chains: readonly LocationChain[], rng: Prng): DeliveryPlan {
  const rest = chains.map((c) => ({ ...c, updates: c.updates.slice(1) }));
  return planDeliveries(rest, { reorderWindow: 3, duplicate: 0.2, delayMs: [0, 40], firstPublicationFirst: false }, rng);
}

interface FaultRun {
  readonly agent: ChildAgent;
  readonly dataDir: string;
  /** Turn the fault on; resolves once it is on. */
  readonly inject: (agent: ChildAgent) => Promise<void>;
  readonly clear: (agent: ChildAgent) => Promise<void>;
}

/**
 * The common script: first publications stored and applied while healthy; fault on; the edits are
 * delivered with retries; the agent must refuse with 503 and stay up; fault off; everything completes.
 */
async function runWithFault(name: string, setup: () => Promise<FaultRun>): Promise<void> {
  const chains = chainsFor(SEED);
  const expected = referenceFor(chains).state();
  const { agent, dataDir, inject, clear } = await setup();
  const endpoint = { url: agent.url, timeoutMs: 20_000 };
  const retry = { baseDelayMs: 20, maxDelayMs: 250, factor: 2, deadlineMs: 90_000 };
  try {
    const first = await runDeliveries(endpoint, firstPublications(chains), { retry, concurrency: 3 });
    assert.equal(first.failed.length, 0, 'first publications stored while healthy');
    await waitFor('first publications applied', () => [...chains].every((c) => lastSequenceOf(dataDir, c.locationId) === c.updates[0]!.changeSequence), 20_000);

    await inject(agent);
    const during: Record<string, number> = {};
    let faultOn = true;
    const ackedDuringFault: number[] = [];
    const run = runDeliveries(endpoint, edits(chains, new Prng(SEED).fork(2)), {
      retry,
      concurrency: 4,
      seed: SEED,
      onAttempt: (_d, r) => {
        if (faultOn) during[String(r.status)] = (during[String(r.status)] ?? 0) + 1;
      },
      onOutcome: (d, o) => {
        if (faultOn && o.acked) ackedDuringFault.push(d.update.changeSequence);
      },
    });
    const faultStarted = Date.now();
    // Held long enough for the applier's retries (every pollIntervalMs) to meet the fault too.
    await waitFor(`${name}: the agent refusing deliveries with 503`, () => (during['503'] ?? 0) >= 15 && Date.now() - faultStarted > 1500, 30_000).catch((err: unknown) => {
      throw new Error(`${(err as Error).message}; statuses so far ${JSON.stringify(during)}; agent stderr: ${agent.stderr().slice(-1500)}`);
    });
    // Still serving while it cannot store.
    const health = await fetch(new URL('/healthz', agent.url));
    assert.equal(health.status, 200, 'the agent keeps answering while storage fails');
    assert.equal(agent.process.exitCode, null, 'the agent did not exit');
    await clear(agent);
    faultOn = false;
    const report: RunReport = await run;
    assert.equal(report.failed.length, 0, `${name}: deliveries never completed after the fault cleared: ${report.failed.map((f) => f.outcome.lastError).join('; ')}`);
    await waitFor(`${name}: every chain applied to its end`, () => reachedExpected(dataDir, expected), 30_000, 100);
    const code = await agent.stop();
    assert.equal(code, 0, `agent did not stop cleanly: ${agent.stderr().slice(-2000)}`);

    const end = checkEndState(dataDir, expected, [...first.acked, ...report.acked]);
    process.stdout.write(`# ${name}: during the fault ${JSON.stringify(during)}; after: ${JSON.stringify(report.statusCounts)}; inbox ${JSON.stringify(end.inboxStates)}\n`);
    assert.ok(!Object.keys(during).some((s) => s.startsWith('5') && s !== '503'), `only 503 while storage fails: ${JSON.stringify(during)}`);
    assert.equal(end.integrity, 'ok');
    assert.deepEqual(end.missingAcks, [], 'a delivery answered 200 is missing from the inbox: the agent said 200 without storing');
    assert.equal(end.duplicateInboxRows, 0);
    assert.deepEqual(Object.keys(end.inboxStates), ['applied'], JSON.stringify(end.inboxStates));
    assert.deepEqual(end.differences, []);
  } finally {
    if (agent.process.exitCode === null && agent.process.signalCode === null) await agent.kill();
  }
}

function lastSequenceOf(dataDir: string, locationId: number): number | null {
  const Database = require('better-sqlite3') as typeof import('better-sqlite3');
  const db = new Database(path.join(dataDir, 'pos-sync.db'), { readonly: true, fileMustExist: true });
  try {
    const row = db.prepare('SELECT last_change_sequence AS s FROM locations WHERE location_id = ?').get(locationId) as { s: number | null } | undefined;
    return row?.s ?? null;
  } finally {
    db.close();
  }
}

function configIn(dataDir: string, configDir = dataDir): string {
  return writeConfig(configDir, { dataDir, webhook: { port: 0 }, admin: { enabled: false }, sync: { pollIntervalMs: 200, baselineSettleSeconds: 0 } });
}

async function startAgent(dataDir: string, options: SpawnOptions = {}, configDir = dataDir): Promise<ChildAgent> {
  return spawnAgent(configIn(dataDir, configDir), options);
}

function hasCommand(name: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${name}`]).status === 0;
}

describe('storage faults', () => {
  it('disk full (max_page_count): 503 while full, recovers when space returns', { timeout: 180_000 }, async () => {
    await runWithFault('disk full (max_page_count)', async () => {
      const dataDir = tempDir('pos-sync-full-');
      const agent = await startAgent(dataDir);
      return {
        agent,
        dataDir,
        // agent.db (where the receiver writes) capped at its current size: SQLite clamps a smaller
        // max_page_count to the pages in use (WAL included), so the next new page fails with SQLITE_FULL.
        inject: async (a) => {
          await a.setMaxPageCount(1);
        },
        clear: async (a) => {
          await a.setMaxPageCount(1_073_741_823);
        },
      };
    });
  });

  it('disk full (a real, tiny tmpfs): 503 while full, recovers when space returns', { timeout: 180_000 }, async (t: TestContext) => {
    const mountPoint = tempDir('pos-sync-tmpfs-');
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=24m', 'tmpfs', mountPoint], { stdio: 'pipe' });
    } catch (err) {
      // Root can mount a tmpfs (CI runs as root); elsewhere say so instead of passing.
      assert.fail(`cannot mount a tmpfs here (${(err as Error).message.split('\n')[0]}): run the suite as root, as CI does`);
    }
    t.diagnostic(`tmpfs mounted at ${mountPoint}`);
    const filler = path.join(mountPoint, 'filler.bin');
    try {
      await runWithFault('disk full (tmpfs)', async () => {
        const dataDir = path.join(mountPoint, 'data');
        const agent = await startAgent(dataDir, {}, tempDir('pos-sync-tmpfs-config-'));
        return {
          agent,
          dataDir,
          inject: async () => {
            // Fill what is left, but for a few KiB, so the next commits hit ENOSPC. The agent may
            // still be writing (WAL, checkpoint, log) while we fill, so a size read beforehand can be
            // stale: write until the file system says ENOSPC, then give back the few KiB.
            t.diagnostic(`filler: ${fillUntilFull(filler, 8 * 1024)} bytes`);
          },
          clear: async () => {
            fs.rmSync(filler, { force: true });
          },
        };
      });
    } finally {
      spawnSync('umount', ['-l', mountPoint]);
    }
  });

  it('disk full while a large body is written to its own file: 503, and the webhook thread stays up', { timeout: 120_000 }, async (t: TestContext) => {
    const mountPoint = tempDir('pos-sync-tmpfs-');
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', mountPoint], { stdio: 'pipe' });
    } catch (err) {
      assert.fail(`cannot mount a tmpfs here (${(err as Error).message.split('\n')[0]}): run the suite as root, as CI does`);
    }
    const filler = path.join(mountPoint, 'filler.bin');
    let agent: ChildAgent | null = null;
    try {
      const dataDir = path.join(mountPoint, 'data');
      // Its log on stderr: a restart of the webhook thread is said there.
      agent = await startAgent(dataDir, { env: { CHILD_AGENT_LOG: '1' } }, tempDir('pos-sync-tmpfs-config-'));
      t.diagnostic(`filler: ${fillUntilFull(filler, 64 * 1024)} bytes`);
      // Over webhook.fileBodyFromBytes: streamed to a file of its own, which the full disk stops.
      const [chain] = generateChains({ seed: SEED, locations: 1, updatesPerLocation: 1, itemsPerLocation: 400, tariffs: 3, mealPeriods: 3, scheduling: 'all', rangesPerKey: 12, startDate: '2026-12-01', days: 365 });
      const body = encode(chain!.updates[0]!);
      assert.ok(body.length > 1024 * 1024, `the body is ${body.length} bytes`);
      // 503 as soon as the file cannot be written; the sender may still be sending, and may see the
      // connection closed under it instead: either way nothing was stored, and it sends again.
      const outcomes: string[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await postOnce({ url: agent.url, timeoutMs: 20_000 }, Buffer.from(body));
        outcomes.push(r.status === null ? 'closed' : String(r.status));
      }
      t.diagnostic(`while full: ${outcomes.join(', ')}`);
      assert.ok(outcomes.includes('503'), outcomes.join(', '));
      assert.ok(outcomes.every((o) => o === '503' || o === 'closed'), outcomes.join(', '));
      // The thread that answered is the one that answers now: no restart, no refused connection.
      await sleep(300);
      assert.equal((await fetch(new URL('/healthz', agent.url))).status, 200);
      assert.doesNotMatch(agent.stderr(), /receiver thread stopped/);
      fs.rmSync(filler, { force: true });
      const stored = await fetch(agent.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      assert.equal(stored.status, 200, await stored.text());
      assert.equal(await agent.stop(), 0, agent.stderr().slice(-2000));
      agent = null;
    } finally {
      if (agent) await agent.kill();
      spawnSync('umount', ['-l', mountPoint]);
    }
  });

  for (const [label, points] of [
    ['fsync fails', ['posix/io/sync/fsync', 'posix/io/sync/fdatasync']],
    ['writes fail at random', ['posix/io/rw/pwrite', 'posix/io/rw/pwritev']],
  ] as const) {
    it(`injected I/O errors (libfiu: ${label}): 503 while failing, recovers when the fault clears`, { timeout: 180_000 }, async (t: TestContext) => {
      // npm test installs fiu-utils first (scripts/test-prerequisites.mjs): a missing tool is a failure, not a skip.
      assert.ok(hasCommand('fiu-run') && hasCommand('fiu-ctrl'), 'fiu-run/fiu-ctrl not installed: sudo apt-get install -y fiu-utils');
      t.diagnostic('libfiu present');
      const control = (pid: number, command: string): void => {
        execFileSync('fiu-ctrl', ['-c', command, String(pid)], { stdio: 'pipe', timeout: 10_000 });
      };
      await runWithFault(`libfiu ${label}`, async () => {
        const dataDir = tempDir('pos-sync-fiu-');
        const agent = await startAgent(dataDir, { wrapper: ['fiu-run', '-x'] });
        const probability = label === 'fsync fails' ? 1 : 0.5;
        return {
          agent,
          dataDir,
          inject: async (a) => {
            for (const name of points) control(a.pid, `enable_random name=${name},probability=${probability}`);
            await sleep(50);
          },
          clear: async (a) => {
            for (const name of points) control(a.pid, `disable name=${name}`);
          },
        };
      });
    });
  }
});

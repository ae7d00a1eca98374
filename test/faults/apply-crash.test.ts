import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AgentCore } from '../../src/core';
import { Prng } from '../../src/dev/publisher';
import { silentLogger } from '../../src/log';
import { openReadOnly, storeFilePath } from '../../src/store/database';
import { item, price, schedule, tempDir, testConfig, update } from '../helpers/fixtures';
import { spawnAgent, waitFor, writeConfig, type ChildAgent } from '../../src/dev/child-agent';

/**
 * Kills placed where they matter (issue 11): random SIGKILLs almost never land inside an apply (a
 * small apply takes well under a millisecond), so this suite makes the agent kill itself at chosen
 * points through the test-only hook POS_SYNC_TEST_CRASH_AT (src/crash-points.ts):
 * - apply-row:N: inside the till file's apply transaction of a large update, after N range rows;
 * - apply-before-commit:1: every row written, not yet committed;
 * - between-commits:1: pos-sync.db committed, agent.db not yet.
 * After each kill a normal agent restarts on the same folder; what the till sees, the applied
 * sequence and the inbox states must equal a clean in-order run at the same point of the chain.
 */
const SEED = Number(process.env.FAULT_SEED ?? 20261122);
const UPDATES = Number(process.env.APPLY_CRASH_UPDATES ?? 16);
const ITEMS = 400;
const LOCATION = 42;

function bigUpdate(k: number): Buffer {
  // Every update rewrites every item's prices and availability, so each apply writes thousands of rows.
  const items = Array.from({ length: ITEMS }, (_, i) => {
    const day = String(1 + ((k * 7 + i) % 28)).padStart(2, '0');
    return item(
      String(1000 + i),
      `IT-${i}`,
      [
        price('2026-12-01', '9999-12-31', 'Eat In', `${(3 + ((i + k) % 9)).toString()}.${String((k * 13 + i) % 100).padStart(2, '0')}`),
        price(`2027-01-${day}`, `2027-02-${day}`, 'Take Away', `${2 + (k % 5)}.50`),
        price(`2027-03-${day}`, `2027-03-${day}`, 'Delivery', `${5 + (i % 3)}.25`),
      ],
      [schedule(`2027-01-${day}`, `2027-01-${day}`, 'Lunch', (k + i) % 2 ? 'UNAVAILABLE' : 'AVAILABLE'), schedule('2026-12-01', '2027-12-31', 'Dinner')],
    );
  });
  return Buffer.from(JSON.stringify(update(LOCATION, 100 + k, 99 + k, items)));
}

interface Snapshot {
  readonly prices: unknown[];
  readonly availability: unknown[];
  readonly applied: unknown;
  readonly inbox: unknown[];
}

function snapshot(dataDir: string): Snapshot {
  const till = openReadOnly(storeFilePath(dataDir, 'till'));
  const agent = openReadOnly(storeFilePath(dataDir, 'agent'));
  try {
    return {
      prices: till.prepare('SELECT plu, item_id, tariff_name, date_from, date_to, sell_price_minor, sell_price, tax_code, tax_rate FROM pos_prices ORDER BY 1, 2, 3, 4').all(),
      availability: till.prepare('SELECT plu, item_id, meal_period, date_from, date_to, status FROM pos_availability ORDER BY 1, 2, 3, 4').all(),
      applied: till.prepare('SELECT last_change_sequence, waiting_updates, warnings FROM pos_sync_state WHERE location_id = ?').get(LOCATION),
      inbox: agent.prepare('SELECT change_sequence, state FROM inbox ORDER BY change_sequence').all(),
    };
  } finally {
    till.close();
    agent.close();
  }
}

async function post(agent: ChildAgent, body: Buffer): Promise<number> {
  try {
    const res = await fetch(agent.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal: AbortSignal.timeout(30_000) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

describe('kills inside an apply and between the two files’ commits', () => {
  it('every outcome equals a clean run at the same point of the chain', { timeout: 600_000 }, async () => {
    const bodies = Array.from({ length: UPDATES }, (_, k) => bigUpdate(k));
    // The clean run: the same chain applied in order by an agent that never crashed, snapshotted after each update.
    const cleanDir = tempDir('pos-sync-apply-clean-');
    const clean: Snapshot[] = [];
    const core = new AgentCore(testConfig({ dataDir: cleanDir }), silentLogger);
    const rowsPerUpdate: number[] = [];
    try {
      for (const body of bodies) {
        const { applied } = core.importPayload(body, 'clean');
        rowsPerUpdate.push(applied[0]!.rowsWritten);
        clean.push(snapshot(cleanDir));
      }
    } finally {
      core.close();
    }

    const rng = new Prng(SEED);
    const dataDir = tempDir('pos-sync-apply-crash-');
    const config = writeConfig(dataDir, { dataDir, webhook: { port: 0 }, admin: { enabled: false }, sync: { pollIntervalMs: 100, baselineSettleSeconds: 0 } });
    const landed: Record<string, number> = { 'apply-row': 0, 'apply-before-commit': 0, 'between-commits': 0 };
    const rowsAtKill: number[] = [];
    for (let k = 0; k < bodies.length; k++) {
      // Mostly inside the row loop (a random row of this update), some just before and just after the till commit.
      const point = k % 4 === 1 ? 'between-commits' : k % 8 === 3 ? 'apply-before-commit' : 'apply-row';
      const n = point === 'apply-row' ? rng.int(1, rowsPerUpdate[k]!) : 1;
      const doomed = await spawnAgent(config, { env: { POS_SYNC_TEST_CRASH_AT: `${point}:${n}` } });
      const status = await post(doomed, bodies[k]!);
      // The 200 comes before the apply; the hook then kills the process from inside the applier thread.
      assert.equal(status, 200, `update ${k} was not stored (status ${status})`);
      const exit = await Promise.race([
        new Promise<string>((resolve) => doomed.process.once('exit', (_code, signal) => resolve(String(signal)))),
        new Promise<string>((resolve) => setTimeout(() => resolve('alive'), 60_000)),
      ]);
      assert.equal(exit, 'SIGKILL', `the crash hook ${point}:${n} did not fire during update ${k}`);
      landed[point]! += 1;
      if (point === 'apply-row') rowsAtKill.push(n);
      // The state right after the kill: the till shows either all of update k or none of it.
      const dead = snapshot(dataDir);
      const before = k === 0 ? null : clean[k - 1]!;
      if (point === 'between-commits') assert.deepEqual([dead.prices, dead.availability], [clean[k]!.prices, clean[k]!.availability], 'the till file committed');
      else assert.deepEqual(before ? [dead.prices, dead.availability] : [[], []], before ? [before.prices, before.availability] : [[], []], 'nothing of a half apply is visible');

      const agent = await spawnAgent(config);
      try {
        await waitFor(`update ${k} applied after the restart`, () => {
          const s = snapshot(dataDir);
          return (s.applied as { last_change_sequence: number } | undefined)?.last_change_sequence === 100 + k && s.inbox.every((r) => (r as { state: string }).state === 'applied');
        }, 60_000, 50);
        assert.deepEqual(snapshot(dataDir), clean[k], `after the kill at ${point}:${n} and a restart, update ${k} differs from a clean run`);
      } finally {
        assert.equal(await agent.stop(), 0, 'the restarted agent stops cleanly');
      }
    }
    const midApply = landed['apply-row']! + landed['apply-before-commit']!;
    process.stdout.write(
      `# apply-crash seed ${SEED}: ${midApply} kills inside the apply transaction (${landed['apply-row']} after N rows, N from ${Math.min(...rowsAtKill)} to ${Math.max(...rowsAtKill)} ` +
        `of ~${rowsPerUpdate[1]} rows; ${landed['apply-before-commit']} before the commit), ${landed['between-commits']} between the two files' commits; every outcome equal to a clean run\n`,
    );
    assert.ok(midApply >= 10, `only ${midApply} kills landed inside an apply`);
    assert.ok(landed['between-commits']! >= 3);
  });
});

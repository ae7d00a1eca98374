import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { item, price, update } from '../helpers/fixtures';
import { laneDir, post } from './lane';
import { REPO_ROOT, startAgent, startWindows, waitFor, winPath, writeWindowsConfig, type WindowsAgent } from './wine';

/**
 * The agent's log rotates on Windows (issue 26): log.maxFileBytes at its smallest, real deliveries
 * writing the lines (each accepted update logs "stored …" and "applied …"), first with nothing else
 * holding the log, then while a log viewer (a Windows process) holds agent.log open as most Windows
 * programs do, sharing reading and writing but not deleting, so Windows refuses to rename it. Both
 * times: agent.old.log is (re)written, no line is lost across the rotation, the newest lines are in
 * agent.log, the agent goes on, and the two files stay within twice log.maxFileBytes.
 */
const MAX = 64 * 1024;
/** agent.log may pass the limit by the line that makes it rotate. */
const BUDGET = 2 * MAX + 1024;
const LOCATION = 77;

function body(sequence: number): Buffer {
  return Buffer.from(JSON.stringify(update(LOCATION, sequence, sequence - 1, [item('501', 'IT-501', [price('2026-12-01', '2027-12-31', 'Eat In', ((300 + (sequence % 500)) / 100).toFixed(2))])])));
}

/** The ChangeSequences whose "applied" line is in the text. */
function appliedIn(text: string): number[] {
  return [...text.matchAll(new RegExp(`applied location ${LOCATION} change (\\d+)`, 'g'))].map((m) => Number(m[1]));
}

describe('Windows: the log rotates, also while a viewer holds it open', () => {
  const work = laneDir('logs');
  const dataDir = path.join(work, 'data');
  const logs = path.join(dataDir, 'logs');
  const current = path.join(logs, 'agent.log');
  const old = path.join(logs, 'agent.old.log');
  const out = { outDir: path.join(work, 'out') };
  const config = writeWindowsConfig(path.join(work, 'config.json'), {
    dataDir: winPath(dataDir),
    webhook: { port: 0 },
    admin: { enabled: false },
    sync: { pollIntervalMs: 200, baselineSettleSeconds: 0 },
    backup: { enabled: false },
    log: { maxFileBytes: MAX },
  });
  let agent: WindowsAgent;
  let next = 1;
  const read = (file: string): string => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '');

  /**
   * Sends updates in chain order until `done` holds (at most `most`), then waits for the last one's
   * line; returns its sequence. Each update logs about 200 bytes, so one rotation takes ~330.
   */
  async function deliverUntil(done: () => boolean, most: number): Promise<number> {
    for (let i = 0; i < most && !done(); i++) {
      const r = await post(agent.url, body(next));
      assert.equal(r.status, 200, r.body);
      next += 1;
    }
    const sent = next - 1;
    await waitFor(`update ${sent} applied`, () => appliedIn(read(current)).includes(sent) || appliedIn(read(old)).includes(sent));
    return sent;
  }

  /** Every update from the first one agent.old.log still has to the last sent has its line in one of the two files. */
  function noLineLost(last: number): void {
    const seen = new Set([...appliedIn(read(old)), ...appliedIn(read(current))]);
    const first = Math.min(...appliedIn(read(old)));
    const missing = Array.from({ length: last - first + 1 }, (_, i) => first + i).filter((s) => !seen.has(s));
    assert.deepEqual(missing, [], 'lines lost across the rotation');
  }

  function withinBudget(): void {
    const total = fs.statSync(current).size + fs.statSync(old).size;
    assert.ok(total <= BUDGET, `agent.log + agent.old.log = ${total} bytes, over ${BUDGET}`);
  }

  before(async () => {
    agent = await startAgent(config, dataDir, out);
  });
  after(async () => {
    await agent?.stop();
  });

  it('rotates agent.log to agent.old.log at log.maxFileBytes and goes on writing', async () => {
    const last = await deliverUntil(() => fs.existsSync(old), 1_000);
    assert.ok(fs.existsSync(old), `no rotation: ${fs.readdirSync(logs).join(', ')}`);
    const newest = await deliverUntil(() => false, 3);
    assert.ok(appliedIn(read(current)).includes(newest), 'the newest line is in agent.log');
    assert.ok(newest > last);
    noLineLost(newest);
    withinBudget();
  });

  it('rotates while a Windows log viewer holds agent.log open, losing no line', async () => {
    const stop = path.join(work, 'stop viewer');
    const result = path.join(work, 'viewer.json');
    const viewer = startWindows([winPath(path.join(__dirname, 'fixtures', 'log-viewer.cjs')), winPath(REPO_ROOT), winPath(current), winPath(stop), winPath(result)], out);
    let ended: number | null | undefined;
    void viewer.exited.then((c) => (ended = c));
    try {
      await waitFor('the viewer to open agent.log', () => {
        if (ended !== undefined) throw new Error(`the viewer ended (${ended}): ${viewer.stderr()}`);
        return viewer.stdout().startsWith('ready');
      });
      // The rotation before the viewer: what agent.old.log holds now. A rotation while it holds the
      // file must replace it with the lines written since.
      assert.ok(fs.existsSync(old), 'the first case rotated the log');
      const before = Math.max(...appliedIn(read(old)));
      const rotated = (): boolean => appliedIn(read(old)).some((s) => s > before);
      const last = await deliverUntil(rotated, 1_000);
      assert.ok(rotated(), `agent.old.log was not rewritten while the viewer held agent.log (its newest update is still ${before}): ${fs.readdirSync(logs).join(', ')}`);
      const newest = await deliverUntil(() => false, 3);
      assert.ok(newest > last);
      assert.ok(appliedIn(read(current)).includes(newest), 'the newest line is in agent.log');
      noLineLost(newest);
      withinBudget();
      assert.ok(fs.existsSync(current), 'agent.log is still there (held, it was emptied in place)');
      assert.doesNotMatch(read(current), /log cropped/);
    } finally {
      fs.writeFileSync(stop, '');
      await viewer.exited;
    }
    const seen = JSON.parse(fs.readFileSync(result, 'utf8')) as { reads: number; errors: string[]; lastLine: string };
    assert.deepEqual(seen.errors, [], 'the viewer could read the log throughout');
    assert.ok(seen.reads > 0);
    // Nothing crashed: the agent still answers and stops cleanly, and never failed to write its log.
    assert.equal((await post(agent.url, body(next))).status, 200);
    assert.doesNotMatch(agent.output(), /Can't write to|Could not rotate|could not rotate the log/);
    assert.equal(await agent.stop(), 0, agent.output());
  });
});

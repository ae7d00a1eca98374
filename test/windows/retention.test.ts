import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { item, price, update } from '../helpers/fixtures';
import { laneDir, lastSequence, post } from './lane';
import { startAgent, startWindows, waitFor, winPath, writeWindowsConfig, type WindowsAgent } from './wine';

/**
 * Retention on Windows, where a file another program holds open cannot be deleted: a pruned body's
 * file held that way stays until a later start, and neither the prune nor the start fails.
 */

const FILE_FROM = 64 * 1024;

function largeUpdate(location: number, sequence: number, parent: number): Buffer {
  const items = Array.from({ length: 600 }, (_, i) => item(String(100 + i), `Item ${i}`, [price('2026-01-01', '9999-12-31', 'Eat In', `${2 + (i % 5)}.${String(i % 100).padStart(2, '0')}`)]));
  return Buffer.from(JSON.stringify(update(location, sequence, parent, items)));
}

describe('Windows: retention of large bodies', () => {
  const work = laneDir('retention');
  const dataDir = path.join(work, 'data');
  const out = { outDir: path.join(work, 'out') };
  const config = writeWindowsConfig(path.join(work, 'config.json'), {
    dataDir: winPath(dataDir),
    webhook: { port: 0, fileBodyFromBytes: FILE_FROM },
    admin: { enabled: false },
    backup: { enabled: false },
    sync: { pollIntervalMs: 200, baselineSettleSeconds: 0 },
    retention: { rawPayloadDays: 1, pruneIntervalMinutes: 0.02 },
  });
  const bodies = path.join(dataDir, 'bodies');
  const log = (): string => {
    try {
      return fs.readFileSync(path.join(dataDir, 'logs', 'agent.log'), 'utf8');
    } catch {
      return '';
    }
  };
  /** Waits for a line of the agent's log; on a timeout the error carries the log and the agent's output. */
  const logged = (what: string, line: RegExp): Promise<true> =>
    waitFor(what, () => line.test(log())).catch((err: Error) => {
      throw new Error(`${err.message}\n--- agent.log ---\n${log()}\n--- output ---\n${agent?.output() ?? ''}`);
    });
  let agent: WindowsAgent | null = null;
  after(async () => {
    await agent?.stop();
  });

  it('prunes a body whose file another program holds open, keeps running and starting, and removes the file once released', async () => {
    agent = await startAgent(config, dataDir, out);
    const body = largeUpdate(3021, 1, 0);
    assert.ok(body.length > FILE_FROM);
    const res = await post(agent.url, body);
    assert.equal(res.status, 200, res.body);
    await waitFor('the update to apply', () => lastSequence(dataDir, 3021) === 1);
    const [file] = fs.readdirSync(bodies);
    assert.ok(file, 'the body is a file of its own');
    assert.equal(await agent.stop(), 0, agent.output());
    agent = null;

    // Applied two days ago, as far as retention can tell: its body is past retention.rawPayloadDays.
    const db = new Database(path.join(dataDir, 'agent.db'));
    db.prepare("UPDATE inbox SET applied_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-2 days') WHERE state = 'applied'").run();
    db.close();

    const stop = path.join(work, 'release the body');
    const holder = startWindows([winPath(path.join(__dirname, 'fixtures', 'hold-exclusive.cjs')), winPath(path.join(bodies, file)), winPath(stop)], out);
    try {
      await waitFor('the holder to open the body file', () => holder.stdout().startsWith('ready'));
      agent = await startAgent(config, dataDir, out);
      await logged('the prune to meet the held file', /retention: 1 pruned body file is held open by another program/);
      const left = new Database(path.join(dataDir, 'agent.db'), { readonly: true });
      assert.equal((left.prepare('SELECT count(*) AS n FROM inbox_body_files').get() as { n: number }).n, 0, 'the body is pruned');
      left.close();
      assert.deepEqual(fs.readdirSync(bodies), [file], 'Windows kept the held file');
      // Still serving: a small update is received and applied.
      const next = await post(agent.url, JSON.stringify(update(3021, 2, 1, [item('100', 'Item 0', [price('2026-01-01', '9999-12-31', 'Eat In', '9.99')])])));
      assert.equal(next.status, 200, next.body);
      await waitFor('the next update to apply', () => lastSequence(dataDir, 3021) === 2);
      // A restart while it is still held: the start-up sweep cannot remove it either, and says so.
      assert.equal(await agent.stop(), 0, agent.output());
      agent = await startAgent(config, dataDir, out);
      await logged('the start-up sweep to meet the held file', /could not remove 1 body file that no update names, e\.g\. .*: another program has it open/);
    } finally {
      fs.writeFileSync(stop, '');
      assert.equal(await holder.exited, 0, holder.stderr());
    }
    assert.equal(await agent.stop(), 0, agent.output());
    agent = null;

    agent = await startAgent(config, dataDir, out);
    await logged('the start-up sweep', /removed 1 body file that no update names/);
    assert.deepEqual(fs.readdirSync(bodies), []);
    assert.doesNotMatch(log().split('pos-sync-agent starting').pop()!, /could not remove/, 'the last start removed it');
  });
});

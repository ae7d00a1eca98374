import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import { AgentCore } from '../../src/core';
import { databasePath } from '../../src/store/database';
import { silentLogger } from '../../src/log';
import { item, price, testConfig, update } from '../helpers/fixtures';

const ITEMS = 400;

/** Every update sets every item's price to the same amount, equal to its ChangeSequence in pence. */
function body(seq: number): Buffer {
  const items = Array.from({ length: ITEMS }, (_, i) => item(String(i), `I${i}`, [price('2026-12-01', '2027-12-31', 'Eat In', (seq / 100).toFixed(2)), price(`2027-0${1 + (seq % 9)}-01`, `2027-0${1 + (seq % 9)}-02`, 'Take Away', (seq / 100).toFixed(2))]));
  return Buffer.from(JSON.stringify(update(1, seq, seq - 1, items)));
}

describe('a till reading while updates apply', () => {
  it('never sees a half-applied update (separate read-only process)', async () => {
    const config = testConfig();
    const core = new AgentCore(config, silentLogger);
    core.importPayload(body(1000), 'test');
    const reader = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, '..', 'helpers', 'till-reader.ts'), databasePath(config.dataDir)], { stdio: ['pipe', 'pipe', 'inherit'] });
    let output = '';
    reader.stdout.on('data', (c) => (output += c));
    await new Promise<void>((resolve) => reader.stdout.once('data', () => resolve())); // reader is up
    for (let seq = 1001; seq <= 1040; seq++) {
      const { applied } = core.importPayload(body(seq), 'test');
      assert.equal(applied.length, 1);
      await new Promise((r) => setTimeout(r, 5));
    }
    reader.stdin.end('stop\n');
    const code = await new Promise<number | null>((resolve) => reader.on('exit', resolve));
    core.close();
    assert.equal(code, 0, output);
    const report = JSON.parse(output.trim().split('\n').at(-1)!) as { reads: number; torn: number; distinct: number; errors: string[] };
    assert.deepEqual(report.errors, []);
    assert.equal(report.torn, 0);
    assert.ok(report.reads > 20, `only ${report.reads} reads`);
    assert.ok(report.distinct >= 3, `the reader saw only ${report.distinct} states; the test did not overlap reads and writes`);
  });
});

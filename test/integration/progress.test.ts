import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ControlClient } from '../../src/cli/control-client';
import { controlEndpoint, ProgressReply } from '../../src/ops/control-protocol';
import { REPO_ROOT, writeConfig } from '../helpers/child-agent';
import { item, price, schedule, tempDir, update } from '../helpers/fixtures';

/**
 * Progress on long work, through real processes: `import` prints a progress line on a terminal (a
 * pseudo-terminal from util-linux `script`) and none when piped; `serve` says on Ctrl-C what it waits
 * for, and a second Ctrl-C stops at once, saying what happens to the apply under way, which the next
 * start then applies.
 */

const BIN = path.join(REPO_ROOT, 'bin', 'pos-sync-agent.cjs');

function bigUpdate(location: number, sequence: number, count: number): Buffer {
  const items = Array.from({ length: count }, (_, i) =>
    item(String(10_000 + i), `IT-${i}`, [price('2026-12-01', '2027-12-31', 'Eat In', '3.50'), price('2026-12-01', '2027-12-31', 'Take Away', '3.10'), price('2027-01-01', '2027-01-31', 'Delivery', '4.25')], [
      schedule('2026-12-01', '2027-12-31', 'Lunch'),
    ]),
  );
  return Buffer.from(JSON.stringify(update(location, sequence, sequence - 1, items)));
}

function quote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

describe('progress on long work', { timeout: 180_000 }, () => {
  it('import prints a progress line on a terminal and none when piped', () => {
    const dir = tempDir();
    const config = writeConfig(dir, { dataDir: path.join(dir, 'data'), sync: { baselineSettleSeconds: 0 } });
    const file = path.join(dir, 'big.json');
    fs.writeFileSync(file, bigUpdate(42, 100, 2_000));
    // `script` runs the command on a pseudo-terminal: stdout.isTTY is true, as in a console window.
    const tty = spawnSync('script', ['-qec', `${quote(process.execPath)} ${quote(BIN)} import ${quote(file)} --config ${quote(config)}`, '/dev/null'], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(tty.status, 0, tty.stdout + tty.stderr);
    assert.match(tty.stdout, /\rApplying update 42:100: [\d,]+ of 2,000 items \(\d+ %\)/);
    assert.match(tty.stdout, /Applied location 42 ChangeSequence 100/);

    fs.writeFileSync(file, bigUpdate(42, 101, 2_000));
    const piped = spawnSync(process.execPath, [BIN, 'import', file, '--config', config], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(piped.status, 0, piped.stderr);
    assert.doesNotMatch(piped.stdout, /Applying update|\r/);
    assert.match(piped.stdout, /Applied location 42 ChangeSequence 101/);
  });

  it('serve says what it waits for on Ctrl-C; a second Ctrl-C stops at once and the next start applies the update', async () => {
    const dir = tempDir();
    const dataDir = path.join(dir, 'data');
    const config = writeConfig(dir, { dataDir, webhook: { port: 0 }, admin: { enabled: false }, sync: { baselineSettleSeconds: 0 } });
    const child = spawn(process.execPath, [BIN, 'serve', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const until = async (what: string, test: () => boolean | Promise<boolean>, ms = 60_000): Promise<void> => {
      for (const deadline = Date.now() + ms; Date.now() < deadline; await new Promise((r) => setTimeout(r, 25))) if (await test()) return;
      throw new Error(`timed out waiting for ${what}; stdout: ${out}; stderr: ${err}`);
    };
    await until('the receiver', () => /Receiving menu cycle updates at (\S+)/.test(out));
    const url = /Receiving menu cycle updates at (\S+)/.exec(out)![1]!;
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bigUpdate(42, 100, 8_000) });
    assert.equal(res.status, 200);
    // Ctrl-C once the apply is under way (the agent reports its progress on the control channel).
    const client = new ControlClient(controlEndpoint(dataDir), 'test');
    await until('the apply to start', async () => (await client.request(ProgressReply, { method: 'GET', route: '/progress' })).applying !== null);
    child.kill('SIGINT');
    await until('the first answer', () => out.includes('Press Ctrl-C again'));
    assert.match(out, /Stopping: waiting for the apply of update 42:100 to finish \([\d,]+ of 8,000 items\); updates queued after it are applied at the next start\./);
    child.kill('SIGINT');
    const code = await exited;
    // Either the second Ctrl-C came first (130), or the apply had just finished and the stop completed.
    if (code === 130) {
      assert.match(out, /Stopping at once: the apply under way \(if any\) is rolled back and applied again when the agent next starts; nothing received is lost\./);
      const status = JSON.parse(spawnSync(process.execPath, [BIN, 'status', '--json', '--config', config], { encoding: 'utf8' }).stdout) as { locations: { lastChangeSequence: number | null; waiting: { reason: string }[] }[] };
      assert.deepEqual(status.locations[0]!.waiting.map((w) => w.reason), ['queued'], 'the interrupted update is queued, not a gap');
    } else assert.equal(code, 0, out + err);
    // The next start applies what the forced stop left.
    const again = spawn(process.execPath, [BIN, 'serve', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out2 = '';
    again.stdout.on('data', (c: Buffer) => (out2 += c.toString('utf8')));
    const exited2 = new Promise<number | null>((resolve) => again.once('exit', (c) => resolve(c)));
    await until('the second start', () => out2.includes('Receiving menu cycle updates'));
    await until('the update to be applied', () => {
      const s = JSON.parse(spawnSync(process.execPath, [BIN, 'status', '--json', '--config', config], { encoding: 'utf8' }).stdout) as { locations: { lastChangeSequence: number | null }[] };
      return s.locations[0]?.lastChangeSequence === 100;
    });
    again.kill('SIGINT');
    assert.equal(await exited2, 0);
    assert.match(out2, /Stopping: closing the webhook receiver/);
    assert.match(out2, /Stopped\./);
  });
});

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { isInstanceLocked, lockFile } from '../../../src/ops/instance';
import { pidFile } from '../../../src/ops/paths';
import { REPO_ROOT, startChildAgent, writeConfig } from '../../helpers/child-agent';
import { sampleBodies, tempDir } from '../../helpers/fixtures';
import { needs } from '../../helpers/system';

/** Issue 10, point 7: one agent per data folder, with an OS lock held for the agent's life. */

const CLI = path.join(REPO_ROOT, 'bin', 'pos-sync-agent.cjs');

function cli(config: string, ...args: string[]): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [CLI, ...args, '--config', config], { encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

describe('one agent per data folder (two real processes)', () => {
  it('a second serve exits with a clear message; compact and restore refuse; the first keeps its pid file', async () => {
    const dir = tempDir();
    const dataDir = path.join(dir, 'data');
    // Ports 0: the second agent could bind its own ports, so only the lock can stop it.
    const config = writeConfig(dir, { dataDir, webhook: { port: 0 }, admin: { port: 0 } });
    const first = await startChildAgent(config);
    try {
      assert.equal((await fetch(first.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: sampleBodies()[0]!.raw })).status, 200);
      const backup = cli(config, 'backup');
      assert.equal(backup.status, 0, backup.out);
      const backupFile = /Backup written: (\S+)/.exec(backup.out)![1]!;

      const second = cli(config, 'serve');
      assert.equal(second.status, 1, second.out);
      assert.match(second.out, new RegExp(`one agent per data folder: an agent \\(pid ${first.child.pid}, started [^)]+\\) is running on ${dataDir.replace(/[/.]/g, '\\$&')}: stop it`));
      assert.doesNotMatch(second.out, /Receiving menu cycle updates/);
      assert.equal(JSON.parse(fs.readFileSync(pidFile(dataDir), 'utf8')).pid, first.child.pid, "the second never touched the first's pid file");

      const compact = cli(config, 'compact');
      assert.equal(compact.status, 1, compact.out);
      assert.match(compact.out, /is running on .*: stop it .* before compacting \[agent_running\]/);
      const restore = cli(config, 'restore', backupFile);
      assert.equal(restore.status, 1, restore.out);
      assert.match(restore.out, /before restoring \[agent_running\]/);
      assert.match(cli(config, 'status').out, new RegExp(`Agent running \\(pid ${first.child.pid}`));

      // The first is unharmed: it still answers and still has its pid file.
      assert.equal((await fetch(first.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: sampleBodies()[1]!.raw })).status, 200);
      assert.equal(JSON.parse(fs.readFileSync(pidFile(dataDir), 'utf8')).pid, first.child.pid);
    } finally {
      await first.kill('SIGTERM');
    }
    assert.equal(fs.existsSync(pidFile(dataDir)), false, 'a clean stop removes its own pid file');
    assert.equal(cli(config, 'compact').status, 0, 'compact runs once the agent has stopped');
  });

  it('the lock dies with a SIGKILLed holder: the next serve starts at once', async () => {
    const dir = tempDir();
    const dataDir = path.join(dir, 'data');
    const config = writeConfig(dir, { dataDir, webhook: { port: 0 }, admin: { port: 0 } });
    const first = await startChildAgent(config);
    assert.equal(isInstanceLocked(dataDir), true);
    await first.kill('SIGKILL');
    assert.equal(isInstanceLocked(dataDir), false, 'the kernel released the lock');
    assert.ok(fs.existsSync(pidFile(dataDir)), 'the killed agent left its pid file behind');
    assert.match(cli(config, 'status').out, /Agent not running/, 'a stale pid file does not count');
    const next = await startChildAgent(config);
    try {
      assert.equal(JSON.parse(fs.readFileSync(pidFile(dataDir), 'utf8')).pid, next.child.pid);
      assert.equal(isInstanceLocked(dataDir), true);
    } finally {
      await next.kill('SIGTERM');
    }
  });

  it('the lock is an ordinary OS lock: held by another program (the sqlite3 shell), it stops serve and compact too', needs('the sqlite3 shell'), async () => {
    const dir = tempDir();
    const dataDir = path.join(dir, 'data');
    fs.mkdirSync(dataDir);
    const config = writeConfig(dir, { dataDir, webhook: { port: 0 }, admin: { port: 0 } });
    const shell = spawn('sqlite3', [lockFile(dataDir)], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    shell.stdout.on('data', (c) => (out += c));
    shell.stdin.write('PRAGMA locking_mode=EXCLUSIVE;\nBEGIN EXCLUSIVE;\nCREATE TABLE IF NOT EXISTS holder (pid INTEGER, what TEXT, since TEXT);\nCOMMIT;\n.print held\n');
    await new Promise<void>((resolve) => shell.stdout.on('data', () => out.includes('held') && resolve()));
    try {
      assert.equal(isInstanceLocked(dataDir), true);
      const serve = cli(config, 'serve');
      assert.equal(serve.status, 1, serve.out);
      assert.match(serve.out, /one agent per data folder: another agent or command \(compact, restore\) is running on/);
      assert.equal(cli(config, 'compact').status, 1);
    } finally {
      shell.stdin.end();
      await new Promise((resolve) => shell.once('exit', resolve));
    }
    assert.equal(isInstanceLocked(dataDir), false);
  });
});

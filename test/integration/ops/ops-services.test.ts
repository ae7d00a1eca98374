import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { BackupService } from '../../../src/ops/backup';
import { checkDisk, DiskService } from '../../../src/ops/disk';
import { runningAgent } from '../../../src/ops/instance';
import { pidFile } from '../../../src/ops/paths';
import { opsServices } from '../../../src/ops/services';
import { startTestAgent } from '../../helpers/agent';
import { testConfig } from '../../helpers/fixtures';
import { captureLogger } from '../../helpers/ops/capture-logger';

const CLI = path.resolve(__dirname, '..', '..', '..', 'bin', 'pos-sync-agent.cjs');

describe('operations services in a running agent', () => {
  it('writes the pid file, takes the first backup at start, and `ops status` reports it', async () => {
    const base = testConfig();
    const log = captureLogger();
    const t = await startTestAgent({ dataDir: base.dataDir }, { services: opsServices(base, log), log });
    assert.equal(runningAgent(t.config.dataDir)?.pid, process.pid);
    const backups = t.agent.service<BackupService>('backup')!;
    const deadline = Date.now() + 10_000;
    while (backups.state().lastBackup === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    assert.ok(backups.state().lastBackup, 'a first backup right after start');
    assert.ok(t.agent.service<DiskService>('disk')!.state().freeBytes! > 0);

    const config = path.join(base.dataDir, 'config.json');
    fs.writeFileSync(config, JSON.stringify({ dataDir: base.dataDir }));
    const r = spawnSync(process.execPath, [CLI, 'ops', 'status', '--config', config], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`Agent running \\(pid ${process.pid}`));
    assert.match(r.stdout, /Last backup: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d\d:\d\d/);
    assert.match(r.stdout, /Disk: [\d.]+ \w+ free/);
    // Offline operations are refused meanwhile.
    const compact = spawnSync(process.execPath, [CLI, 'compact', '--config', config], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(compact.status, 1);
    assert.match(compact.stderr, /is running on .*: stop it/);

    await t.agent.stop();
    assert.equal(fs.existsSync(pidFile(t.config.dataDir)), false, 'the pid file goes with the agent');
    const after = spawnSync(process.execPath, [CLI, 'compact', '--config', config], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(after.status, 0, after.stderr);
    assert.match(after.stdout, /Compacted/);
  });

  it('warns before the disk is full, once per change of level', () => {
    const config = testConfig({ disk: { warnFreeBytes: 10_000, criticalFreeBytes: 1_000, warnFreePercent: 0 } });
    const log = captureLogger();
    let free = 50_000;
    const service = new DiskService(config, log, (c) => checkDisk(c, new Date(), () => ({ bavail: free, bsize: 1, blocks: 1024 * 1024 * 1024 })));
    const level = (): string => service.check().level;
    assert.equal(level(), 'ok');
    free = 5_000;
    assert.equal(level(), 'low');
    assert.equal(level(), 'low');
    free = 500;
    assert.equal(level(), 'critical');
    free = 60_000;
    assert.equal(level(), 'ok');
    assert.equal(log.lines.length, 3, log.lines.join('\n'));
    assert.match(log.lines[0]!, /^\[warn\] disk space low: 4\.9 KiB free of 1\.0 GiB on the disk holding /);
    assert.match(log.lines[1]!, /^\[error\] disk almost full: 500 B free/);
    assert.equal(log.lines[2], '[info] disk space is fine again');
  });
});

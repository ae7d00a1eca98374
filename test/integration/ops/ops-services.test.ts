import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { AgentCore } from '../../../src/core';
import { silentLogger } from '../../../src/log';
import { storeFilePath } from '../../../src/store/database';
import type { BackupService } from '../../../src/ops/backup/service';
import { checkDisk, DiskService } from '../../../src/ops/disk';
import { runningAgent } from '../../../src/ops/instance';
import { pidFile } from '../../../src/ops/paths';
import { opsServices } from '../../../src/ops/services';
import { startTestAgent } from '../../helpers/agent';
import { item, price, testConfig, update } from '../../helpers/fixtures';
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

  it('compact gives each of the three files\' free pages back and changes no row', () => {
    const config = testConfig();
    const core = new AgentCore(config, silentLogger);
    try {
      core.importPayload(Buffer.from(JSON.stringify(update(7, 1, 0, [item('1', 'A', [price('2026-12-01', '9999-12-31', 'Eat In', '4.50')])]))), 'test');
    } finally {
      core.close();
    }
    const kinds = ['till', 'agent', 'staff'] as const;
    const contents = (): string[] =>
      kinds.map((kind) => {
        const db = new Database(storeFilePath(config.dataDir, kind), { readonly: true });
        try {
          const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[]).map((t) => t.name);
          return JSON.stringify(tables.map((t) => [t, db.prepare(`SELECT * FROM "${t}"`).all()]));
        } finally {
          db.close();
        }
      });
    // Each file gets 4 MiB of pages that are then freed (what a large prune leaves behind).
    for (const kind of kinds) {
      const db = new Database(storeFilePath(config.dataDir, kind));
      db.exec('CREATE TABLE filler (x BLOB); INSERT INTO filler VALUES (randomblob(4194304)); DROP TABLE filler;');
      db.pragma('wal_checkpoint(TRUNCATE)');
      db.close();
    }
    const before = contents();
    const sizes = kinds.map((kind) => fs.statSync(storeFilePath(config.dataDir, kind)).size);
    assert.ok(sizes.every((s) => s > 4_000_000), `every file holds the freed pages: ${sizes.join(', ')}`);
    const configFile = path.join(config.dataDir, 'config.json');
    fs.writeFileSync(configFile, JSON.stringify({ dataDir: config.dataDir }));
    const r = spawnSync(process.execPath, [CLI, 'compact', '--json', '--config', configFile], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, r.stderr);
    const report = JSON.parse(r.stdout) as { files: { file: string; before: number; after: number }[] };
    assert.deepEqual(report.files.map((f) => path.basename(f.file)), ['pos-sync.db', 'agent.db', 'staff.db']);
    for (const [i, kind] of kinds.entries()) {
      const f = report.files[i]!;
      assert.equal(f.before, sizes[i], `${kind}: the size before`);
      assert.ok(f.after < f.before - 4_000_000, `${kind}: ${f.before} -> ${f.after} bytes`);
      assert.equal(f.after, fs.statSync(storeFilePath(config.dataDir, kind)).size);
      const db = new Database(storeFilePath(config.dataDir, kind), { readonly: true });
      assert.equal(db.pragma('freelist_count', { simple: true }), 0);
      assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
      db.close();
    }
    assert.deepEqual(contents(), before, 'the same rows in every table and view');
  });

  it('compact refuses a data folder a newer version wrote, before it rewrites any file', () => {
    const config = testConfig();
    new AgentCore(config, silentLogger).close();
    // staff.db, the last file compact takes, carries a migration this build does not know.
    const staff = new Database(storeFilePath(config.dataDir, 'staff'));
    staff.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, 'from-a-newer-version', '2027-01-01T00:00:00.000Z')").run();
    staff.close();
    const bytes = (['till', 'agent', 'staff'] as const).map((kind) => fs.readFileSync(storeFilePath(config.dataDir, kind)).toString('base64'));
    const configFile = path.join(config.dataDir, 'config.json');
    fs.writeFileSync(configFile, JSON.stringify({ dataDir: config.dataDir }));
    const r = spawnSync(process.execPath, [CLI, 'compact', '--config', configFile], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 1, r.stdout);
    assert.match(r.stderr, /staff\.db has migrations this agent does not know \(99-from-a-newer-version\)/);
    assert.deepEqual((['till', 'agent', 'staff'] as const).map((kind) => fs.readFileSync(storeFilePath(config.dataDir, kind)).toString('base64')), bytes, 'no file rewritten');
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

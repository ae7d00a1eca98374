import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { startTestAgent } from '../../helpers/agent';
import { item, price, tempDir, testConfig, update } from '../../helpers/fixtures';
import { BackupService, backupDatabase, checkBackupFile, listBackups, restoreDatabase } from '../../../src/ops/backup';
import { InstanceService } from '../../../src/ops/instance';
import { backupDir } from '../../../src/ops/paths';
import { silentLogger } from '../../../src/log';
import { databasePath } from '../../../src/store/database';
import { AgentCore } from '../../../src/core';

const chain = (n: number): Record<string, unknown> =>
  update(10, 100 + n, 100 + n - 1, [item('1', 'A', [price('2026-12-01', '2026-12-31', 'Eat In', n)])]);

const CLI = path.resolve(__dirname, '..', '..', '..', 'bin', 'pos-sync-agent.cjs');

describe('backup and restore', () => {
  it('round trip: restore an older backup, resume from its sequence, later deliveries wait as gaps and are shown', async () => {
    const dataDir = tempDir();
    const first = await startTestAgent({ dataDir }, { services: [new InstanceService(), new BackupService(testConfig({ dataDir }), silentLogger)] });
    for (const n of [1, 2]) assert.equal((await first.post(chain(n))).status, 200);
    await first.settle();
    const backups = first.agent.service<BackupService>('backup')!;
    const made = await backups.backupNow();
    assert.ok(made && fs.existsSync(made.file));
    assert.equal(backups.state().lastBackup?.name, made.name);
    for (const n of [3, 4]) await first.post(chain(n));
    await first.settle();
    assert.equal(first.agent.core.status()[0]!.lastChangeSequence, 104);

    // While the agent runs, restore is refused (it would swap the file under an open connection).
    await assert.rejects(restoreDatabase(first.config, made.file), (err: Error & { id?: string }) => err.id === 'agent_running');
    await first.agent.stop();

    const result = await restoreDatabase(first.config, made.file);
    assert.deepEqual(result.check.locations, [{ locationId: 10, lastChangeSequence: 102 }]);
    assert.ok(result.previousSavedAs && fs.existsSync(result.previousSavedAs), 'the replaced database is kept');
    // The saved-aside copy really is the newer state (sequence 104).
    assert.deepEqual(checkBackupFile(result.previousSavedAs).locations, [{ locationId: 10, lastChangeSequence: 104 }]);

    const second = await startTestAgent({ dataDir });
    let status = second.agent.core.status()[0]!;
    assert.equal(status.lastChangeSequence, 102, 'resumes from the restored sequence');
    await second.post(chain(5));
    await second.settle();
    status = second.agent.core.status()[0]!;
    assert.deepEqual(status.waiting.map((w) => [w.changeSequence, w.reason, w.waitingFor]), [[105, 'waiting', 104]]);
    const audit = second.agent.core.agentDb.prepare("SELECT action FROM audit_log WHERE action = 'restore'").all();
    assert.equal(audit.length, 1);

    // `status` from the CLI shows the gap to the operator.
    const config = path.join(dataDir, 'config.json');
    fs.writeFileSync(config, JSON.stringify({ dataDir }));
    const cli = spawnSync(process.execPath, [CLI, 'status', '--config', config], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(cli.status, 0, cli.stderr);
    assert.match(cli.stdout, /last applied ChangeSequence 102/);
    assert.match(cli.stdout, /waiting: update #\d+ \(ChangeSequence 105\) needs 104 first/);

    // Head office resends what was lost: the chain closes.
    for (const n of [3, 4]) await second.post(chain(n));
    await second.settle();
    status = second.agent.core.status()[0]!;
    assert.equal(status.lastChangeSequence, 105);
    assert.deepEqual(status.waiting, []);
  });

  it('keeps only the newest N backups and never touches other files', async () => {
    const config = testConfig({ backup: { keep: 3 } });
    const core = new AgentCore(config, silentLogger);
    try {
      const dir = backupDir(config);
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, 'notes.txt'), 'mine');
      for (let day = 1; day <= 5; day++) await backupDatabase(core.tillDb, dir, config.backup.keep, new Date(`2026-01-0${day}T03:00:00.000Z`));
      assert.deepEqual(
        listBackups(dir).map((b) => b.takenAt),
        ['2026-01-05T03:00:00.000Z', '2026-01-04T03:00:00.000Z', '2026-01-03T03:00:00.000Z'],
      );
      assert.ok(fs.existsSync(path.join(dir, 'notes.txt')));
      assert.equal(fs.readdirSync(dir).filter((n) => n.endsWith('.partial')).length, 0);
    } finally {
      core.close();
    }
  });

  it('refuses a corrupt file, a database from a newer agent, and something that is not ours', async () => {
    const config = testConfig();
    const core = new AgentCore(config, silentLogger);
    const dir = tempDir();
    let good: string;
    try {
      for (let i = 0; i < 300; i++) core.tillDb.prepare("INSERT INTO audit_log (at, actor, action, details) VALUES ('x', 'y', 'z', ?)").run('p'.repeat(500));
      good = (await backupDatabase(core.tillDb, dir, 10)).file;
    } finally {
      core.close();
    }
    assert.equal(checkBackupFile(good).ok, true);

    // Newer agent: a migration this build does not know.
    const newer = path.join(dir, 'newer.db');
    fs.copyFileSync(good, newer);
    const db = new Database(newer);
    db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, 'future', 'now')").run();
    db.close();
    await assert.rejects(restoreDatabase(config, newer), /migrations this agent does not know \(99-future\)/);

    // Corrupt: overwrite pages in the middle of the file.
    const corrupt = path.join(dir, 'corrupt.db');
    const bytes = fs.readFileSync(good);
    for (let i = 4096 * 2; i < bytes.length - 4096; i += 7) bytes[i] = (bytes[i]! + 1) & 0xff;
    fs.writeFileSync(corrupt, bytes);
    const corruptCheck = checkBackupFile(corrupt);
    assert.equal(corruptCheck.ok, false);
    await assert.rejects(restoreDatabase(config, corrupt), (err: Error & { id?: string }) => err.id === 'backup_refused');

    // Not a database at all; an SQLite file of someone else's.
    const text = path.join(dir, 'text.db');
    fs.writeFileSync(text, 'hello, this is not sqlite'.repeat(100));
    await assert.rejects(restoreDatabase(config, text), /refusing to restore/);
    const foreign = path.join(dir, 'foreign.db');
    const other = new Database(foreign);
    other.exec('CREATE TABLE t (x)');
    other.close();
    assert.match(checkBackupFile(foreign).problems.join(), /not a pos-sync-agent database/);

    // The live database was never touched by the refusals.
    const live = new Database(databasePath(config.dataDir), { readonly: true });
    assert.equal((live.prepare('SELECT count(*) AS n FROM audit_log').get() as { n: number }).n, 300);
    live.close();
  });

  it('refuses while another program holds the database open', async () => {
    const config = testConfig();
    new AgentCore(config, silentLogger).close();
    const dir = tempDir();
    const source = new AgentCore(testConfig(), silentLogger);
    const backup = (await backupDatabase(source.tillDb, dir, 3)).file;
    source.close();
    const till = new Database(databasePath(config.dataDir), { readonly: true });
    till.prepare('SELECT count(*) FROM pos_prices').get();
    try {
      await assert.rejects(restoreDatabase(config, backup), (err: Error & { id?: string }) => err.id === 'database_in_use');
    } finally {
      till.close();
    }
    await restoreDatabase(config, backup);
  });
});

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { startTestAgent } from '../../helpers/agent';
import { item, price, tempDir, testConfig, update } from '../../helpers/fixtures';
import { checkBackupFile } from '../../../src/ops/backup/candidate';
import { listBackups } from '../../../src/ops/backup/files';
import { restoreDatabase, restoreJournalFile } from '../../../src/ops/backup/restore';
import { BackupService } from '../../../src/ops/backup/service';
import { backupDatabase } from '../../../src/ops/backup/write';
import { startAgent } from '../../../src/ops/startup';
import { ConfigError } from '../../../src/errors';
import { InstanceService } from '../../../src/ops/instance';
import { backupDir } from '../../../src/ops/paths';
import { silentLogger } from '../../../src/log';
import { databasePath, storeFilePath } from '../../../src/store/database';
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
    assert.match(cli.stdout, /gap: update 10:105 \(received [^)]*\) needs update 104, which has not arrived/);

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
      for (let day = 1; day <= 5; day++) await backupDatabase({ agent: core.agentDb, till: core.tillDb }, dir, config.backup.keep, new Date(`2026-01-0${day}T03:00:00.000Z`));
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
      for (let i = 0; i < 300; i++) core.agentDb.prepare("INSERT INTO audit_log (at, actor, action, details) VALUES ('x', 'y', 'z', ?)").run('p'.repeat(500));
      good = (await backupDatabase({ agent: core.agentDb, till: core.tillDb }, dir, 10)).file;
    } finally {
      core.close();
    }
    assert.equal(checkBackupFile(good).ok, true);

    const copySet = (name: string): string => {
      const to = path.join(dir, name);
      fs.cpSync(good, to, { recursive: true });
      return to;
    };
    // Newer agent: a migration this build does not know.
    const newer = copySet('newer');
    const db = new Database(path.join(newer, 'agent.db'));
    db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, 'future', 'now')").run();
    db.close();
    await assert.rejects(restoreDatabase(config, newer), /migrations this agent does not know \(99-future\)/);

    // Corrupt: overwrite pages in the middle of agent.db.
    const corrupt = copySet('corrupt');
    const bytes = fs.readFileSync(path.join(good, 'agent.db'));
    for (let i = 4096 * 2; i < bytes.length - 4096; i += 7) bytes[i] = (bytes[i]! + 1) & 0xff;
    fs.writeFileSync(path.join(corrupt, 'agent.db'), bytes);
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
    assert.match(checkBackupFile(foreign).problems.join(), /not a pos-sync-agent/);
    // Files from two different sets do not go together: agent.db says applied what pos-sync.db lacks.
    const mixed = copySet('mixed');
    const other2 = new AgentCore(testConfig(), silentLogger);
    try {
      await backupDatabase({ agent: other2.agentDb, till: other2.tillDb }, path.join(dir, 'empty-sets'), 10);
    } finally {
      other2.close();
    }
    const emptySet = listBackups(path.join(dir, 'empty-sets'))[0]!.file;
    fs.copyFileSync(path.join(emptySet, 'pos-sync.db'), path.join(mixed, 'pos-sync.db'));
    const mixedAgent = new Database(path.join(mixed, 'agent.db'));
    mixedAgent.prepare("INSERT INTO inbox (location_id, change_sequence, parent_change_sequence, body_kept, body_bytes, body_sha256, received_at, source, state) VALUES (1, 2, 1, 0, 0, 'x', 'now', 'webhook', 'applied')").run();
    mixedAgent.close();
    assert.match(checkBackupFile(mixed).problems.join(), /not from the same set/);
    // A set missing a file.
    const partialSet = copySet('no-till');
    fs.rmSync(path.join(partialSet, 'pos-sync.db'));
    assert.match(checkBackupFile(partialSet).problems.join(), /the set has no pos-sync\.db/);

    // The live files were never touched by the refusals.
    const live = new Database(storeFilePath(config.dataDir, 'agent'), { readonly: true });
    assert.equal((live.prepare('SELECT count(*) AS n FROM audit_log').get() as { n: number }).n, 300);
    live.close();
  });

  it('a set holds agent.db and pos-sync.db, and staff.db only with backup.includeStaff', async () => {
    for (const includeStaff of [false, true]) {
      const config = testConfig({ backup: { includeStaff } });
      const t = await startTestAgent({ dataDir: config.dataDir, backup: { includeStaff } }, { services: [new BackupService(config, silentLogger)] });
      t.agent.core.staffDb.prepare("INSERT INTO staff_employees (employee_id, display_name, search_text, raw, refreshed_at) VALUES (1, 'Zoë Müller', 'zoe', '{}', 'now')").run();
      const made = (await t.agent.service<BackupService>('backup')!.backupNow())!;
      assert.deepEqual(fs.readdirSync(made.file).sort(), ['agent.db', 'manifest.json', 'pos-sync.db', ...(includeStaff ? ['staff.db'] : [])].sort());
      const manifest = JSON.parse(fs.readFileSync(path.join(made.file, 'manifest.json'), 'utf8')) as { includesStaff: boolean };
      assert.equal(manifest.includesStaff, includeStaff);
      assert.equal(checkBackupFile(made.file).ok, true);
      await t.agent.stop();
    }
  });

  it('staff purge also deletes the staff data in the agent\'s backups, which stay restorable', async () => {
    const config = testConfig({ backup: { includeStaff: true } });
    const t = await startTestAgent({ dataDir: config.dataDir, backup: { includeStaff: true } }, { services: [new BackupService(config, silentLogger)] });
    assert.equal((await t.post(chain(1))).status, 200);
    await t.settle();
    t.agent.core.staffDb.prepare("INSERT INTO staff_employees (employee_id, display_name, search_text, raw, refreshed_at) VALUES (1, 'Zoë Müller', 'zoe', '{}', 'now')").run();
    const routine = (await t.agent.service<BackupService>('backup')!.backupNow())!;
    await t.agent.stop();
    // A restore saves the live set, staff.db included, as pre-restore-<time>.
    const restored = await restoreDatabase(config, routine.file);
    const preRestore = restored.previousSavedAs!;
    // 0.1's files: a routine 0.1 backup in the backup folder, and the upgrade's copy in <dataDir>/backups.
    const fixture = path.join(__dirname, '..', '..', 'fixtures', 'legacy-0.1', 'pos-sync.db');
    const legacyBackup = path.join(backupDir(config), 'pos-sync-20261101T030000000Z.db');
    const splitCopy = path.join(config.dataDir, 'backups', 'pre-0.2-split-20261102T030000000Z.db');
    fs.copyFileSync(fixture, legacyBackup);
    fs.copyFileSync(fixture, splitCopy);
    // A set a crash left half-written (no manifest yet) still holds staff.db.
    const partial = path.join(backupDir(config), 'backup-20261103T030000000Z.partial');
    fs.mkdirSync(partial);
    fs.copyFileSync(path.join(routine.file, 'staff.db'), path.join(partial, 'staff.db'));
    // A 0.1-named file that is not a database: reported, and the others are purged all the same.
    const broken = path.join(backupDir(config), 'pos-sync-20261104T030000000Z.db');
    fs.writeFileSync(broken, 'not a database');
    // Not the agent's naming: never touched.
    const foreign = path.join(backupDir(config), 'my-copy');
    fs.mkdirSync(foreign);
    fs.copyFileSync(path.join(routine.file, 'staff.db'), path.join(foreign, 'staff.db'));
    const personal = /Zo\u00eb|Zoe|M\u00fcller|Muller/i;
    const bytesOf = (file: string): string => fs.readFileSync(file).toString('latin1') + fs.readFileSync(file).toString('utf8');
    for (const file of [path.join(routine.file, 'staff.db'), path.join(preRestore, 'staff.db'), legacyBackup, splitCopy]) assert.match(bytesOf(file), personal, `${file} holds the name before the purge`);

    const configFile = path.join(config.dataDir, 'config.json');
    fs.writeFileSync(configFile, JSON.stringify({ dataDir: config.dataDir, backup: { includeStaff: true }, employees: { baseUrl: 'http://127.0.0.1:9', organisationId: 1 } }));
    const cli = spawnSync(process.execPath, [CLI, 'staff', 'purge', '--yes', '--json', '--config', configFile], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(cli.status, 1, 'one copy could not be purged: the command fails');
    assert.match(cli.stderr, /could not purge the staff data in .*pos-sync-20261104T030000000Z\.db/);
    const report = JSON.parse(cli.stdout) as { backupsPurged: { sets: string[]; legacyFiles: string[]; failed: { file: string }[] } };
    assert.deepEqual(report.backupsPurged.failed.map((f) => path.basename(f.file)), [path.basename(broken)]);
    assert.equal(fs.existsSync(path.join(partial, 'staff.db')), false, 'the half-written set is purged too');
    // Every set the agent made (the service also backs up on start), the pre-restore set among them.
    const setsWithStaff = [...listBackups(backupDir(config)).filter((b) => b.kind === 'set').map((b) => b.name), path.basename(preRestore), path.basename(partial)].sort();
    assert.ok(setsWithStaff.length >= 2 && setsWithStaff.includes(path.basename(routine.file)));
    assert.deepEqual(report.backupsPurged.sets.map((f) => path.basename(f)).sort(), setsWithStaff);
    assert.deepEqual(report.backupsPurged.legacyFiles.map((f) => path.basename(f)).sort(), [path.basename(legacyBackup), path.basename(splitCopy)].sort());

    for (const set of [routine.file, preRestore]) {
      assert.equal(fs.existsSync(path.join(set, 'staff.db')), false);
      const manifest = JSON.parse(fs.readFileSync(path.join(set, 'manifest.json'), 'utf8')) as { includesStaff: boolean; files: { kind: string }[]; staffPurgedAt?: string };
      assert.equal(manifest.includesStaff, false);
      assert.deepEqual(manifest.files.map((f) => f.kind).sort(), ['agent', 'till']);
      assert.ok(manifest.staffPurgedAt);
      const check = checkBackupFile(set);
      assert.deepEqual([check.ok, check.includesStaff, check.problems], [true, false, []]);
    }
    for (const file of [legacyBackup, splitCopy]) {
      assert.doesNotMatch(bytesOf(file), personal, `no page of ${file} keeps the name`);
      const check = checkBackupFile(file);
      assert.equal(check.ok, true, check.problems.join('; '));
      const db = new Database(file, { readonly: true });
      assert.equal((db.prepare('SELECT count(*) AS n FROM staff_employees').get() as { n: number }).n, 0);
      assert.equal((db.prepare('SELECT count(*) AS n FROM inbox').get() as { n: number }).n, 6, 'the menu and inbox are kept');
      db.close();
    }
    assert.ok(fs.existsSync(path.join(foreign, 'staff.db')), 'a copy the agent did not make is not its to delete');
    // The purged pre-restore set still restores: menu back, staff cache left as it is (empty).
    await restoreDatabase(config, preRestore);
    const core = new AgentCore(config, silentLogger);
    try {
      assert.equal(core.status()[0]!.lastChangeSequence, 101);
      assert.equal((core.staffDb.prepare('SELECT count(*) AS n FROM staff_employees').get() as { n: number }).n, 0);
    } finally {
      core.close();
    }
  });

  it('restores a 0.1 single-file backup: it becomes the till file and is split on the next start', async () => {
    const config = testConfig();
    new AgentCore(config, silentLogger).close();
    const dir = backupDir(config);
    fs.mkdirSync(dir, { recursive: true });
    const old = path.join(dir, 'pos-sync-20261101T030000000Z.db');
    fs.copyFileSync(path.join(__dirname, '..', '..', 'fixtures', 'legacy-0.1', 'pos-sync.db'), old);
    assert.deepEqual(listBackups(dir).map((b) => [b.name, b.kind]), [['pos-sync-20261101T030000000Z.db', 'single-file']]);
    const result = await restoreDatabase(config, old);
    assert.equal(result.check.kind, 'single-file');
    assert.deepEqual(result.check.locations, [{ locationId: 200, lastChangeSequence: 10 }, { locationId: 3021, lastChangeSequence: 1043 }]);
    const core = new AgentCore(config, silentLogger);
    try {
      assert.equal((core.agentDb.prepare('SELECT count(*) AS n FROM inbox').get() as { n: number }).n, 6);
      assert.equal((core.staffDb.prepare('SELECT count(*) AS n FROM staff_employees').get() as { n: number }).n, 1);
      assert.equal(core.status().find((s) => s.locationId === 3021)!.lastChangeSequence, 1043);
      assert.ok((core.agentDb.prepare("SELECT count(*) AS n FROM audit_log WHERE action = 'restore'").get() as { n: number }).n >= 1);
    } finally {
      core.close();
    }
  });

  it('refuses while another program holds the database open', async () => {
    const config = testConfig();
    new AgentCore(config, silentLogger).close();
    const dir = tempDir();
    const source = new AgentCore(testConfig(), silentLogger);
    const backup = (await backupDatabase({ agent: source.agentDb, till: source.tillDb }, dir, 3)).file;
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

  it('a file the system will not move (Windows: open in another program) leaves every file as it was', async () => {
    const dataDir = tempDir();
    const config = testConfig({ dataDir });
    const core = new AgentCore(config, silentLogger);
    const backup = (await backupDatabase({ agent: core.agentDb, till: core.tillDb }, tempDir(), 3)).file;
    core.close();
    // Something applied after the backup, so a restore would change the files.
    const t = await startTestAgent({ dataDir });
    assert.equal((await t.post(chain(1))).status, 200);
    await t.settle();
    await t.agent.stop();
    const files = (): Record<string, string> =>
      Object.fromEntries(fs.readdirSync(dataDir).filter((f) => fs.statSync(path.join(dataDir, f)).isFile() && !/\.lock|-shm$/.test(f)).map((f) => [f, fs.readFileSync(path.join(dataDir, f)).toString('base64')]));
    const before = files();
    // Windows refuses to rename a file another program holds without FILE_SHARE_DELETE (a backup or
    // antivirus program, a till in rollback-journal mode): no -wal shows it, the rename is what fails.
    const tillFile = storeFilePath(dataDir, 'till');
    const rename = fs.renameSync;
    fs.renameSync = ((from: fs.PathLike, to: fs.PathLike) => {
      if (String(from) === tillFile) throw Object.assign(new Error(`EPERM: operation not permitted, rename '${tillFile}'`), { code: 'EPERM', path: tillFile });
      rename(from, to);
    }) as typeof fs.renameSync;
    try {
      await assert.rejects(restoreDatabase(config, backup), (err: Error & { id?: string }) => {
        assert.equal(err.id, 'database_in_use');
        assert.match(err.message, /has .*pos-sync\.db open: close it and run the restore again; no file was changed/);
        return true;
      });
    } finally {
      fs.renameSync = rename;
    }
    assert.deepEqual(files(), before, 'agent.db, pos-sync.db and staff.db as they were, nothing staged or aside, no journal');
    assert.equal(fs.existsSync(restoreJournalFile(dataDir)), false);
    // Once the program lets go, the same restore goes through.
    await restoreDatabase(config, backup);
    const till = new Database(tillFile, { readonly: true });
    try {
      assert.equal((till.prepare('SELECT count(*) AS n FROM applied_updates').get() as { n: number }).n, 0);
    } finally {
      till.close();
    }
    assert.deepEqual(fs.readdirSync(dataDir).filter((f) => /\.(replaced|restoring)$/.test(f)), []);
  });

  it('an update received and applied between the copies of agent.db and the till file makes the set be taken again', async () => {
    const t = await startTestAgent({});
    for (const n of [1, 2]) assert.equal((await t.post(chain(n))).status, 200);
    await t.settle();
    const live = { agent: t.agent.core.agentDb, till: t.agent.core.tillDb };
    let tillCopies = 0;
    // The till's copy starts only after a whole delivery went through: stored in agent.db (already
    // copied) and applied to the till file (about to be copied).
    const till = new Proxy(live.till, {
      get(target, prop, receiver) {
        if (prop === 'backup') {
          return async (file: string) => {
            tillCopies += 1;
            if (tillCopies === 1) {
              assert.equal((await t.post(chain(3))).status, 200);
              await t.settle();
            }
            return target.backup(file);
          };
        }
        const value = Reflect.get(target, prop, receiver) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const made = await backupDatabase({ ...live, till }, tempDir(), 3);
    assert.equal(tillCopies, 2, 'the inconsistent first attempt was retaken');
    const check = checkBackupFile(made.file);
    assert.equal(check.ok, true, check.problems.join('; '));
    assert.deepEqual(check.locations, [{ locationId: 10, lastChangeSequence: 103 }]);
  });

  it('refuses a set whose till file names an update agent.db does not hold (files from different sets)', async () => {
    const a = await startTestAgent({});
    for (const n of [1, 2, 3]) await a.post(chain(n));
    await a.settle();
    const b = await startTestAgent({});
    for (const n of [1]) await b.post(chain(n));
    await b.settle();
    const setA = (await backupDatabase({ agent: a.agent.core.agentDb, till: a.agent.core.tillDb }, tempDir(), 3)).file;
    const setB = (await backupDatabase({ agent: b.agent.core.agentDb, till: b.agent.core.tillDb }, tempDir(), 3)).file;
    // A hand-made mix: the till file of A (three applied) with the agent.db of B (one).
    fs.copyFileSync(path.join(setB, 'agent.db'), path.join(setA, 'agent.db'));
    const check = checkBackupFile(setA);
    assert.equal(check.ok, false);
    assert.match(check.problems.join('; '), /pos-sync\.db has update #\d+ \(location 10, ChangeSequence 10[23]\) applied, which agent\.db does not hold: the files are not from the same set/);
  });

  it('a restore cut short between its swaps stops start-up and shows in ops status until it is run again', async () => {
    const dataDir = tempDir();
    const config = testConfig({ dataDir });
    const source = new AgentCore(config, silentLogger);
    const backup = (await backupDatabase({ agent: source.agentDb, till: source.tillDb }, tempDir(), 3)).file;
    source.close();
    // What restoreDatabase leaves when the machine stops between two renames: its journal.
    fs.writeFileSync(restoreJournalFile(dataDir), JSON.stringify({ from: backup, startedAt: '2026-11-22T03:00:00.000Z' }));
    await assert.rejects(startAgent(config, silentLogger, []), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, /dataDir: a restore from .* was cut short.*run `pos-sync-agent restore .*` again, then start the agent/);
      return true;
    });
    const configFile = path.join(dataDir, 'config.json');
    fs.writeFileSync(configFile, JSON.stringify({ dataDir }));
    const ops = spawnSync(process.execPath, [CLI, 'ops', 'status', '--config', configFile], { encoding: 'utf8', timeout: 60_000 });
    assert.match(ops.stdout, /RESTORE INTERRUPTED: the restore from .* did not finish/);
    await restoreDatabase(config, backup);
    assert.equal(fs.existsSync(restoreJournalFile(dataDir)), false, 'a finished restore removes its journal');
    const started = await startAgent(config, silentLogger, []);
    await started.stop();
  });
  it('restore into a 0.1 data folder not split yet keeps its one file whole first, restorable as a 0.1 backup', () => {
    const fixture = path.join(__dirname, '..', '..', 'fixtures', 'legacy-0.1', 'pos-sync.db');
    const cli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 });
    // A set from another site.
    const other = tempDir();
    const otherConfig = path.join(other, 'config.json');
    fs.writeFileSync(otherConfig, JSON.stringify({ dataDir: path.join(other, 'data') }));
    new AgentCore(testConfig({ dataDir: path.join(other, 'data') }), silentLogger).close();
    assert.equal(cli('backup', '--config', otherConfig).status, 0);
    const set = path.join(other, 'data', 'backups', fs.readdirSync(path.join(other, 'data', 'backups')).find((f) => f.startsWith('backup-'))!);
    // The 0.1 folder: its pos-sync.db holds everything 0.1 kept (inbox, menu, staff).
    const old = tempDir();
    const dataDir = path.join(old, 'data');
    fs.mkdirSync(dataDir);
    fs.copyFileSync(fixture, path.join(dataDir, 'pos-sync.db'));
    const config = path.join(old, 'config.json');
    // The staff interface configured (never reached here): `staff purge` needs the section.
    fs.writeFileSync(config, JSON.stringify({ dataDir, employees: { baseUrl: 'http://127.0.0.1:9', organisationId: 1 } }));
    const inboxRows = (file: string): number => {
      const db = new Database(file, { readonly: true, fileMustExist: true });
      try {
        return (db.prepare('SELECT count(*) AS n FROM inbox').get() as { n: number }).n;
      } finally {
        db.close();
      }
    };
    const before = inboxRows(fixture);
    assert.ok(before > 0);
    const r = cli('restore', set, '--config', config);
    assert.equal(r.status, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /No data in/);
    // The file itself is named, as restore takes it back.
    const saved = /The files it replaced are kept as (\S+\.db)\.\n/.exec(r.stdout)?.[1];
    assert.ok(saved, r.stdout);
    assert.equal(path.basename(saved), 'pos-sync.db');
    assert.equal(inboxRows(saved), before, "0.1's rows, every one");
    assert.equal(fs.statSync(saved).mode & 0o777, 0o600);
    assert.equal(checkBackupFile(saved).kind, 'single-file', 'restorable as a 0.1 backup');
    // `staff purge` finds the staff in it too (0.1 kept its staff cache in that one file).
    const staffRows = (): number => {
      const db = new Database(saved, { readonly: true, fileMustExist: true });
      try {
        return (db.prepare('SELECT count(*) AS n FROM staff_employees').get() as { n: number }).n;
      } finally {
        db.close();
      }
    };
    assert.ok(staffRows() > 0, 'the 0.1 file held staff records');
    const purge = cli('staff', 'purge', '--yes', '--json', '--config', config);
    assert.equal(purge.status, 0, purge.stderr);
    assert.ok((JSON.parse(purge.stdout) as { backupsPurged: { legacyFiles: string[] } }).backupsPurged.legacyFiles.includes(saved), purge.stdout);
    assert.equal(staffRows(), 0, 'staff records left in the kept 0.1 file');
    // And restoring it brings the 0.1 data back (split again at the next open).
    const back = cli('restore', saved, '--config', config);
    assert.equal(back.status, 0, back.stderr);
    const core = new AgentCore(testConfig({ dataDir }), silentLogger);
    try {
      // Its inbox and menu, every row (its staff cache went with the purge).
      assert.equal((core.agentDb.prepare('SELECT count(*) AS n FROM inbox').get() as { n: number }).n, before);
    } finally {
      core.close();
    }
  });
});

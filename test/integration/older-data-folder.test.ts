import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { acquireAgentLock, InstanceService } from '../../src/ops/instance';
import { MIGRATIONS_FOR, openDatabase, storeFilePath, type StoreFileKind } from '../../src/store/database';
import { olderStoreFiles } from '../../src/store/upgrade';
import { runCli, withChildAgent, writeConfig } from '../helpers/child-agent';
import { samplePath, tempDir } from '../helpers/fixtures';
import { folderWithSamples } from '../helpers/sample-folder';

/**
 * A data folder an older version left (docs/operations.md, "Upgrade"): only the agent's start
 * upgrades it. Every other command that opens it refuses it (`site_not_upgraded`) and changes
 * nothing, so the older version (its agent perhaps still running on the folder) can still use it.
 */

const KINDS: readonly StoreFileKind[] = ['till', 'agent', 'staff'];

/** The migrations 0.2 shipped: pos-sync.db 1-4 (005 came after), agent.db 1-3 (004 after), staff.db 1. */
const OLDER: Readonly<Record<StoreFileKind, number>> = { till: 4, agent: 3, staff: 1 };
const olderMigrations = (kind: StoreFileKind): (typeof MIGRATIONS_FOR)[StoreFileKind] => MIGRATIONS_FOR[kind].filter((m) => m.version <= OLDER[kind]);

function columnsOf(db: Database.Database, schema: string, table: string): string[] {
  return (db.prepare(`PRAGMA ${schema}.table_info("${table}")`).all() as { name: string }[]).map((c) => c.name);
}

/**
 * A folder as 0.2 left it, with the three sample updates applied: each file made at 0.2's migrations
 * (this build's writer, as till-migration-005.test.ts does), then the rows of a folder this build
 * filled copied into it (the migrations since 0.2 add indexes and a table, no column).
 */
function olderSite(): { dir: string; dataDir: string; config: string } {
  const source = folderWithSamples('pos-sync-older-src-');
  const dir = tempDir('pos-sync-older-');
  const dataDir = path.join(dir, 'data');
  for (const kind of KINDS) {
    const db = openDatabase(storeFilePath(dataDir, kind), { kind, migrations: olderMigrations(kind) });
    try {
      db.pragma('foreign_keys = OFF');
      db.prepare('ATTACH DATABASE ? AS src').run(storeFilePath(source, kind));
      const tables = (db.prepare("SELECT name FROM main.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations'").all() as { name: string }[]).map((t) => t.name);
      db.transaction(() => {
        for (const table of tables) {
          const theirs = new Set(columnsOf(db, 'src', table));
          const list = columnsOf(db, 'main', table).filter((c) => theirs.has(c)).map((c) => `"${c}"`).join(', ');
          db.exec(`INSERT INTO main."${table}" (${list}) SELECT ${list} FROM src."${table}"`);
        }
      })();
      db.exec('DETACH DATABASE src');
    } finally {
      db.close();
    }
  }
  const config = writeConfig(dir, { dataDir, webhook: { port: 0 }, admin: { enabled: false }, backup: { enabled: false }, sync: { pollIntervalMs: 100, baselineSettleSeconds: 0 } });
  return { dir, dataDir, config };
}

/**
 * Every file under the folder, with its SHA-256. With `running`, the `-shm` files (which readers of a
 * WAL file write) and the lock file by name only: reading the lock file here would drop this
 * process's lock on it (POSIX locks end when any descriptor of the file is closed).
 */
function snapshot(dir: string, options: { running?: boolean } = {}): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, entry.name);
      const rel = path.relative(dir, full);
      if (entry.isDirectory()) {
        out[`${rel}/`] = 'folder';
        walk(full);
      } else if (options.running && (entry.name.endsWith('-shm') || entry.name.startsWith('agent.lock'))) out[rel] = 'present';
      else out[rel] = crypto.createHash('sha256').update(fs.readFileSync(full)).digest('hex');
    }
  };
  walk(dir);
  return out;
}

/**
 * Each file's schema_migrations and journal mode, read from a copy of its bytes in memory: reading
 * them so changes nothing on disk (a connection to the file would make its -wal and -shm).
 */
function schemaOf(dataDir: string): Record<string, { versions: number[]; journal: string }> {
  const out: Record<string, { versions: number[]; journal: string }> = {};
  for (const kind of KINDS) {
    const bytes = fs.readFileSync(storeFilePath(dataDir, kind));
    // The header's read/write versions: 2 in WAL mode, 1 with a rollback journal.
    const journal = bytes[18] === 2 ? 'wal' : 'rollback';
    // An in-memory copy cannot be in WAL mode: read it as a rollback-journal file.
    bytes[18] = 1;
    bytes[19] = 1;
    const db = new Database(bytes);
    try {
      out[kind] = {
        versions: (db.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as { version: number }[]).map((r) => r.version),
        journal,
      };
    } finally {
      db.close();
    }
  }
  return out;
}

const OLDER_SCHEMA = { till: [1, 2, 3, 4], agent: [1, 2, 3], staff: [1] };
const versionsOf = (dataDir: string): Record<string, number[]> => Object.fromEntries(Object.entries(schemaOf(dataDir)).map(([k, v]) => [k, v.versions]));

/** Commands that read the folder, and commands that change it (directly, with no agent running). */
const COMMANDS: readonly (readonly string[])[] = [
  ['status'],
  ['status', '--json'],
  ['lookup', '--plu', '1001', '--location', '3021', '--date', '2026-12-25'],
  ['changes', '--location', '3021', '--from', '2026-12-01'],
  ['deliveries'],
  ['audit'],
  ['conflicts'],
  ['staff', 'locations'],
  ['admin-url'],
  ['pause', '--reason', 'checking the upgrade'],
  ['resume'],
  ['ack-warnings'],
  ['import', samplePath('02')],
];

function assertRefused(r: ReturnType<typeof runCli>, args: readonly string[], dataDir: string): void {
  const line = args.join(' ');
  assert.equal(r.status, 1, `${line}: ${r.stdout}${r.stderr}`);
  if (args.includes('--json')) {
    const error = (JSON.parse(r.stderr) as { error: { id: string; message: string } }).error;
    assert.equal(error.id, 'site_not_upgraded', line);
    assert.match(error.message, /was last used by an older version of the agent/, line);
    return;
  }
  // The folder, which files lack what, what to do, and that nothing changed.
  assert.ok(r.stderr.startsWith(`${dataDir} was last used by an older version of the agent (`), `${line}: ${r.stderr}`);
  assert.match(r.stderr, /pos-sync\.db needs migration 5-till-ranges-by-end-date; agent\.db needs migrations 4-body-files, 5-deliveries-by-update;/, line);
  assert.match(r.stderr, /Start the agent \(pos-sync-agent serve --config \S+, or the service\) to upgrade it first, or use the older version's commands; nothing was changed\.( An agent \(pid \d+\) runs on it [^\n]*)? \[site_not_upgraded\]\n$/, line);
}

describe('a data folder an older version left', () => {
  it('is refused by every command that would open it, which changes no byte and creates no file', () => {
    const { dir, dataDir, config } = olderSite();
    assert.deepEqual(versionsOf(dataDir), OLDER_SCHEMA);
    const before = snapshot(dir);
    const schema = schemaOf(dataDir);
    for (const args of COMMANDS) {
      assertRefused(runCli(config, args), args, dataDir);
      assert.deepEqual(snapshot(dir), before, `${args.join(' ')} changed the folder`);
    }
    // Nothing migrated, no journal mode switched (the till's file as 0.2 left it).
    assert.deepEqual(schemaOf(dataDir), schema);
  });

  it('is refused while the older agent still runs on it, which then carries on with it', () => {
    const { dataDir, config } = olderSite();
    // The older agent, played here: the folder's lock and pid file, its connections open (WAL, -wal
    // and -shm beside each file), knowing only 0.2's migrations, with a commit in the WAL.
    const lock = acquireAgentLock(dataDir);
    const instance = new InstanceService();
    const open = KINDS.map((kind) => openDatabase(storeFilePath(dataDir, kind), { kind, migrations: olderMigrations(kind) }));
    try {
      void instance.start({ config: { dataDir } });
      const agent = open[1]!;
      agent.prepare('INSERT INTO audit_log (at, actor, action, details) VALUES (?, ?, ?, ?)').run(new Date().toISOString(), 'test', 'older-agent-runs', '{}');
      const before = snapshot(dataDir, { running: true });
      for (const args of [['status'], ['lookup', '--plu', '1001'], ['pause']]) {
        const r = runCli(config, args);
        assertRefused(r, args, dataDir);
        assert.match(r.stderr, new RegExp(`An agent \\(pid ${process.pid}\\) runs on it and has not upgraded it: an older version, or one still starting\\. To upgrade, stop it \\(`), args.join(' '));
        assert.deepEqual(snapshot(dataDir, { running: true }), before, `${args.join(' ')} changed the folder`);
      }
      // The older agent still writes, and still finds only the migrations it knows.
      agent.prepare('INSERT INTO audit_log (at, actor, action, details) VALUES (?, ?, ?, ?)').run(new Date().toISOString(), 'test', 'still-running', '{}');
    } finally {
      for (const db of open) db.close();
      void instance.stop();
      lock.release();
    }
    assert.deepEqual(versionsOf(dataDir), OLDER_SCHEMA);
    for (const kind of KINDS) openDatabase(storeFilePath(dataDir, kind), { kind, migrations: olderMigrations(kind) }).close();
  });

  it('is read without a trace: no -wal or -shm left beside a WAL file, no journal beside a rollback one, a writer\'s WAL left as it is', () => {
    const { dataDir } = olderSite();
    // The till's file as a clean stop leaves it for a till reading as another account (rollback journal).
    const till = new Database(storeFilePath(dataDir, 'till'));
    till.pragma('journal_mode = DELETE');
    till.close();
    const before = snapshot(dataDir);
    assert.ok(!Object.keys(before).some((f) => /-(wal|shm|journal)$/.test(f)), 'a stopped folder has no -wal, -shm or -journal');
    const expected = [
      ['pos-sync.db', ['5-till-ranges-by-end-date']],
      ['agent.db', ['4-body-files', '5-deliveries-by-update']],
    ];
    assert.deepEqual(olderStoreFiles(dataDir).map((f) => [f.name, f.missing]), expected);
    assert.deepEqual(snapshot(dataDir), before);
    assert.deepEqual(
      Object.fromEntries(Object.entries(schemaOf(dataDir)).map(([k, v]) => [k, v.journal])),
      { till: 'rollback', agent: 'wal', staff: 'wal' },
    );
    // With a writer connection open, its uncheckpointed commit is read and left in its -wal.
    const writer = openDatabase(storeFilePath(dataDir, 'agent'), { kind: 'agent', migrations: olderMigrations('agent') });
    try {
      writer.pragma('wal_autocheckpoint = 0');
      writer.prepare('INSERT INTO audit_log (at, actor, action, details) VALUES (?, ?, ?, ?)').run(new Date().toISOString(), 'test', 'in-the-wal', '{}');
      const running = snapshot(dataDir, { running: true });
      assert.deepEqual(olderStoreFiles(dataDir).map((f) => [f.name, f.missing]), expected);
      assert.deepEqual(snapshot(dataDir, { running: true }), running);
    } finally {
      writer.close();
    }
  });

  it('is upgraded by the agent\'s start; then the same commands work', async () => {
    const { dataDir, config } = olderSite();
    assert.equal(runCli(config, ['status']).status, 1);
    await withChildAgent(config, async () => {
      // While the new agent runs, a command reads the upgraded folder.
      const r = runCli(config, ['status', '--json']);
      assert.equal(r.status, 0, r.stderr);
    });
    assert.deepEqual(versionsOf(dataDir), Object.fromEntries(KINDS.map((k) => [k, MIGRATIONS_FOR[k].map((m) => m.version)])));
    const christmas = runCli(config, ['lookup', '--plu', '1001', '--location', '3021', '--date', '2026-12-25', '--json']);
    assert.equal(christmas.status, 0, christmas.stderr);
    const answer = JSON.parse(christmas.stdout) as { items: { prices: { tariffName: string; sellPrice: string }[] }[] };
    assert.deepEqual(answer.items[0]!.prices.map((p) => [p.tariffName, p.sellPrice]), [
      ['Eat In', '15.00'],
      ['Take Away', '10.95'],
    ]);
    for (const args of COMMANDS.filter((a) => !['admin-url', 'staff', 'import'].includes(a[0]!))) {
      const r = runCli(config, args);
      assert.equal(r.status, 0, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
      assert.doesNotMatch(r.stderr, /site_not_upgraded/);
    }
  });

  it('is backed up, compacted and described by ops status as it is, still the older version\'s', () => {
    const { dir, dataDir, config } = olderSite();
    for (const args of [['backup'], ['backup', 'list'], ['ops', 'status'], ['compact']]) {
      const r = runCli(config, args);
      assert.equal(r.status, 0, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    }
    assert.deepEqual(versionsOf(dataDir), OLDER_SCHEMA);
    // The backup set holds the older files as they were (the older version's restore takes them).
    const set = fs.readdirSync(path.join(dataDir, 'backups')).find((f) => !f.startsWith('.'));
    assert.ok(set, `a backup in ${dir}`);
    const copy = fs.readFileSync(path.join(dataDir, 'backups', set, 'agent.db'));
    copy[18] = 1;
    copy[19] = 1;
    const agentCopy = new Database(copy);
    try {
      assert.deepEqual((agentCopy.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as { version: number }[]).map((r) => r.version), OLDER_SCHEMA.agent);
    } finally {
      agentCopy.close();
    }
  });

  it('is restored over, upgraded, with the files it replaced saved aside as the older version left them', () => {
    const { dataDir, config } = olderSite();
    assert.equal(runCli(config, ['backup']).status, 0);
    const set = fs.readdirSync(path.join(dataDir, 'backups')).find((f) => !f.startsWith('.'))!;
    const restored = runCli(config, ['restore', path.join(dataDir, 'backups', set)]);
    assert.equal(restored.status, 0, `${restored.stdout}${restored.stderr}`);
    assert.notDeepEqual(versionsOf(dataDir), OLDER_SCHEMA, 'restore upgrades what it puts in place');
    const aside: string | undefined = fs.readdirSync(path.join(dataDir, 'backups')).find((f) => f.startsWith('pre-restore-'));
    assert.ok(aside !== undefined, 'the replaced files were saved aside');
    for (const [file, kind] of [['agent.db', 'agent'], ['pos-sync.db', 'till']] as const) {
      const copy: Buffer = fs.readFileSync(path.join(dataDir, 'backups', aside, file));
      copy[18] = 1;
      copy[19] = 1;
      const db: Database.Database = new Database(copy);
      try {
        assert.deepEqual((db.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as { version: number }[]).map((r) => r.version), OLDER_SCHEMA[kind], file);
      } finally {
        db.close();
      }
    }
  });
});

import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { REPO_ROOT, writeConfig } from '../../helpers/child-agent';
import { sampleBodies, tempDir } from '../../helpers/fixtures';
import { nobodyCanRead, reachableByNobody } from '../../helpers/second-user';

/**
 * Issue 10, point 2: everything the agent writes is owner-only, except the till's own file for a
 * configured group. Proven with a real second OS user (nobody, via setpriv) after a real `serve` ran
 * under a permissive umask (022), as a site's default shell would give it.
 */

const CLI = path.join(REPO_ROOT, 'bin', 'pos-sync-agent.cjs');
const STAND_IN = path.join(REPO_ROOT, 'test', 'helpers', 'ops', 'stand-in-tunnel.mjs');
const SQLITE = path.dirname(require.resolve('better-sqlite3/package.json'));
const READER_GROUP = 'pos-till-test';

/** Runs as nobody (and optionally with one supplementary group); root bypasses permissions, nobody does not. */
function asNobody(args: string[], groups: number[] = [], env: NodeJS.ProcessEnv = {}): { status: number | null; out: string } {
  const r = spawnSync('setpriv', ['--reuid=nobody', '--regid=nogroup', groups.length > 0 ? `--groups=${groups.join(',')}` : '--clear-groups', ...args], {
    encoding: 'utf8',
    cwd: '/',
    env: { PATH: process.env.PATH, ...env },
    timeout: 30_000,
  });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

/** `cmd` under umask 022 (a default shell's), the way a site would start the agent by hand. */
function underUmask022(args: string[]): string[] {
  return ['sh', '-c', 'umask 022; exec "$@"', 'sh', ...args];
}

async function serveUnderUmask022(config: string, env: NodeJS.ProcessEnv = {}): Promise<{ child: ChildProcess; url: string; stop(): Promise<void> }> {
  const [cmd, ...args] = underUmask022([process.execPath, CLI, 'serve', '--config', config]);
  const child = spawn(cmd!, args, { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stderr!.on('data', (c) => (out += c));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (c) => {
      out += c;
      const m = /Receiving menu cycle updates at (\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`serve exited ${code}:\n${out}`)));
  });
  return {
    child,
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

function cliUnderUmask022(config: string, args: string[], input?: string): { status: number | null; out: string } {
  const [cmd, ...rest] = underUmask022([process.execPath, CLI, ...args, '--config', config]);
  const r = spawnSync(cmd!, rest, { encoding: 'utf8', input, timeout: 60_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

function allEntries(dir: string): { file: string; directory: boolean }[] {
  const out: { file: string; directory: boolean }[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    out.push({ file: full, directory: entry.isDirectory() });
    if (entry.isDirectory()) out.push(...allEntries(full));
  }
  return out;
}

async function waitFor(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 600 && !check(); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(check(), `timed out waiting for ${what}`);
}

/** The token `secrets set` stores below: a tunnelled webhook needs one (issue 10, point 1). */
const WEBHOOK_TOKEN = 'head-office-token-0042';

function post(url: string, body: Buffer, token: string | null = null): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body });
}

/** A folder nobody can traverse to, so only the agent's own modes decide what nobody reads. */
function openParent(): string {
  const dir = tempDir();
  fs.chmodSync(dir, 0o755);
  return dir;
}

function readPosAsNobody(dbFile: string, groups: number[]): { status: number | null; out: string } {
  const script = `const D = require(process.env.SQLITE); const db = new D(process.env.DB, { readonly: true, fileMustExist: true }); console.log(JSON.stringify(db.prepare('SELECT count(*) AS n FROM pos_prices').get()));`;
  return asNobody([reachableByNobody(process.execPath), '-e', script], groups, { SQLITE: reachableByNobody(SQLITE), DB: dbFile });
}

describe('private files, checked as a second OS user', () => {
  it('the test runs as root, so it can switch to nobody (CI does)', () => {
    assert.equal(process.getuid?.(), 0, 'run these tests as root: they read the files as nobody through setpriv');
  });

  it('what nobody must run or read is copied where nobody can reach it when the clone is in a private folder', () => {
    const closed = tempDir();
    fs.chmodSync(closed, 0o700);
    const folder = path.join(closed, 'inner');
    fs.mkdirSync(folder);
    fs.writeFileSync(path.join(folder, 'file'), 'x', { mode: 0o600 });
    assert.equal(nobodyCanRead(path.join(folder, 'file')), false, 'the original is closed to nobody');
    const copy = reachableByNobody(folder);
    assert.notEqual(copy, folder);
    assert.equal(asNobody(['cat', path.join(copy, 'file')]).out, 'x', 'nobody reads the copy');
    fs.chmodSync(closed, 0o755);
    fs.chmodSync(path.join(folder, 'file'), 0o644);
    const open = path.join(closed, 'open-file');
    fs.writeFileSync(open, 'y', { mode: 0o644 });
    assert.equal(reachableByNobody(open), open, 'a path nobody can read is used where it is');
  });

  it('after serve, backup, diagnose and secrets set under umask 022, nobody can read nothing the agent wrote', async () => {
    const parent = openParent();
    const dataDir = path.join(parent, 'data');
    // A site upgraded from an older version: a world-readable folder and log from before.
    fs.mkdirSync(path.join(dataDir, 'logs'), { recursive: true, mode: 0o755 });
    fs.chmodSync(dataDir, 0o755);
    fs.writeFileSync(path.join(dataDir, 'logs', 'agent.old.log'), 'an old log line naming a sender\n', { mode: 0o644 });
    fs.chmodSync(path.join(dataDir, 'logs', 'agent.old.log'), 0o644);
    const control = path.join(parent, 'control.txt');
    fs.writeFileSync(control, 'readable by anyone');
    fs.chmodSync(control, 0o644);
    assert.equal(asNobody(['cat', control]).status, 0, 'control: nobody can read a world-readable file here, so a refusal below is the agent\'s doing');

    const config = writeConfig(parent, {
      dataDir,
      webhook: { port: 0 },
      admin: { port: 0 },
      tunnel: { command: process.execPath, args: [STAND_IN, '--listen', '0', '--target', '{webhookPort}', '--control', path.join(parent, 'tunnel-control')], publicUrl: 'http://127.0.0.1:9' },
    });
    fs.chmodSync(config, 0o644);
    assert.equal(cliUnderUmask022(config, ['secrets', 'set', 'employees.auth.token'], 'employee-api-secret').status, 0);
    assert.equal(cliUnderUmask022(config, ['secrets', 'set', 'webhook.bearerToken'], WEBHOOK_TOKEN).status, 0);
    const agent = await serveUnderUmask022(config);
    try {
      for (const b of sampleBodies()) assert.equal((await post(agent.url, b.raw, WEBHOOK_TOKEN)).status, 200);
      await waitFor('the first backup', () => fs.existsSync(path.join(dataDir, 'backups')) && fs.readdirSync(path.join(dataDir, 'backups')).some((f) => /^backup-\d{8}T\d+Z$/.test(f)));
      await waitFor('the tunnel state', () => fs.existsSync(path.join(dataDir, 'tunnel-state.json')));
      const backup = cliUnderUmask022(config, ['backup']);
      assert.equal(backup.status, 0, backup.out);
      const diagnose = cliUnderUmask022(config, ['diagnose']);
      assert.equal(diagnose.status, 0, diagnose.out);

      const entries = allEntries(dataDir);
      const names = entries.map((e) => path.relative(dataDir, e.file));
      for (const expected of ['pos-sync.db', 'pos-sync.db-wal', 'pos-sync.db-shm', 'agent.lock', 'agent.pid', 'admin-token', 'secrets.json', 'tunnel-state.json', 'logs/agent.log', 'logs/agent.old.log']) {
        assert.ok(names.includes(expected), `${expected} exists (${names.join(', ')})`);
      }
      assert.ok(names.some((n) => /^diagnostics\/.*\.zip$/.test(n)), 'the diagnostics zip exists');
      assert.ok(names.filter((n) => /^backups\/backup-[^/]+\/pos-sync\.db$/.test(n)).length >= 2, 'the scheduled and the manual backup exist');

      assert.equal(fs.statSync(dataDir).mode & 0o7777, 0o700, 'the data folder is 0700');
      for (const e of entries) assert.equal(fs.statSync(e.file).mode & 0o7777, e.directory ? 0o700 : 0o600, `${path.relative(dataDir, e.file)}`);
      assert.notEqual(asNobody(['ls', dataDir]).status, 0, 'nobody cannot list the data folder');
      for (const e of entries.filter((x) => !x.directory)) {
        const r = asNobody(['cat', e.file]);
        assert.notEqual(r.status, 0, `nobody read ${path.relative(dataDir, e.file)}`);
        assert.match(r.out, /Permission denied/);
      }
      assert.notEqual(readPosAsNobody(path.join(dataDir, 'pos-sync.db'), []).status, 0, 'with no reader group, not even the till file');
    } finally {
      await agent.stop();
    }
  });

  it('till.readerGroup: that group reads pos-sync.db (and its -wal/-shm) through SQLite while the agent runs, and nothing else', async () => {
    assert.equal(spawnSync('groupadd', ['-f', READER_GROUP]).status, 0, 'groupadd');
    const gid = Number(spawnSync('getent', ['group', READER_GROUP], { encoding: 'utf8' }).stdout.split(':')[2]);
    assert.ok(Number.isInteger(gid));
    const parent = openParent();
    const dataDir = path.join(parent, 'data');
    const config = writeConfig(parent, { dataDir, webhook: { port: 0 }, admin: { port: 0 }, sync: { baselineSettleSeconds: 0 }, till: { readerGroup: READER_GROUP } });
    fs.chmodSync(config, 0o644);
    for (let round = 1; round <= 2; round++) {
      // Round 2: after a restart SQLite made new -wal/-shm files; they must still be the group's.
      const agent = await serveUnderUmask022(config);
      try {
        for (const b of sampleBodies()) assert.equal((await post(agent.url, b.raw)).status, 200);
        await waitFor('the first backup', () => fs.existsSync(path.join(dataDir, 'backups')) && fs.readdirSync(path.join(dataDir, 'backups')).some((f) => /^backup-\d{8}T\d+Z$/.test(f)));
        await waitFor('the updates applied', () => {
          const db = new Database(path.join(dataDir, 'pos-sync.db'), { readonly: true });
          try {
            return (db.prepare('SELECT count(*) AS n FROM pos_prices').get() as { n: number }).n > 0;
          } finally {
            db.close();
          }
        });
        const dirStat = fs.statSync(dataDir);
        assert.equal(dirStat.mode & 0o7777, 0o2710, 'the data folder: group may traverse, not list; setgid');
        assert.equal(dirStat.gid, gid);
        for (const name of ['pos-sync.db', 'pos-sync.db-wal', 'pos-sync.db-shm']) {
          const st = fs.statSync(path.join(dataDir, name));
          assert.equal(st.mode & 0o777, 0o640, `${name} mode, round ${round}`);
          assert.equal(st.gid, gid, `${name} group, round ${round}`);
        }
        const read = readPosAsNobody(path.join(dataDir, 'pos-sync.db'), [gid]);
        assert.equal(read.status, 0, read.out);
        assert.ok(JSON.parse(read.out).n > 0, 'the till reads prices');
        assert.notEqual(readPosAsNobody(path.join(dataDir, 'pos-sync.db'), []).status, 0, 'outside the group: refused');
        assert.notEqual(asNobody(['ls', dataDir], [gid]).status, 0, 'the group cannot list the folder');
        for (const e of allEntries(dataDir).filter((x) => !x.directory && !/^pos-sync\.db(-wal|-shm)?$/.test(path.relative(dataDir, x.file)))) {
          assert.equal(fs.statSync(e.file).mode & 0o777, 0o600, path.relative(dataDir, e.file));
          assert.notEqual(asNobody(['cat', e.file], [gid]).status, 0, `the till's group read ${path.relative(dataDir, e.file)}`);
        }
      } finally {
        await agent.stop();
      }
      // Stopped: SQLite removed -wal and -shm; the till still reads (the file was left in rollback-journal mode).
      assert.equal(fs.existsSync(path.join(dataDir, 'pos-sync.db-wal')), false);
      const whileStopped = readPosAsNobody(path.join(dataDir, 'pos-sync.db'), [gid]);
      assert.equal(whileStopped.status, 0, `round ${round}, agent stopped: ${whileStopped.out}`);
      assert.ok(JSON.parse(whileStopped.out).n > 0);
      assert.equal(fs.statSync(path.join(dataDir, 'pos-sync.db')).mode & 0o777, 0o640);
    }
  });

  it('a reader group the agent cannot use stops start-up naming till.readerGroup', () => {
    const parent = openParent();
    const config = writeConfig(parent, { dataDir: path.join(parent, 'data'), webhook: { port: 0 }, admin: { port: 0 }, till: { readerGroup: 'no-such-group-here' } });
    const r = cliUnderUmask022(config, ['serve']);
    assert.equal(r.status, 3, r.out);
    assert.match(r.out, /till\.readerGroup: there is no group "no-such-group-here" on this machine/);
  });
});

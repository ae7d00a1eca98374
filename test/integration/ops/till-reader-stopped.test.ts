import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { freePort, runCli, startChildAgent, writeConfig, type ChildAgent } from '../../helpers/child-agent';
import { samplePath, tempDir } from '../../helpers/fixtures';
import { reachableByNobody } from '../../helpers/second-user';
import { needs } from '../../helpers/system';
import { heldRead, heldReadScript } from '../../helpers/held-read';

/**
 * till.readerGroup: the till, another OS account in that group (nobody, through setpriv), keeps
 * reading pos-sync.db whatever the operator runs: commands handed to a running agent, commands run
 * while it is stopped, a restore, a start that fails, and a start while the till holds a read
 * transaction. Real `pos-sync-agent` processes (the build), real SQLite files, a real second account.
 */

const READER_GROUP = 'pos-till-test';
const SQLITE = path.dirname(require.resolve('better-sqlite3/package.json'));
const NEEDS = 'root (a second OS user, groupadd)';

function readerGid(): number {
  assert.equal(process.getuid?.(), 0, 'run these tests as root: the till reads as nobody through setpriv');
  assert.equal(spawnSync('groupadd', ['-f', READER_GROUP]).status, 0, 'groupadd');
  const gid = Number(spawnSync('getent', ['group', READER_GROUP], { encoding: 'utf8' }).stdout.split(':')[2]);
  assert.ok(Number.isInteger(gid));
  return gid;
}

/** The till: nobody with the reader group only, running `script` under this Node with better-sqlite3. */
function tillArgs(script: string, gid: number, db: string): { args: string[]; env: NodeJS.ProcessEnv } {
  return {
    args: ['--reuid=nobody', '--regid=nogroup', `--groups=${gid}`, reachableByNobody(process.execPath), '-e', script],
    env: { PATH: process.env.PATH, SQLITE: reachableByNobody(SQLITE), DB: db },
  };
}

/** A new till connection (read-only, as the contract says) counting the prices it sees. */
function tillReads(dataDir: string, gid: number): { ok: boolean; out: string } {
  const script = `const D = require(process.env.SQLITE); const db = new D(process.env.DB, { readonly: true, fileMustExist: true }); db.pragma('busy_timeout = 5000'); console.log(db.prepare('SELECT count(*) AS n FROM pos_prices').get().n);`;
  const { args, env } = tillArgs(script, gid, path.join(dataDir, 'pos-sync.db'));
  const r = spawnSync('setpriv', args, { encoding: 'utf8', cwd: '/', env, timeout: 30_000 });
  const out = `${r.stdout}${r.stderr}`.trim();
  return { ok: r.status === 0 && Number(r.stdout.trim()) > 0, out };
}

function assertTillReads(dataDir: string, gid: number, when: string): void {
  const r = tillReads(dataDir, gid);
  assert.ok(r.ok, `the till cannot read pos-sync.db ${when}: ${r.out}`);
}

/** The file's journal mode as its header says (read-only: looking does not change it). */
function journalMode(dataDir: string): string {
  const db = new Database(path.join(dataDir, 'pos-sync.db'), { readonly: true, fileMustExist: true });
  try {
    return String(db.pragma('journal_mode', { simple: true }));
  } finally {
    db.close();
  }
}

function assertSharedFolder(dataDir: string, gid: number, when: string): void {
  const st = fs.statSync(dataDir);
  assert.equal((st.mode & 0o7777).toString(8), '2710', `the data folder's mode ${when}`);
  assert.equal(st.gid, gid, `the data folder's group ${when}`);
}

/** As a cleanly stopped agent leaves it: the group's folder and file, a rollback journal, no -wal. */
function assertStoppedState(dataDir: string, gid: number, when: string): void {
  assertSharedFolder(dataDir, gid, when);
  const st = fs.statSync(path.join(dataDir, 'pos-sync.db'));
  assert.equal((st.mode & 0o777).toString(8), '640', `pos-sync.db's mode ${when}`);
  assert.equal(st.gid, gid, `pos-sync.db's group ${when}`);
  assert.equal(journalMode(dataDir), 'delete', `pos-sync.db's journal ${when}`);
  assert.equal(fs.existsSync(path.join(dataDir, 'pos-sync.db-wal')), false, `no -wal ${when}`);
  assertTillReads(dataDir, gid, when);
}

/**
 * A clean stop (SIGTERM), once the agent has answered a request: `serve` prints its address just
 * before it installs its signal handlers, and a SIGTERM in between would end it as a crash would.
 */
async function stopCleanly(agent: ChildAgent): Promise<void> {
  assert.equal((await fetch(new URL('/healthz', agent.url))).ok, true, 'the agent answers');
  await agent.kill('SIGTERM');
  assert.equal(agent.child.exitCode, 0, agent.output());
}

interface Site {
  readonly dataDir: string;
  readonly config: string;
  readonly gid: number;
}

/** A data folder with the sample updates applied, as a cleanly stopped agent with till.readerGroup left it. */
async function stoppedSite(): Promise<Site> {
  const gid = readerGid();
  const parent = tempDir();
  fs.chmodSync(parent, 0o755);
  const dataDir = path.join(parent, 'data');
  const config = writeConfig(parent, { dataDir, webhook: { port: 0 }, admin: { port: 0 }, sync: { baselineSettleSeconds: 0 }, till: { readerGroup: READER_GROUP } });
  for (const prefix of ['01', '02', '03']) {
    const r = runCli(config, ['import', samplePath(prefix)]);
    assert.equal(r.status, 0, r.stderr);
  }
  await stopCleanly(await startChildAgent(config));
  assertStoppedState(dataDir, gid, 'after a clean stop');
  return { dataDir, config, gid };
}

/** A reader holding a read transaction on the till's file until the returned function is called. */
function holdReadTransaction(site: Site): Promise<{ release(): Promise<void> }> {
  const { args, env } = tillArgs(heldReadScript('SELECT count(*) FROM pos_prices'), site.gid, path.join(site.dataDir, 'pos-sync.db'));
  return heldRead(spawn('setpriv', args, { cwd: '/', env, stdio: ['pipe', 'pipe', 'pipe'] }));
}

describe('till.readerGroup: the till keeps reading whatever the operator runs', () => {
  it('commands handed to the running agent leave the data folder open to the till', needs(NEEDS), async () => {
    const site = await stoppedSite();
    const agent = await startChildAgent(site.config);
    try {
      assertSharedFolder(site.dataDir, site.gid, 'while the agent runs');
      assertTillReads(site.dataDir, site.gid, 'while the agent runs');
      for (const args of [['pause', '--reason', 'stock take'], ['resume'], ['ack-warnings'], ['import', samplePath('03')]]) {
        const r = runCli(site.config, args);
        assert.equal(r.status, 0, `${args[0]}: ${r.stdout}${r.stderr}`);
        assert.match(r.stdout, /Handed to the running agent/, `${args[0]} went through the running agent`);
        assertSharedFolder(site.dataDir, site.gid, `after ${args[0]} through the running agent`);
        // A new connection, as a till makes after its restart.
        assertTillReads(site.dataDir, site.gid, `after ${args[0]} through the running agent`);
      }
    } finally {
      await stopCleanly(agent);
    }
  });

  it('commands run while the agent is stopped leave the file as the till can read it', needs(NEEDS), async () => {
    const site = await stoppedSite();
    const commands = [
      ['status'],
      ['lookup', '--plu', '1001'],
      ['changes'],
      ['deliveries'],
      ['audit'],
      ['conflicts'],
      ['ops', 'status'],
      ['backup'],
      ['diagnose', '--out', path.join(tempDir(), 'diag.zip')],
      ['ack-warnings'],
      ['pause', '--reason', 'stock take'],
      ['resume'],
      ['import', samplePath('03')],
      ['compact'],
    ];
    for (const args of commands) {
      const r = runCli(site.config, args);
      assert.ok(r.status === 0 || args[0] === 'status', `${args.join(' ')}: exit ${r.status}: ${r.stdout}${r.stderr}`);
      assertStoppedState(site.dataDir, site.gid, `after \`${args.join(' ')}\` with the agent stopped`);
    }
  });

  it('a restore leaves the file as a cleanly stopped agent does', needs(NEEDS), async () => {
    const site = await stoppedSite();
    const backup = runCli(site.config, ['backup', '--json']);
    assert.equal(backup.status, 0, backup.stderr);
    const made = (JSON.parse(backup.stdout) as { file: string }).file;
    const restore = runCli(site.config, ['restore', made]);
    assert.equal(restore.status, 0, `${restore.stdout}${restore.stderr}`);
    assertStoppedState(site.dataDir, site.gid, 'after a restore');
    // And the agent starts on it and serves the till as before.
    const agent = await startChildAgent(site.config);
    try {
      assertTillReads(site.dataDir, site.gid, 'with the agent running on the restored file');
    } finally {
      await stopCleanly(agent);
    }
    assertStoppedState(site.dataDir, site.gid, 'after the restored agent stopped');
  });

  it('a start that fails leaves the data folder and the file as the till can read them', needs(NEEDS), async () => {
    const site = await stoppedSite();
    // Fails at the start-up check: the status window's port is taken.
    const port = await freePort();
    const squatter = net.createServer();
    await new Promise<void>((resolve) => squatter.listen(port, '127.0.0.1', () => resolve()));
    try {
      const busy = writeConfig(tempDir(), { dataDir: site.dataDir, webhook: { port: 0 }, admin: { port }, till: { readerGroup: READER_GROUP } });
      const r = runCli(busy, ['serve']);
      assert.equal(r.status, 3, `${r.stdout}${r.stderr}`);
      assertStoppedState(site.dataDir, site.gid, 'after a start refused for a busy port');
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
    // Fails after the file was switched to WAL: agent.db written by a newer version.
    const agentDb = new Database(path.join(site.dataDir, 'agent.db'));
    agentDb.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, ?, ?)').run('from-a-newer-version', new Date().toISOString());
    agentDb.close();
    const r = runCli(site.config, ['serve']);
    assert.notEqual(r.status, 0, `${r.stdout}${r.stderr}`);
    assert.match(`${r.stdout}${r.stderr}`, /migrations this agent does not know/);
    assertStoppedState(site.dataDir, site.gid, 'after a start that failed opening agent.db');
  });

  it('the agent starts while the till holds a read transaction, once the till lets go', needs(NEEDS, { timeout: 120_000 }), async () => {
    const site = await stoppedSite();
    const reader = await holdReadTransaction(site);
    let agent: ChildAgent | null = null;
    try {
      const starting = startChildAgent(site.config);
      // Awaited below; a start that fails meanwhile is reported there.
      starting.catch(() => {});
      // Longer than one wait for the lock, so the agent has had to try again.
      await new Promise((resolve) => setTimeout(resolve, 12_000));
      await reader.release();
      agent = await starting;
      assert.match(agent.output(), /holds a read transaction on it, so the agent cannot switch it to WAL mode and start yet: waiting for it to finish/);
      assert.equal(journalMode(site.dataDir), 'wal');
      assertTillReads(site.dataDir, site.gid, 'with the agent running');
    } finally {
      await reader.release();
      if (agent) await stopCleanly(agent);
    }
    assertStoppedState(site.dataDir, site.gid, 'after the agent stopped');
  });
});

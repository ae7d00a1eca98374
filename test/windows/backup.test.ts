import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { item, price, update } from '../helpers/fixtures';
import { folderState, laneDir, lastSequence, post, sample, startTill } from './lane';
import { cli, REPO_ROOT, startAgent, startWindows, unixPath, waitFor, winPath, writeWindowsConfig, type WindowsAgent } from './wine';

/**
 * Backups, restore and the other data-folder commands as a site runs them on Windows: the agent and
 * the command line are Windows processes, and so is the till that holds pos-sync.db open.
 */
/**
 * The data files, each with its content hash: what "the restore changed nothing" compares. Left out:
 * the lock file (it records who last held it), -shm (the shared-memory index every connection
 * updates) and an empty -wal (SQLite deletes one when its last connection closes; it holds nothing).
 */
function dataFiles(dir: string): Record<string, string | null> {
  const EMPTY = crypto.createHash('sha256').digest('hex');
  return Object.fromEntries(Object.entries(folderState(dir)).filter(([name, hash]) => name !== 'agent.lock' && !name.endsWith('-shm') && !(name.endsWith('-wal') && hash === EMPTY)));
}

describe('Windows: backup, restore, compact, diagnose', () => {
  const work = laneDir('backup');
  const dataDir = path.join(work, 'Data Folder ü');
  const out = { outDir: path.join(work, 'out') };
  const config = writeWindowsConfig(path.join(work, 'config.json'), {
    dataDir: winPath(dataDir),
    // Large payloads (at least 64 KiB) in files of their own, so a restore replaces body files too.
    webhook: { port: 0, fileBodyFromBytes: 64 * 1024 },
    admin: { enabled: false },
    sync: { pollIntervalMs: 200, baselineSettleSeconds: 0 },
    // With the staff cache, so a restore replaces all three files.
    backup: { keep: 2, includeStaff: true },
  });
  const backups = path.join(dataDir, 'backups');
  const sets = (): string[] => (fs.existsSync(backups) ? fs.readdirSync(backups).filter((n) => /^backup-\d{8}T\d+Z$/.test(n)).sort() : []);
  let agent: WindowsAgent | null = null;
  /** The scheduled set taken before any update arrived. */
  const early = path.join(work, 'set before the samples');

  before(async () => {
    agent = await startAgent(config, dataDir, out);
  });
  after(async () => {
    await agent?.stop();
  });

  it('takes the scheduled backup at start-up (none yet) and logs no failure', async () => {
    const log = (): string => fs.readFileSync(path.join(dataDir, 'logs', 'agent.log'), 'utf8');
    await waitFor('the scheduled backup to end', () => /backup (written|failed)/.test(log()));
    assert.doesNotMatch(log(), /backup failed/);
    assert.match(log(), /backup written: /);
    const first = sets()[0]!;
    const manifest = JSON.parse(fs.readFileSync(path.join(backups, first, 'manifest.json'), 'utf8')) as { files: { file: string }[] };
    assert.deepEqual(manifest.files.map((f) => f.file).sort(), ['agent.db', 'pos-sync.db', 'staff.db']);
    // Kept aside (rotation would delete it): restored later, it takes the till back to before the samples.
    fs.cpSync(path.join(backups, first), early, { recursive: true });
  });

  it('`backup` while the agent runs writes a set, and only backup.keep sets are kept', async () => {
    for (const n of [1, 2, 3] as const) assert.equal((await post(agent!.url, sample(n))).status, 200);
    await waitFor('the three samples applied', () => lastSequence(dataDir, 3021) === 1043);
    for (let i = 0; i < 2; i++) {
      const r = await cli(['backup', '--config', winPath(config)], out);
      assert.equal(r.code, 0, r.stderr);
      const m = /Backup written: (.+) \(/.exec(r.stdout);
      assert.ok(m, r.stdout);
      assert.ok(fs.existsSync(path.join(unixPath(m[1]!), 'pos-sync.db')), `${m[1]} has no pos-sync.db`);
    }
    assert.equal(sets().length, 2, `sets kept: ${sets().join(', ')}`);
    assert.deepEqual(fs.readdirSync(backups).filter((n) => n.endsWith('.partial')), []);
  });

  it('`backup list --check` checks every set and names where each resumes', async () => {
    const r = await cli(['backup', 'list', '--check', '--config', winPath(config)], out);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split(/\r?\n/).filter((l) => !l.startsWith('Data folder: '));
    assert.match(r.stdout, new RegExp(`^Data folder: ${winPath(dataDir).replace(/\\/g, '\\\\')} `), 'names the data folder first');
    assert.equal(lines.length, 2, r.stdout);
    for (const line of lines) assert.match(line, /ok; resumes location 3021 from 1043/);
  });

  it('a large publication is stored as a body file of its own', async () => {
    const items = Array.from({ length: 600 }, (_, i) => item(String(7000 + i), `WIN-${i}`, [price('2026-12-01', '9999-12-31', 'Eat In', `${3 + (i % 7)}.${String(i % 100).padStart(2, '0')}`)]));
    const body = Buffer.from(JSON.stringify(update(3098, 1, 0, items)));
    assert.ok(body.length > 64 * 1024);
    const r = await post(agent!.url, body);
    assert.equal(r.status, 200, r.body);
    await waitFor('the large publication applied', () => lastSequence(dataDir, 3098) === 1);
    assert.equal(fs.readdirSync(path.join(dataDir, 'bodies')).length, 1);
  });

  it('`restore` while a Windows till holds pos-sync.db open changes no file and says what to close', async () => {
    assert.equal(await agent!.stop(), 0, agent!.output());
    agent = null;
    const till = await startTill(path.join(dataDir, 'pos-sync.db'), work, out);
    let tillStopped = false;
    try {
      const beforeFiles = dataFiles(dataDir);
      const r = await cli(['restore', winPath(early), '--config', winPath(config)], out);
      assert.equal(r.code, 1, r.stdout);
      assert.match(r.stderr, /another program \(the till\?\) has .*pos-sync\.db open: close it and retry/);
      assert.deepEqual(dataFiles(dataDir), beforeFiles, 'a refused restore changed the data folder');
      assert.equal(lastSequence(dataDir, 3021), 1043);
      const seen = await till.stop();
      tillStopped = true;
      assert.deepEqual(seen.errors, []);
    } finally {
      if (!tillStopped) await till.stop();
    }
  });

  it('`restore` while another program holds a body file open changes no file and names it', async () => {
    // The set restored has no body file: the live one must move aside, and Windows refuses while the
    // holder has it open (without FILE_SHARE_DELETE), after the databases were already moved aside.
    const [held] = fs.readdirSync(path.join(dataDir, 'bodies'));
    assert.ok(held);
    const heldFile = path.join(dataDir, 'bodies', held);
    const stop = path.join(work, 'release the body file');
    const holder = startWindows([winPath(path.join(__dirname, 'fixtures', 'hold-file.cjs')), winPath(REPO_ROOT), winPath(heldFile), winPath(stop), 'open-only'], out);
    try {
      let ended: number | null | undefined;
      void holder.exited.then((c) => (ended = c));
      await waitFor('the holder to open the body file', () => {
        if (ended !== undefined) throw new Error(`the holder ended (${ended}): ${holder.stderr()}`);
        return holder.stdout().startsWith('ready');
      });
      const beforeFiles = dataFiles(dataDir);
      const beforeBodies = folderState(path.join(dataDir, 'bodies'));
      const r = await cli(['restore', winPath(early), '--config', winPath(config)], out);
      assert.equal(r.code, 1, r.stdout);
      assert.match(r.stderr, new RegExp(`has .*${held}.* open: close it and run the restore again; no file was changed`));
      assert.deepEqual(dataFiles(dataDir), beforeFiles, 'a refused restore changed the data folder');
      assert.deepEqual(folderState(path.join(dataDir, 'bodies')), beforeBodies, 'a refused restore changed the body files');
      assert.deepEqual(fs.readdirSync(dataDir).filter((f) => /\.(replaced|restoring)$/.test(f)), []);
      assert.equal(lastSequence(dataDir, 3098), 1);
    } finally {
      fs.writeFileSync(stop, '');
      assert.equal(await holder.exited, 0, holder.stderr());
    }
  });

  it('`restore` while a database browser holds staff.db open changes no file and names it; closed, it restores', async () => {
    // Only the till file's -wal is checked up front: Windows refusing to move staff.db, the last of
    // the three, is what stops this restore, after pos-sync.db and agent.db were already moved aside.
    const stop = path.join(work, 'release staff.db');
    const holder = startWindows([winPath(path.join(__dirname, 'fixtures', 'hold-file.cjs')), winPath(REPO_ROOT), winPath(path.join(dataDir, 'staff.db')), winPath(stop)], out);
    try {
      let ended: number | null | undefined;
      void holder.exited.then((c) => (ended = c));
      await waitFor('the holder to open staff.db', () => {
        if (ended !== undefined) throw new Error(`the holder ended (${ended}): ${holder.stderr()}`);
        return holder.stdout().startsWith('ready');
      });
      const beforeFiles = dataFiles(dataDir);
      const r = await cli(['restore', winPath(early), '--config', winPath(config)], out);
      assert.equal(r.code, 1, r.stdout);
      assert.match(r.stderr, /has .*staff\.db open: close it and run the restore again; no file was changed/);
      assert.deepEqual(dataFiles(dataDir), beforeFiles, 'a refused restore changed the data folder');
      assert.equal(lastSequence(dataDir, 3021), 1043);
    } finally {
      fs.writeFileSync(stop, '');
      assert.equal(await holder.exited, 0, holder.stderr());
    }
    const r = await cli(['restore', winPath(early), '--config', winPath(config)], out);
    assert.equal(r.code, 0, `${r.stdout}${r.stderr}`);
    assert.match(r.stdout, /Restored /);
    assert.equal(lastSequence(dataDir, 3021), null);
    assert.deepEqual(fs.readdirSync(dataDir).filter((f) => /\.(replaced|restoring)$|restore-in-progress/.test(f)), []);
  });

  it('`compact` and `diagnose` run on the stopped agent\'s folder', async () => {
    const c = await cli(['compact', '--config', winPath(config)], out);
    assert.equal(c.code, 0, c.stderr);
    assert.match(c.stdout, /Compacted .*pos-sync\.db/);
    const zip = path.join(work, 'support bundle.zip');
    const d = await cli(['diagnose', '--out', winPath(zip), '--config', winPath(config)], out);
    assert.equal(d.code, 0, d.stderr);
    assert.equal(fs.readFileSync(zip).subarray(0, 2).toString('latin1'), 'PK');
  });
});

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { openReadOnly, storeFilePath } from '../../src/store/database';
import { bodyFilesDir } from '../../src/store/body-files';
import { item, price, tempDir, update } from '../helpers/fixtures';
import { inboxRows, largeUpdate, post, tillPrices, type InboxRow, type PostOutcome } from './body-file-helpers';
import { spawnAgent, waitFor, writeConfig, type ChildAgent } from '../../src/dev/child-agent';

/**
 * Issue 29: injected I/O failures (libfiu, under `fiu-run -x`) at each step of storing a large body
 * in a file of its own (src/store/body-files.ts, src/store/inbox.ts), each followed by a power cut.
 * The agent is held at the step (POS_SYNC_TEST_PAUSE_AT, src/crash-points.ts) while the test turns
 * the failure on with fiu-ctrl, so the very next call of that kind fails:
 * - body-file-created: the file's writes fail;
 * - body-file-written: every byte written, the file's fsync fails;
 * - body-file-synced: file and folder on disk, the inbox row's commit fails (its WAL write or fsync);
 * - body-file-synced, then the fault clears and a later delivery is stored before the cut;
 * - body-row-committed: the row committed, the answer's write to the socket fails (every write()
 *   of the process fails from then on; should libuv abort the process for it, that is the crash at
 *   this step, and the same must hold);
 * - a rename failing at any step: the body file is made under its final name, so nothing renames.
 * Then the agent is killed (SIGKILL: what a power cut does to the process) and started again
 * normally. Head office either got a 200 and the body is there byte for byte, or it got no 200 and
 * nothing is left that the restarted agent misreads: every row that names a body file finds that
 * file whole (its size and SHA-256), no file is left that no row names, and the sender's retry is
 * stored and applied.
 */

const LOCATION = 78;
const FILE_FROM = 64 * 1024;


function integrity(dataDir: string, kind: 'agent' | 'till'): string {
  const db = openReadOnly(storeFilePath(dataDir, kind));
  try {
    return String(db.pragma('integrity_check', { simple: true }));
  } finally {
    db.close();
  }
}


const bodyFiles = (dataDir: string): string[] => (fs.existsSync(bodyFilesDir(dataDir)) ? fs.readdirSync(bodyFilesDir(dataDir)).sort() : []);

/** Every row naming a body file finds it whole; every body file is named by a row. */
function assertNothingMisread(dataDir: string, when: string): InboxRow[] {
  const rows = inboxRows(dataDir).filter((r) => r.location_id === LOCATION);
  for (const row of rows.filter((r) => r.file !== null)) {
    const file = path.join(bodyFilesDir(dataDir), row.file!);
    assert.ok(fs.existsSync(file), `${when}: change ${row.change_sequence}'s row names ${row.file}, which is not there`);
    const bytes = fs.readFileSync(file);
    assert.equal(bytes.length, row.body_bytes, `${when}: ${row.file} is cut short`);
    assert.equal(createHash('sha256').update(bytes).digest('hex'), row.body_sha256, `${when}: ${row.file} is not the body its row names`);
  }
  assert.deepEqual(bodyFiles(dataDir), rows.filter((r) => r.file !== null).map((r) => r.file).sort(), `${when}: a body file no row names`);
  assert.ok(inboxRows(dataDir).some((r) => r.location_id === LOCATION + 1), `${when}: the small delivery answered 200 is there`);
  return rows;
}

const CASES = [
  // EINVAL, not a disk's usual ENOSPC or EIO: any failure of the agent's own file is its failure (503).
  { at: 'body-file-created', fail: ['posix/io/rw/pwrite,failinfo=22', 'posix/io/rw/pwritev,failinfo=22'], what: 'the body file\'s writes fail (EINVAL)', expect: 503 },
  { at: 'body-file-written', fail: ['posix/io/sync/fsync', 'posix/io/sync/fdatasync'], what: 'the body file\'s fsync fails', expect: 503 },
  { at: 'body-file-synced', fail: ['posix/io/sync/fsync', 'posix/io/sync/fdatasync'], what: 'the row\'s commit fails to fsync', expect: 503 },
  { at: 'body-file-synced', fail: ['posix/io/rw/pwrite', 'posix/io/rw/pwritev'], what: 'the row\'s commit fails to write', expect: 503 },
  // The fault cleared and a later delivery stored before the cut: that commit writes over the failed
  // one's frames, so its body file (no row names it) goes at once.
  { at: 'body-file-synced', fail: ['posix/io/sync/fsync', 'posix/io/sync/fdatasync'], what: 'the row\'s commit fails to fsync, then a later one goes through', expect: 503, thenClear: true },
  { at: 'body-file-synced', fail: ['posix/io/rw/pwrite', 'posix/io/rw/pwritev'], what: 'the row\'s commit fails to write, then a later one goes through', expect: 503, thenClear: true },
  // write last: libfiu's own answer to fiu-ctrl goes through write(), so that answer never comes.
  { at: 'body-row-committed', fail: ['posix/io/rw/writev', 'posix/io/rw/write'], what: 'the answer cannot be written', expect: null, lastReplyFails: true },
  ...(['body-file-created', 'body-file-written', 'body-file-synced', 'body-row-committed'] as const).map((at) => ({ at, fail: ['posix/io/dir/rename'], what: 'renames fail', expect: 200 })),
] as const;

/**
 * Turns a libfiu failure point on in the agent. With `replyFails` (the point is `write` itself) the
 * agent's answer to fiu-ctrl cannot be written: fiu-ctrl is given a few seconds to hand the command
 * over, then ended. Should the point not be on by then, the agent answers 200 and the test fails.
 */
async function enable(pid: number, name: string, replyFails = false): Promise<void> {
  const args = ['-c', `enable name=${name}`, String(pid)];
  if (!replyFails) {
    execFileSync('fiu-ctrl', args, { stdio: 'pipe', timeout: 10_000 });
    return;
  }
  const ctrl = spawn('fiu-ctrl', args, { stdio: 'ignore' });
  const exited = new Promise((resolve) => ctrl.once('exit', resolve));
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
  if (ctrl.exitCode === null && ctrl.signalCode === null) {
    ctrl.kill();
    await exited;
  }
}

function hasCommand(name: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${name}`]).status === 0;
}

describe('a power cut after an I/O failure while a large body is stored in a file (libfiu)', () => {
  for (const c of CASES) {
    it(`at ${c.at}, ${c.what}: a 200 means the body is there whole; otherwise nothing is misread after the restart`, { timeout: 120_000 }, async () => {
      // npm run test:system installs fiu-utils first (scripts/test-prerequisites.mjs): missing is a failure, not a skip.
      assert.ok(hasCommand('fiu-run') && hasCommand('fiu-ctrl'), 'fiu-run/fiu-ctrl not installed: sudo apt-get install -y fiu-utils');
      const dir = tempDir('pos-sync-bodypower-');
      const dataDir = path.join(dir, 'data');
      const gate = path.join(dir, 'gate');
      const configFile = writeConfig(dir, { dataDir, webhook: { port: 0, fileBodyFromBytes: FILE_FROM }, admin: { enabled: false }, sync: { baselineSettleSeconds: 0 } });
      const body = largeUpdate(LOCATION, 6000, 'PWR', 4);

      let child: ChildAgent = await spawnAgent(configFile, { wrapper: ['fiu-run', '-x'], env: { POS_SYNC_TEST_PAUSE_AT: `${c.at}:1:${gate}` } });
      let first: PostOutcome;
      let ended: number | string | null = null;
      try {
        // A small delivery first, so agent.db's WAL holds frames: a commit that then fails to flush
        // leaves its own frames after them, where a restart's recovery finds them.
        const small = await post(child.url, Buffer.from(JSON.stringify(update(LOCATION + 1, 1, 0, [item('1', 'S', [price('2026-12-01', '9999-12-31', 'Eat In', '1.00')])]))));
        assert.ok(!('error' in small) && small.status === 200, JSON.stringify(small));
        const sending = post(child.url, body);
        await waitFor(`the agent to reach ${c.at}`, () => fs.existsSync(`${gate}.reached`), 30_000);
        for (const [i, name] of c.fail.entries()) await enable(child.pid, name, 'lastReplyFails' in c && i === c.fail.length - 1);
        fs.writeFileSync(gate, '');
        first = await sending;
        if ('thenClear' in c) {
          for (const name of c.fail) execFileSync('fiu-ctrl', ['-c', `disable name=${name.split(',')[0]!}`, String(child.pid)], { stdio: 'pipe', timeout: 10_000 });
          const later = await post(child.url, Buffer.from(JSON.stringify(update(LOCATION + 2, 1, 0, [item('2', 'T', [price('2026-12-01', '9999-12-31', 'Eat In', '2.00')])]))));
          assert.ok(!('error' in later) && later.status === 200, JSON.stringify(later));
          assert.deepEqual(bodyFiles(dataDir), [], 'the failed commit\'s body file is removed once a later commit went through');
        }
      } finally {
        // The power cut (unless the failure ended the agent already).
        ended = child.process.exitCode ?? child.process.signalCode;
        await child.kill();
      }
      if (c.expect === null) assert.ok('error' in first || first.status !== 200, `answered 200 though the answer could not be written: ${JSON.stringify(first)}`);
      else assert.ok(!('error' in first) && first.status === c.expect, `expected ${c.expect}: ${JSON.stringify(first)}`);

      // Restarted normally: nothing misread, whatever the first attempt left.
      child = await spawnAgent(configFile);
      try {
        const afterCut = assertNothingMisread(dataDir, 'after the restart');
        process.stdout.write(`# ${c.at}, ${c.what}: ${JSON.stringify(first).slice(0, 200)}; agent ${ended === null ? 'still running at the cut' : `had ended (${ended})`}; rows after the restart: ${afterCut.length}\n`);
        if (!('error' in first) && first.status === 200) {
          assert.equal(afterCut.length, 1, 'answered 200: the row is there');
          assert.ok(afterCut[0]!.file, 'answered 200: as a body file');
        }
        // The sender had no 200 (or sends again anyway): stored or a duplicate, then applied.
        const again = await post(child.url, body);
        assert.ok(!('error' in again) && again.status === 200, JSON.stringify(again));
        await waitFor('the updates to be applied', () => inboxRows(dataDir).every((r) => r.state === 'applied'), 60_000);
        assert.equal(tillPrices(dataDir, LOCATION), 600);
        const rows = assertNothingMisread(dataDir, 'after the retry');
        assert.equal(rows.length, 1);
        assert.ok(fs.readFileSync(path.join(bodyFilesDir(dataDir), rows[0]!.file!)).equals(body));
      } finally {
        await child.stop();
      }
      assert.equal(integrity(dataDir, 'agent'), 'ok');
      assert.equal(integrity(dataDir, 'till'), 'ok');
    });
  }
});

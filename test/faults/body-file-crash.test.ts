import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { bodyFilesDir } from '../../src/store/body-files';
import { tempDir } from '../helpers/fixtures';
import { inboxRows, largeUpdate, post, tillPrices } from './body-file-helpers';
import { spawnAgent, waitFor, writeConfig, type ChildAgent } from '../../src/dev/child-agent';

/**
 * Issue 29: a large body is written to a file of its own as it arrives (src/store/body-files.ts). The
 * agent kills itself (SIGKILL, POS_SYNC_TEST_CRASH_AT) at each step of that receipt:
 * - body-file-written: every byte written, not flushed to the disk; a power cut would lose them, so
 *   the test also cuts the file short before the restart, as the disk would have it;
 * - body-file-synced: file and folder flushed, its inbox row not committed;
 * - body-row-committed: the row committed, the 200 not sent.
 * The sender is never answered 200 and sends again after a normal restart. Nothing is lost (the update
 * is applied, byte for byte the same), and no file is left that no row names.
 */

const LOCATION = 77;
const FILE_FROM = 64 * 1024;

describe('a crash while a large body is received into a file', () => {
  for (const point of ['body-file-written', 'body-file-synced', 'body-row-committed'] as const) {
    it(`at ${point}: nothing lost, no file left over`, { timeout: 120_000 }, async () => {
      const dir = tempDir('pos-sync-bodyfile-');
      const dataDir = path.join(dir, 'data');
      const configFile = writeConfig(dir, { dataDir, webhook: { port: 0, fileBodyFromBytes: FILE_FROM }, admin: { enabled: false }, sync: { baselineSettleSeconds: 0 } });
      const body = largeUpdate(LOCATION, 5000, 'BIG', 3);
      assert.ok(body.length > FILE_FROM * 2);

      let child: ChildAgent = await spawnAgent(configFile, { env: { POS_SYNC_TEST_CRASH_AT: `${point}:1` } });
      const first = await post(child.url, body);
      if (child.process.exitCode === null && child.process.signalCode === null) await new Promise((r) => child.process.once('exit', r));
      assert.equal(child.process.signalCode, 'SIGKILL', `the agent did not kill itself at ${point}: ${JSON.stringify(first)}`);
      assert.ok('error' in first, `the sender was answered before the crash: ${JSON.stringify(first)}`);

      const files = fs.existsSync(bodyFilesDir(dataDir)) ? fs.readdirSync(bodyFilesDir(dataDir)) : [];
      assert.equal(files.length, 1, `one body file was being written at ${point}`);
      if (point === 'body-file-written') {
        // What a power cut leaves of bytes never flushed: cut the file short.
        fs.truncateSync(path.join(bodyFilesDir(dataDir), files[0]!), Math.floor(body.length / 3));
      }
      const rowsAfterCrash = inboxRows(dataDir);
      assert.equal(rowsAfterCrash.length, point === 'body-row-committed' ? 1 : 0);

      // A normal restart on the same folder; the sender sends again (it had no 200).
      child = await spawnAgent(configFile);
      try {
        const again = await post(child.url, body);
        assert.ok(!('error' in again) && again.status === 200, JSON.stringify(again));
        assert.equal((again as { json: { status: string } }).json.status, point === 'body-row-committed' ? 'duplicate' : 'stored');
        await waitFor('the update to be applied', () => inboxRows(dataDir).every((r) => r.state === 'applied'), 60_000);
        assert.equal(tillPrices(dataDir, LOCATION), 600);
        const rows = inboxRows(dataDir);
        assert.equal(rows.length, 1);
        assert.ok(rows[0]!.file, 'the body is kept as a file');
        // Exactly the file the row names, holding exactly the bytes sent.
        assert.deepEqual(fs.readdirSync(bodyFilesDir(dataDir)), [rows[0]!.file]);
        assert.ok(fs.readFileSync(path.join(bodyFilesDir(dataDir), rows[0]!.file!)).equals(body));
      } finally {
        await child.stop();
      }
    });
  }
});

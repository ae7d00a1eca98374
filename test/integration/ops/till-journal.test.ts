import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { AgentCore } from '../../../src/core';
import type { Logger } from '../../../src/log';
import { silentLogger } from '../../../src/log';
import { leaveTillFileReadable, makePrivateDir, switchTillFileToWal, TILL_READER_DIR_MODE } from '../../../src/ops/private-files';
import { configureWriter, databasePath, openDatabase, storeFilePath, WRITER_BUSY_TIMEOUT_MS, type Db } from '../../../src/store/database';
import { REPO_ROOT, writeConfig } from '../../helpers/child-agent';
import { heldRead, heldReadScript } from '../../helpers/held-read';
import { tempDir, testConfig } from '../../helpers/fixtures';

/**
 * The till's file keeps the journal mode the agent left it in (till.readerGroup: a rollback journal
 * while the agent is stopped) whatever else opens it; only the agent's start puts it in WAL mode,
 * waiting for a reader's transaction rather than failing. And a command making sure the data folder
 * exists leaves the till reader's way into it.
 */

function journalMode(file: string): string {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return String(db.pragma('journal_mode', { simple: true }));
  } finally {
    db.close();
  }
}

/** A data folder whose three files exist, the till's left with a rollback journal as a stopped agent with a till reader leaves it. */
function stoppedFolder(): string {
  const config = testConfig();
  new AgentCore(config, silentLogger).close();
  for (const kind of ['till', 'agent'] as const) {
    const db = new Database(storeFilePath(config.dataDir, kind));
    db.pragma('journal_mode = DELETE');
    db.close();
  }
  return config.dataDir;
}

function recordingLogger(lines: string[]): Logger {
  const keep = (...a: unknown[]): void => void lines.push(a.map(String).join(' '));
  return { error: keep, warn: keep, info: keep, verbose: () => {}, debug: () => {} };
}

/** Another process holding a read transaction on `file` until `release()`. */
function holdRead(file: string): Promise<{ release(): Promise<void> }> {
  const script = heldReadScript('SELECT count(*) FROM sqlite_master');
  const env = { ...process.env, SQLITE: require.resolve('better-sqlite3'), DB: file };
  return heldRead(spawn(process.execPath, ['-e', script], { env, stdio: ['pipe', 'pipe', 'pipe'] }));
}

describe("the till's file: its journal mode", () => {
  it('a command opening the data folder keeps the till file in its rollback journal; agent.db is put in WAL mode', () => {
    const dataDir = stoppedFolder();
    const core = new AgentCore(testConfig({ dataDir }), silentLogger);
    try {
      core.status();
      core.lookup('1001');
      core.setPaused(true, 'test', 'stock take');
    } finally {
      core.close();
    }
    assert.equal(journalMode(databasePath(dataDir)), 'delete');
    assert.equal(fs.existsSync(`${databasePath(dataDir)}-wal`), false);
    assert.equal(journalMode(storeFilePath(dataDir, 'agent')), 'wal');
  });

  it('a command run after a crash, with no agent running, leaves the file as a stopped agent does for a till reader', () => {
    // After a crash the till's file is still in WAL mode; the command's connection, the last to close,
    // removes -wal and -shm, which a till reading as another account could not create again.
    const home = tempDir();
    const dataDir = path.join(home, 'data');
    new AgentCore(testConfig({ dataDir }), silentLogger).close();
    assert.equal(journalMode(databasePath(dataDir)), 'wal');
    const group = spawnSync('id', ['-gn'], { encoding: 'utf8' }).stdout.trim();
    const config = writeConfig(home, { dataDir, till: { readerGroup: group } });
    const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'bin', 'pos-sync-agent.cjs'), 'status', '--config', config], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status === 0 || r.status === 1, true, r.stderr);
    assert.equal(journalMode(databasePath(dataDir)), 'delete');
    assert.equal(fs.existsSync(`${databasePath(dataDir)}-wal`), false);
  });

  it('configureWriter (as compact calls it) keeps the mode of an existing file, puts a new one in WAL mode, and sets the busy timeout before anything else', () => {
    const dataDir = stoppedFolder();
    const db = new Database(databasePath(dataDir));
    configureWriter(db);
    db.exec('VACUUM');
    db.close();
    assert.equal(journalMode(databasePath(dataDir)), 'delete');
    const fresh = openDatabase(path.join(tempDir(), 'pos-sync.db'));
    assert.equal(fresh.pragma('journal_mode', { simple: true }), 'wal');
    fresh.close();
    const calls: string[] = [];
    configureWriter({ pragma: (sql: string) => (calls.push(sql), 0) } as unknown as Db, { journal: 'wal' });
    assert.equal(calls[0], `busy_timeout = ${WRITER_BUSY_TIMEOUT_MS}`, calls.join('; '));
    assert.ok(calls.indexOf('journal_mode = WAL') > 0, calls.join('; '));
  });

  it("the agent's start waits for a reader's transaction, saying so, then puts the file in WAL mode", async () => {
    const dataDir = stoppedFolder();
    const reader = await holdRead(databasePath(dataDir));
    const lines: string[] = [];
    const releasing = new Promise<void>((resolve) => setTimeout(() => void reader.release().then(resolve), 1_500));
    try {
      // A short wait per attempt: the reader outlasts several.
      await switchTillFileToWal(testConfig({ dataDir }), recordingLogger(lines), 100);
    } finally {
      await releasing;
    }
    assert.equal(journalMode(databasePath(dataDir)), 'wal');
    assert.match(lines.join('\n'), /holds a read transaction on it, so the agent cannot switch it to WAL mode and start yet: waiting for it to finish/);
    assert.match(lines.join('\n'), /the reader let go; the agent starts/);
  });

  it('a stopped agent leaves a rollback journal for a till reader, WAL mode without one', () => {
    const dataDir = stoppedFolder();
    const db = new Database(databasePath(dataDir));
    db.pragma('journal_mode = WAL');
    db.close();
    leaveTillFileReadable(testConfig({ dataDir, till: { readerGroup: 'pos-till' } }), silentLogger);
    assert.equal(journalMode(databasePath(dataDir)), 'delete');
    leaveTillFileReadable(testConfig({ dataDir }), silentLogger);
    assert.equal(journalMode(databasePath(dataDir)), 'wal');
  });
});

describe('makePrivateDir and the till reader', { skip: process.platform === 'win32' ? 'POSIX modes' : false }, () => {
  it("keeps the data folder's till reader mode, and tightens any other", () => {
    const dir = path.join(tempDir(), 'data');
    fs.mkdirSync(dir);
    fs.chmodSync(dir, TILL_READER_DIR_MODE);
    makePrivateDir(dir);
    assert.equal((fs.statSync(dir).mode & 0o7777).toString(8), '2710');
    for (const mode of [0o755, 0o2770, 0o750, 0o710]) {
      fs.chmodSync(dir, mode);
      makePrivateDir(dir);
      assert.equal((fs.statSync(dir).mode & 0o7777).toString(8), '700', `from ${mode.toString(8)}`);
    }
  });
});

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { databasePath, openDatabase, openReadOnly } from '../../src/store/database';
import { startTestAgent } from '../helpers/agent';
import { tempDir } from '../helpers/fixtures';
import { ROOT, spawnAgent, writeConfig } from '../../src/dev/child-agent';

/**
 * A 200 means "on disk": that needs synchronous=FULL on every connection. better-sqlite3 is built
 * with SQLITE_DEFAULT_WAL_SYNCHRONOUS=1, so a connection in WAL mode silently runs NORMAL (the last
 * commits can vanish on power loss) unless it says otherwise.
 */
const FULL = 2;

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(full) : e.name.endsWith('.ts') ? [full] : [];
  });
}

describe('synchronous=FULL on every connection', () => {
  it('the agent writer, a fresh openDatabase and a read-only till connection all run FULL', async () => {
    const t = await startTestAgent();
    assert.equal(t.agent.core.agentDb.pragma('synchronous', { simple: true }), FULL);
    assert.equal(t.agent.core.agentDb.pragma('journal_mode', { simple: true }), 'wal');
    const dir = tempDir();
    const db = openDatabase(databasePath(dir));
    assert.equal(db.pragma('synchronous', { simple: true }), FULL);
    const reader = openReadOnly(databasePath(dir));
    assert.equal(reader.pragma('synchronous', { simple: true }), FULL);
    reader.close();
    db.close();
  });

  it('the agent in its own process (as `serve` runs it) runs FULL', { timeout: 30_000 }, async () => {
    const dataDir = tempDir();
    const agent = await spawnAgent(writeConfig(dataDir, { dataDir, webhook: { port: 0 }, admin: { enabled: false } }));
    try {
      assert.equal((await agent.stats()).synchronous, FULL);
    } finally {
      await agent.stop();
    }
  });

  it('every writable connection opened anywhere in src/ sets FULL (or goes through openDatabase)', () => {
    const offenders: string[] = [];
    for (const file of sourceFiles(path.join(ROOT, 'src'))) {
      const text = fs.readFileSync(file, 'utf8');
      const opens = [...text.matchAll(/new Database\(([^)]*)\)/g)];
      for (const open of opens) {
        if (/readonly:\s*true/.test(open[1] ?? '')) continue;
        const setsFull = /configureWriter\(/.test(text) || /synchronous\s*=\s*(FULL|2|EXTRA|3)/i.test(text);
        if (!setsFull) offenders.push(`${path.relative(ROOT, file)}: ${open[0]}`);
      }
    }
    assert.deepEqual(offenders, [], 'writable connections without synchronous=FULL (use openDatabase, or configureWriter(db) after opening)');
  });
});

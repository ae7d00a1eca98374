import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { AgentCore } from '../../src/core';
import { silentLogger } from '../../src/log';
import { storeFilePath } from '../../src/store/database';
import { describeLayout } from '../../src/store/split';
import { item, price, tempDir, testConfig, update } from '../helpers/fixtures';

/** A data folder holding a copy of the database 0.1 wrote (test/fixtures/legacy-0.1/README.md). */
function legacyFolder(): string {
  const dir = tempDir('pos-sync-split-');
  fs.copyFileSync(path.join(__dirname, '..', 'fixtures', 'legacy-0.1', 'pos-sync.db'), path.join(dir, 'pos-sync.db'));
  return dir;
}

function readAll(file: string, sql: string): unknown[] {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).all();
  } finally {
    db.close();
  }
}

const PRICES = 'SELECT location_id, plu, item_id, item_name, tariff_name, tax_code, tax_rate, sell_price_minor, sell_price, currency, date_from, date_to FROM pos_prices ORDER BY 1, 3, 5, 11';
const AVAILABILITY = 'SELECT location_id, plu, item_id, meal_period, status, date_from, date_to FROM pos_availability ORDER BY 1, 3, 4, 6';

describe('upgrading a 0.1 data folder (one file) to three files', () => {
  it('moves the inbox, audit and staff data out of the till file, keeps the menu as it was, and loses nothing', () => {
    const dir = legacyFolder();
    const fixture = path.join(__dirname, '..', 'fixtures', 'legacy-0.1', 'pos-sync.db');
    const pricesBefore = readAll(fixture, PRICES);
    const availabilityBefore = readAll(fixture, AVAILABILITY);
    const inboxBefore = readAll(fixture, 'SELECT id, location_id, change_sequence, state, body_sha256 FROM inbox ORDER BY id');
    assert.equal(describeLayout(path.join(dir, 'pos-sync.db')), 'legacy-single-file');
    const messages: string[] = [];
    const core = new AgentCore(testConfig({ dataDir: dir }), { ...silentLogger, info: (m: string) => messages.push(m) });
    try {
      assert.match(messages.join('\n'), /data folder split into pos-sync\.db \(till\), agent\.db and staff\.db: 6 stored updates/);
      // The till's file: the contract only, readable by old SQLite builds (no STRICT anywhere).
      const tillFile = storeFilePath(dir, 'till');
      const tables = readAll(tillFile, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_stat%' ORDER BY name").map((r) => (r as { name: string }).name);
      assert.deepEqual(tables, ['applied_updates', 'availability_ranges', 'item_changes', 'items', 'location_days', 'location_utc_offsets', 'locations', 'price_ranges', 'schema_migrations', 'sqlite_sequence']);
      const strict = readAll(tillFile, "SELECT name FROM sqlite_master WHERE sql LIKE '%STRICT%'");
      assert.deepEqual(strict, []);
      assert.deepEqual(readAll(tillFile, PRICES), pricesBefore, 'what the till charges is unchanged');
      assert.deepEqual(readAll(tillFile, AVAILABILITY), availabilityBefore);
      assert.deepEqual(readAll(tillFile, 'SELECT location_id, last_change_sequence, waiting_updates, warnings FROM pos_sync_state ORDER BY 1'), [
        { location_id: 200, last_change_sequence: 10, waiting_updates: 1, warnings: 1 },
        { location_id: 3021, last_change_sequence: 1043, waiting_updates: 0, warnings: 0 },
      ]);
      // No byte of the till's file still holds the staff member's personal data.
      const bytes = fs.readFileSync(tillFile);
      for (const secret of ['Müller', 'QQ123456C', 'zoe@example.com', 'Leeds Central']) {
        assert.equal(bytes.includes(Buffer.from(secret)), false, `the till file still contains ${secret}`);
      }
      assert.equal(fs.existsSync(`${tillFile}-wal`) ? fs.readFileSync(`${tillFile}-wal`).includes(Buffer.from('QQ123456C')) : false, false);
      // agent.db: every stored update, the history, quarantine, warnings and audit.
      assert.deepEqual(core.agentDb.prepare('SELECT id, location_id, change_sequence, state, body_sha256 FROM inbox ORDER BY id').all(), inboxBefore);
      assert.equal((core.agentDb.prepare('SELECT count(*) AS n FROM quarantine').get() as { n: number }).n, 1);
      assert.equal((core.agentDb.prepare('SELECT count(*) AS n FROM deliveries').get() as { n: number }).n, 7);
      assert.equal((core.agentDb.prepare('SELECT count(*) AS n FROM update_warnings WHERE acknowledged_at IS NULL').get() as { n: number }).n, 1);
      assert.deepEqual(
        core.agentDb.prepare('SELECT action FROM audit_log ORDER BY id').all().map((r) => (r as { action: string }).action).slice(-2),
        ['acknowledge-warnings', 'split-data-files'],
      );
      // staff.db: the cache, whole.
      const person = core.staffDb.prepare('SELECT display_name, raw FROM staff_employees').get() as { display_name: string; raw: string };
      assert.equal(person.display_name, 'Zoë Müller');
      assert.equal(JSON.parse(person.raw).NINumber, 'QQ123456C');
      // The whole 0.1 file is kept, untouched, beside the backups.
      const backups = fs.readdirSync(path.join(dir, 'backups')).filter((f) => f.startsWith('pre-0.2-split-'));
      assert.equal(backups.length, 1);
      assert.deepEqual(readAll(path.join(dir, 'backups', backups[0]!), 'SELECT count(*) AS n FROM staff_employees'), [{ n: 1 }]);
      // Status reads across the files as before: location 200 waits for 11 and has a conflict.
      const status = core.status().find((s) => s.locationId === 200)!;
      assert.equal(status.lastChangeSequence, 10);
      assert.deepEqual(status.waiting.map((w) => [w.changeSequence, w.waitingFor]), [[12, 11]]);
      assert.equal(status.conflicts, 1);
      // And the chain continues: 11 arrives, then the waiting 12 applies.
      const { applied } = core.importPayload(Buffer.from(JSON.stringify(update(200, 11, 10, [item('5001', 'I-1', [price('2026-03-01', '2026-03-31', 'Eat In', '4.75')])]))), 'test');
      assert.deepEqual(applied.map((a) => a.changeSequence), [11, 12]);
    } finally {
      core.close();
    }
    // A second start finds three files and splits nothing again.
    const again = new AgentCore(testConfig({ dataDir: dir }), silentLogger);
    again.close();
    assert.equal(fs.readdirSync(path.join(dir, 'backups')).filter((f) => f.startsWith('pre-0.2-split-')).length, 1);
    assert.equal(describeLayout(path.join(dir, 'pos-sync.db')), 'split');
  });

  it('a split interrupted before the till file changed is simply done again on the next start', () => {
    const dir = legacyFolder();
    // What a crash during step 2 leaves: a half-built file and a stale agent.db from an earlier attempt.
    fs.writeFileSync(path.join(dir, 'agent.db.partial'), 'half written');
    const stale = new Database(path.join(dir, 'agent.db'));
    stale.exec('CREATE TABLE leftover (x)');
    stale.close();
    const core = new AgentCore(testConfig({ dataDir: dir }), silentLogger);
    try {
      assert.equal((core.agentDb.prepare('SELECT count(*) AS n FROM inbox').get() as { n: number }).n, 6);
      assert.equal(core.agentDb.prepare("SELECT name FROM sqlite_master WHERE name = 'leftover'").get(), undefined);
      assert.equal(fs.existsSync(path.join(dir, 'agent.db.partial')), false);
    } finally {
      core.close();
    }
  });

  it('a new data folder gets three files; a file written by a newer agent is refused by name', () => {
    const dir = tempDir();
    const core = new AgentCore(testConfig({ dataDir: dir }), silentLogger);
    core.agentDb.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, ?, ?)').run('from-the-future', new Date().toISOString());
    core.close();
    assert.deepEqual(['agent.db', 'pos-sync.db', 'staff.db'].map((f) => fs.existsSync(path.join(dir, f))), [true, true, true]);
    assert.throws(() => new AgentCore(testConfig({ dataDir: dir }), silentLogger), /agent\.db has migrations this agent does not know \(99-from-the-future\)/);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AgentCore } from '../../src/core';
import { silentLogger } from '../../src/log';
import { openDatabase, preparedStatement, storeFilePath, type Db } from '../../src/store/database';
import { ensureLocationOffsets, locationToday } from '../../src/till/location-time';
import { isPaused } from '../../src/store/operations-state';
import { item, price, schedule, tempDir, testConfig } from '../helpers/fixtures';

/**
 * Found by `npm run bench:load`: code that ran per apply or per drain prepared its statements on each
 * call, and a prepared statement keeps its native memory until V8 collects its small wrapper. Under a
 * backlog of tens of thousands of updates the agent's peak memory grew by hundreds of MB (70,000
 * offsets checks alone: 390-570 MiB). These count the statements each connection prepares.
 */
function countPrepares(db: Db): { readonly count: number } {
  const counter = { count: 0 };
  const prepare = db.prepare.bind(db);
  (db as { prepare: unknown }).prepare = (sql: string) => {
    counter.count++;
    return prepare(sql);
  };
  return counter;
}

function smallUpdate(sequence: number): Buffer {
  return Buffer.from(
    JSON.stringify({
      ChangeSequence: sequence,
      ParentChangeSequence: sequence - 1,
      LocationID: 7,
      CurrencyIsoCode: 'GBP',
      ScheduledItems: [item('1001', 'tea', [price('2027-01-01', '2027-01-31', 'Eat in', `1.${String(sequence).padStart(2, '0')}`)], [schedule('2027-01-01', '2027-01-31', 'Lunch')])],
    }),
  );
}

describe('statements run per apply, drain or poll are prepared once per connection', () => {
  it('preparedStatement: one statement per connection and text', () => {
    const dir = tempDir('pos-sync-prepared-');
    const a = openDatabase(storeFilePath(dir, 'till'));
    const b = openDatabase(storeFilePath(tempDir('pos-sync-prepared-b-'), 'till'));
    try {
      const one = preparedStatement(a, 'SELECT 1 AS one');
      assert.equal(preparedStatement(a, 'SELECT 1 AS one'), one);
      assert.notEqual(preparedStatement(b, 'SELECT 1 AS one'), one);
      assert.notEqual(preparedStatement(a, 'SELECT 2 AS two'), one);
      assert.deepEqual(one.get(), { one: 1 });
    } finally {
      a.close();
      b.close();
    }
  });

  it('the offsets check, "today" and the pause prepare nothing after their first call', () => {
    const till = openDatabase(storeFilePath(tempDir('pos-sync-prepared-till-'), 'till'));
    const agent = openDatabase(storeFilePath(tempDir('pos-sync-prepared-agent-'), 'agent'), { kind: 'agent' });
    try {
      ensureLocationOffsets(till, 1, 'Europe/London');
      locationToday(till, 1);
      isPaused(agent);
      const tillPrepares = countPrepares(till);
      const agentPrepares = countPrepares(agent);
      for (let i = 0; i < 100; i++) {
        assert.equal(ensureLocationOffsets(till, 1 + (i % 3), 'Europe/London'), i === 1 || i === 2, `call ${i}`);
        assert.match(locationToday(till, 1) ?? '', /^\d{4}-\d{2}-\d{2}$/);
        assert.equal(isPaused(agent), false);
      }
      // Locations 2 and 3 were written once each, with the statements location 1's write prepared.
      assert.equal(tillPrepares.count, 0);
      assert.equal(agentPrepares.count, 0);
    } finally {
      till.close();
      agent.close();
    }
  });

  it('a receipt, its apply and the counters that follow prepare nothing once the first has run', () => {
    const core = new AgentCore(testConfig({ dataDir: tempDir('pos-sync-prepared-core-') }), silentLogger);
    try {
      core.importPayload(smallUpdate(1), 'test');
      core.importPayload(smallUpdate(2), 'test');
      const tillPrepares = countPrepares(core.tillDb);
      const agentPrepares = countPrepares(core.agentDb);
      for (let sequence = 3; sequence < 40; sequence++) {
        const { applied } = core.importPayload(smallUpdate(sequence), 'test');
        assert.equal(applied.length, 1, `update ${sequence} applied`);
      }
      assert.equal(tillPrepares.count, 0, 'the till connection');
      assert.equal(agentPrepares.count, 0, "the agent's connection");
      const sequence = core.tillDb.prepare('SELECT last_change_sequence AS s FROM locations WHERE location_id = 7').get() as { s: number };
      assert.equal(sequence.s, 39);
    } finally {
      core.close();
    }
  });
});

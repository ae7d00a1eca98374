import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AgentCore } from '../../src/core';
import { silentLogger } from '../../src/log';
import { openReadOnly, storeFilePath, type Db } from '../../src/store/database';
import { CHANGE_FEED_RETENTION_DAYS } from '../../src/till/writer';
import { item, price, schedule, tempDir, testConfig, update } from '../helpers/fixtures';

/**
 * pos_changes through the real store: updates applied by the applier into a real till file, read by a
 * read-only connection as a till would, with the documented poll (docs/pos-database.md, "Change feed").
 */

interface ChangeRow {
  change_id: number;
  location_id: number;
  item_id: string;
  plu: string;
  change_sequence: number;
  applied_at: string;
}

function body(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value));
}

function poll(reader: Db, last: number): ChangeRow[] {
  return reader.prepare<[number], ChangeRow>('SELECT * FROM pos_changes WHERE change_id > ? ORDER BY change_id').all(last);
}

function setUp(): { core: AgentCore; reader: Db } {
  const dir = tempDir('pos-sync-feed-');
  const core = new AgentCore(testConfig({ dataDir: dir }), silentLogger);
  // The till's connection: read-only, opened before anything is applied, kept open throughout.
  core.importPayload(body(update(3021, 1, 0, [item(1001, 'a', [price('2026-01-01', '9999-12-31', 'Eat in', 11.5)])])), 'test');
  const reader = openReadOnly(storeFilePath(dir, 'till'));
  return { core, reader };
}

describe('pos_changes, the change feed a till polls', () => {
  it('lists the items each applied update changed, in apply order, with the update that did it', () => {
    const { core, reader } = setUp();
    try {
      const first = poll(reader, 0);
      assert.deepEqual(first.map((r) => [r.item_id, r.plu, r.change_sequence]), [['a', '1001', 1]]);
      let last = first.at(-1)!.change_id;

      core.importPayload(
        body(
          update(3021, 2, 1, [
            item(1001, 'a', [price('2026-01-01', '9999-12-31', 'Eat in', 11.5)]),
            item(2040, 'b', [price('2026-01-01', '9999-12-31', 'Eat in', '4.20')], [schedule('2026-01-01', '9999-12-31', 'Lunch')]),
            item(3001, 'c', [], [schedule('2026-01-01', '9999-12-31', 'Breakfast')]),
          ]),
        ),
        'test',
      );
      // Item a was resent unchanged: it is not a change. b and c are new.
      const second = poll(reader, last);
      assert.deepEqual(second.map((r) => [r.location_id, r.item_id, r.plu, r.change_sequence]), [[3021, 'b', '2040', 2], [3021, 'c', '3001', 2]]);
      assert.ok(second[0]!.change_id > last);
      const state = reader.prepare<[], { last_applied_at: string }>('SELECT last_applied_at FROM pos_sync_state WHERE location_id = 3021').get()!;
      assert.ok(second.every((r) => r.applied_at === state.last_applied_at), 'applied_at is the update\'s, as pos_sync_state shows it');
      last = second.at(-1)!.change_id;

      core.importPayload(
        body(
          update(3021, 3, 2, [
            item(1001, 'a', [price('2026-06-01', '2026-06-30', 'Eat in', '12.00')]),
            item(2040, 'b', [price('2026-01-01', '9999-12-31', 'Eat in', '4.20')], [schedule('2026-01-01', '9999-12-31', 'Lunch')]),
            item(3001, 'c', [], [schedule('2026-01-01', '9999-12-31', 'Breakfast')], { ItemName: 'Full breakfast' }),
          ]),
        ),
        'test',
      );
      // a: a price for June; b: unchanged; c: renamed only.
      assert.deepEqual(poll(reader, last).map((r) => [r.item_id, r.change_sequence]), [['a', 3], ['c', 3]]);
      // Increasing in apply order, no gaps within what is kept.
      const all = poll(reader, 0).map((r) => r.change_id);
      assert.deepEqual(all, [...all].sort((x, y) => x - y));
      assert.equal(all.at(-1)! - all[0]! + 1, all.length);
    } finally {
      reader.close();
      core.close();
    }
  });

  it('PRAGMA data_version moves for a reader exactly when an update was committed', () => {
    const { core, reader } = setUp();
    try {
      const version = (): number => reader.pragma('data_version', { simple: true }) as number;
      const before = version();
      assert.equal(version(), before, 'nothing committed: unchanged');
      core.importPayload(body(update(3021, 2, 1, [item(1001, 'a', [price('2026-01-01', '9999-12-31', 'Eat in', '11.75')])])), 'test');
      const after = version();
      assert.notEqual(after, before);
      assert.deepEqual(poll(reader, 1).map((r) => r.item_id), ['a']);
      assert.equal(version(), after);
    } finally {
      reader.close();
      core.close();
    }
  });

  it(`keeps rows ${CHANGE_FEED_RETENTION_DAYS} days, prunes older ones inside an apply, and never reuses a change_id`, () => {
    const { core, reader } = setUp();
    try {
      const old = new Date(Date.now() - (CHANGE_FEED_RETENTION_DAYS + 1) * 86_400_000).toISOString();
      const recent = new Date(Date.now() - (CHANGE_FEED_RETENTION_DAYS - 1) * 86_400_000).toISOString();
      // Age the rows the first apply wrote, and add one that is still young, as the applier would have.
      core.tillDb.prepare('UPDATE item_changes SET applied_at = ?').run(old);
      core.tillDb.prepare("INSERT INTO item_changes (location_id, item_id, plu, inbox_id, change_sequence, applied_at) VALUES (3021, 'z', '9', 1, 1, ?)").run(recent);
      const highest = poll(reader, 0).at(-1)!.change_id;
      core.importPayload(body(update(3021, 2, 1, [item(1001, 'a', [price('2026-01-01', '9999-12-31', 'Eat in', '11.75')])])), 'test');
      const kept = poll(reader, 0);
      assert.deepEqual(kept.map((r) => r.item_id), ['z', 'a'], 'the old row is gone, the young one kept');
      assert.ok(kept.at(-1)!.change_id > highest);

      // Every row old: all but the newest pruned, and the next change_id still continues upwards (AUTOINCREMENT).
      core.tillDb.prepare('UPDATE item_changes SET applied_at = ?').run(old);
      core.importPayload(body(update(3021, 3, 2, [item(1001, 'a', [price('2026-01-01', '9999-12-31', 'Eat in', '11.80')])])), 'test');
      const after = poll(reader, 0);
      assert.deepEqual(after.map((r) => r.change_id), [kept.at(-1)!.change_id + 1]);
    } finally {
      reader.close();
      core.close();
    }
  });

  it('keeps the newest row when an apply that changes nothing prunes the rest, so a till still sees its gap', () => {
    const { core, reader } = setUp();
    try {
      const old = new Date(Date.now() - (CHANGE_FEED_RETENTION_DAYS + 7) * 86_400_000).toISOString();
      core.importPayload(body(update(3021, 2, 1, [item(1001, 'a', [price('2026-01-01', '9999-12-31', 'Eat in', '11.75')])])), 'test');
      const seen = poll(reader, 0);
      const newest = seen.at(-1)!.change_id;
      // A till that read up to an earlier row, then was off for longer than the retention.
      const last = newest - 2;
      core.tillDb.prepare('UPDATE item_changes SET applied_at = ?').run(old);
      // Resent as it was: nothing changes, no row is added, and the old ones are pruned.
      core.importPayload(body(update(3021, 3, 2, [item(1001, 'a', [price('2026-01-01', '9999-12-31', 'Eat in', '11.75')])])), 'test');
      const { oldest, newest: after } = reader.prepare('SELECT min(change_id) AS oldest, max(change_id) AS newest FROM pos_changes').get() as { oldest: number | null; newest: number | null };
      assert.deepEqual([oldest, after], [newest, newest], 'the newest row is kept');
      assert.ok(oldest! > last + 1, "the till's gap rule (docs/pos-database.md, step 4) fires");
    } finally {
      reader.close();
      core.close();
    }
  });
});

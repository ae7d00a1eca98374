import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { changeFingerprint, dailyStats } from '../../../src/admin/stats';
import { openDatabase, storeFilePath } from '../../../src/store/database';
import { tempDir } from '../../helpers/fixtures';

describe('dailyStats', () => {
  it('buckets deliveries per local day with apply times, empty days included', () => {
    const dir = tempDir();
    const db = openDatabase(storeFilePath(dir, 'agent'), { kind: 'agent' });
    const till = openDatabase(storeFilePath(dir, 'till'), { kind: 'till' });
    try {
      const insertInbox = db.prepare(
        "INSERT INTO inbox (id, location_id, change_sequence, parent_change_sequence, body_kept, body_bytes, body_sha256, received_at, source, state, apply_ms) VALUES (?, 1, ?, ?, 0, 10, ?, ?, 'webhook', ?, ?)",
      );
      const insertDelivery = db.prepare("INSERT INTO deliveries (received_at, source, body_bytes, inbox_id, outcome, http_status) VALUES (?, 'webhook', 10, ?, ?, ?)");
      insertInbox.run(1, 11, 10, 'a', '2027-01-03T23:30:00Z', 'applied', 40); // London: 3 Jan
      insertInbox.run(2, 12, 11, 'b', '2027-01-04T09:00:00Z', 'applied', 10);
      insertInbox.run(3, 13, 12, 'c', '2027-01-04T10:00:00Z', 'pending', null);
      insertDelivery.run('2027-01-03T23:30:00Z', 1, 'accepted', 200);
      insertDelivery.run('2027-01-04T09:00:00Z', 2, 'accepted', 200);
      insertDelivery.run('2027-01-04T09:01:00Z', 2, 'duplicate', 200);
      insertDelivery.run('2027-01-04T10:00:00Z', 3, 'accepted', 200);
      insertDelivery.run('2027-01-04T11:00:00Z', null, 'rejected', 400);
      insertDelivery.run('2026-12-01T11:00:00Z', null, 'rejected', 400); // outside the window
      const s = dailyStats(db, 3, 'Europe/London', new Date('2027-01-04T12:00:00Z'));
      assert.deepEqual(s.days, ['2027-01-02', '2027-01-03', '2027-01-04']);
      assert.deepEqual(s.delivered, [0, 1, 3]);
      assert.deepEqual(s.rejected, [0, 0, 1]);
      assert.deepEqual(s.applyMsMax, [null, 40, 10]);
      assert.deepEqual(s.applyMsMean, [null, 40, 10]);
      // In Tokyo the 23:30Z delivery falls on 4 Jan.
      const tokyo = dailyStats(db, 2, 'Asia/Tokyo', new Date('2027-01-04T12:00:00Z'));
      assert.deepEqual(tokyo.days, ['2027-01-03', '2027-01-04']);
      assert.deepEqual(tokyo.delivered, [0, 4]);
      const before = changeFingerprint(db, till);
      insertDelivery.run('2027-01-04T11:30:00Z', 2, 'duplicate', 200);
      assert.notEqual(changeFingerprint(db, till), before);
      const beforeApply = changeFingerprint(db, till);
      till.prepare("INSERT INTO locations (location_id, last_change_sequence) VALUES (1, 13)").run();
      assert.notEqual(changeFingerprint(db, till), beforeApply, 'an apply in the till file changes the fingerprint');
    } finally {
      db.close();
    }
  });

  it('lists every calendar day across a clock change, in the hour after midnight too', () => {
    const dir = tempDir();
    const db = openDatabase(storeFilePath(dir, 'agent'), { kind: 'agent' });
    try {
      db.prepare("INSERT INTO deliveries (received_at, source, body_bytes, inbox_id, outcome, http_status) VALUES (?, 'webhook', 10, NULL, 'rejected', 400)").run('2027-03-28T10:00:00Z');
      // 00:30 BST on Monday 29 March 2027: the clocks went forward on Sunday 28 March.
      const spring = dailyStats(db, 3, 'Europe/London', new Date('2027-03-28T23:30:00Z'));
      assert.deepEqual(spring.days, ['2027-03-27', '2027-03-28', '2027-03-29']);
      assert.deepEqual(spring.rejected, [0, 1, 0]);
      // 23:30 GMT on Sunday 31 October 2027, the day the clocks went back: 14 days, none twice.
      const autumn = dailyStats(db, 14, 'Europe/London', new Date('2027-10-31T23:30:00Z'));
      assert.equal(autumn.days.length, 14);
      assert.equal(autumn.days[13], '2027-10-31');
      assert.equal(autumn.days[0], '2027-10-18');
    } finally {
      db.close();
    }
  });
});

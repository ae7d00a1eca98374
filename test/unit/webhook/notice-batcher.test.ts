import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import { NoticeBatcher } from '../../../src/webhook/notice-batcher';

describe('NoticeBatcher (the receiver thread\'s notices to the main thread)', () => {
  it('sends the first item after a quiet spell at once, the rest of a busy spell together at the end of the window', () => {
    mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 });
    try {
      const sent: { at: number; batch: number[] }[] = [];
      const batcher = new NoticeBatcher<number>(50, (batch) => sent.push({ at: Date.now(), batch }));
      batcher.push(1);
      assert.deepEqual(sent, [{ at: 1_000_000, batch: [1] }], 'a lone item goes at once');
      // A busy spell: an item every 5 ms for 100 ms.
      for (let k = 2; k <= 21; k++) {
        mock.timers.tick(5);
        batcher.push(k);
      }
      mock.timers.tick(100);
      // 21 items in 100 ms: 4 batches (the lone first, then the ends of three windows), never two within 50 ms.
      const times = sent.map((s) => s.at - 1_000_000);
      assert.equal(sent.length, 4, `batches at ${times.join(', ')} ms`);
      assert.deepEqual(times.slice(0, 3), [0, 50, 100]);
      for (let i = 1; i < times.length; i++) assert.ok(times[i]! - times[i - 1]! >= 50, `batches at ${times.join(', ')} ms`);
      assert.deepEqual(sent.flatMap((s) => s.batch), Array.from({ length: 21 }, (_, i) => i + 1), 'every item once, in order');
      // Quiet again: the next item goes at once.
      mock.timers.tick(500);
      batcher.push(22);
      assert.deepEqual(sent.at(-1)!.batch, [22]);
      assert.equal(sent.at(-1)!.at, Date.now(), 'sent at the moment it was pushed');
    } finally {
      mock.timers.reset();
    }
  });

  it('sends at once when urgent, and flush sends what waits (nothing when nothing does)', () => {
    mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 });
    try {
      const sent: string[][] = [];
      const batcher = new NoticeBatcher<string>(50, (batch) => sent.push(batch));
      batcher.push('a');
      mock.timers.tick(10);
      batcher.push('b');
      assert.deepEqual(sent, [['a']], 'b waits for the end of the window');
      batcher.push('lost', true);
      assert.deepEqual(sent, [['a'], ['b', 'lost']], 'urgent takes what waits with it');
      mock.timers.tick(100);
      assert.equal(sent.length, 2, 'no timer left behind');
      batcher.flush();
      assert.equal(sent.length, 2, 'an empty flush sends nothing');
      mock.timers.tick(10);
      batcher.push('c');
      batcher.flush();
      assert.deepEqual(sent.at(-1), ['c']);
    } finally {
      mock.timers.reset();
    }
  });
});

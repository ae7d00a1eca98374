import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { item, price, tempDir, update } from '../helpers/fixtures';
import { writeBodyFile } from '../../src/store/body-files';
import { Inbox, type ReceiptOutcome } from '../../src/store/inbox';
import { InboxServer } from '../../src/store/inbox-server';
import { closeStore, openStore } from '../../src/store/store';

/**
 * Issue 29: a large body's check runs in slices (Inbox.receiveFile), so a small delivery that arrives
 * while it runs is stored, and answered, before the large one is. Real agent.db, real body file.
 */

function body(location: number, sequence: number, items: number): Buffer {
  const list = Array.from({ length: items }, (_, i) => item(String(100 + i), `I-${i}`, [price('2026-12-01', '9999-12-31', 'Eat In', `${2 + (i % 5)}.50`)]));
  return Buffer.from(JSON.stringify(update(location, sequence, sequence - 1, list)));
}

describe('a large body checked in slices', () => {
  for (const refused of [false, true]) {
    it(`lets a small delivery be stored while it is checked (${refused ? 'a body refused at its last item' : 'a good body'})`, async () => {
      const dataDir = tempDir('pos-sync-inbox-slices-');
      const store = openStore(dataDir);
      try {
        const inbox = new Inbox(store.agent);
        let raw = body(1, 2, 400);
        // The last item is not JSON (a number with two points): found only when the check reaches it.
        if (refused) raw = Buffer.from(raw.toString('utf8').replace(/"SellPrice":"6\.50"(?![\s\S]*"SellPrice")/, '"SellPrice":6..50'));
        const file = await writeBodyFile(dataDir, raw);
        const order: string[] = [];
        let small: ReceiptOutcome | undefined;
        setImmediate(() => {
          small = inbox.receive({ raw: body(2, 2, 1), sender: 'test', source: 'webhook', contentType: 'application/json' });
          order.push('small stored');
        });
        const large = await inbox.receiveFile({ file, sender: 'test', source: 'webhook', contentType: 'application/json' }, 0);
        order.push('large stored');
        assert.deepEqual(order, ['small stored', 'large stored']);
        const stored = small as ReceiptOutcome | undefined;
        assert.equal(stored?.kind, 'stored');
        assert.equal(large.kind, refused ? 'rejected' : 'stored');
        if (large.kind === 'rejected') assert.equal(large.error.id, 'invalid_json');
        if (large.kind === 'stored' && stored?.kind === 'stored') assert.ok(large.inboxId > stored.inboxId);
      } finally {
        closeStore(store);
      }
    });
  }

  it('a stop during the check lets it finish and commit before agent.db closes', async () => {
    const dataDir = tempDir('pos-sync-inbox-close-');
    const store = openStore(dataDir);
    try {
      const server = new InboxServer(new Inbox(store.agent), store.agent, 0);
      const file = await writeBodyFile(dataDir, body(3, 2, 400));
      const receipt = server.receiveFile({ file, sender: 'test', source: 'webhook', contentType: 'application/json' });
      // The check has yielded after its first slice: the close arrives in the middle of it.
      await new Promise((resolve) => setImmediate(resolve));
      const closed = server.close();
      const outcome = await receipt;
      await closed;
      assert.equal(outcome.kind, 'stored');
      assert.equal(store.agent.open, false, 'closed once the receipt was committed');
    } finally {
      if (store.agent.open) closeStore(store);
      else for (const db of [store.till, store.staff]) db.close();
    }
  });

  for (const meaning of ['same', 'different'] as const) {
    it(`compares a redelivery whose bytes differ in slices, before its transaction (${meaning} meaning)`, async () => {
      const dataDir = tempDir('pos-sync-inbox-compare-');
      const store = openStore(dataDir);
      try {
        const inbox = new Inbox(store.agent);
        const first = await inbox.receiveFile({ file: await writeBodyFile(dataDir, body(4, 2, 400)), sender: 'test', source: 'webhook', contentType: 'application/json' }, 0);
        assert.equal(first.kind, 'stored');
        // The same update re-encoded (spacing, identifiers as numbers), or with one price changed.
        const update = JSON.parse(body(4, 2, 400).toString('utf8')) as { ScheduledItems: { PLU: string | number; PriceUpdates: { SellPrice: string }[] }[] };
        if (meaning === 'same') for (const i of update.ScheduledItems) i.PLU = Number(i.PLU);
        else update.ScheduledItems[399]!.PriceUpdates[0]!.SellPrice = '9.99';
        const again = Buffer.from(JSON.stringify(update, null, 1));

        // Seen from outside: when the comparison starts, and whether the write transaction read a
        // stored body whole (the old way, on the thread that answers head office).
        const hooks = inbox as unknown as { compareWithStored: (...args: unknown[]) => Promise<unknown>; bodies: { read: (...args: unknown[]) => unknown } };
        let comparing = false;
        const compare = hooks.compareWithStored.bind(inbox);
        hooks.compareWithStored = (...args) => {
          comparing = true;
          return compare(...args);
        };
        let wholeReads = 0;
        const read = hooks.bodies.read.bind(hooks.bodies);
        hooks.bodies.read = (...args) => {
          wholeReads += 1;
          return read(...args);
        };

        const order: string[] = [];
        let small: ReceiptOutcome | undefined;
        let finished = false;
        const tick = (): void => {
          if (finished) return;
          if (!comparing) return void setImmediate(tick);
          small = inbox.receive({ raw: body(5, 2, 1), sender: 'test', source: 'webhook', contentType: 'application/json' });
          order.push('small stored');
        };
        setImmediate(tick);
        const redelivery = await inbox.receiveFile({ file: await writeBodyFile(dataDir, again), sender: 'test', source: 'webhook', contentType: 'application/json' }, 0);
        finished = true;
        order.push('redelivery stored');
        assert.deepEqual(order, ['small stored', 'redelivery stored'], 'a small delivery waited for the whole comparison');
        assert.equal((small as ReceiptOutcome | undefined)?.kind, 'stored');
        assert.equal(redelivery.kind, 'stored');
        if (redelivery.kind === 'stored' && first.kind === 'stored') {
          assert.equal(redelivery.decision, meaning === 'same' ? 'duplicate' : 'conflict');
          if (meaning === 'same') assert.equal(redelivery.inboxId, first.inboxId);
        }
        assert.equal(wholeReads, 0, 'the write transaction read a stored body whole');
      } finally {
        closeStore(store);
      }
    });
  }
});

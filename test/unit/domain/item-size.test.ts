import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_ITEM_BYTES, MAX_ITEMS, MAX_MEMBER_BYTES, readBody, readBodyFrom } from '../../../src/domain/body';
import { bytesSource } from './scan-harness';

/**
 * One item may take at most MAX_ITEM_BYTES (an item that large could take more memory to parse than
 * the webhook's and the applier's threads have): at the limit it is accepted, a byte over it is
 * refused as item_too_large naming the item, the same whether the body is in memory or in a file.
 */

/** A body whose second item takes exactly `itemBytes` bytes (its name padded to fit). */
function bodyWithItemOf(itemBytes: number): { raw: Buffer; itemBytes: number } {
  const item = (name: string): string => JSON.stringify({ PLU: '2', ItemID: 'big', ItemName: name, ItemType: 'RECIPE', PriceUpdates: [], ScheduleUpdates: [] });
  const pad = itemBytes - Buffer.byteLength(item(''));
  const big = item('x'.repeat(pad));
  assert.equal(Buffer.byteLength(big), itemBytes);
  const small = JSON.stringify({ PLU: '1', ItemID: 'small', ItemName: 'Tea', ItemType: 'RECIPE', PriceUpdates: [], ScheduleUpdates: [] });
  const raw = Buffer.from(`{"ChangeSequence":2,"ParentChangeSequence":1,"LocationID":7,"ScheduledItems":[${small},${big}]}`);
  return { raw, itemBytes };
}

describe('the size of one item', () => {
  for (const [what, read] of [
    ['in memory', (raw: Buffer) => readBody(raw, { checkItems: true })],
    ['from a file, piece by piece', (raw: Buffer) => readBodyFrom(bytesSource(raw), { checkItems: true })],
  ] as const) {
    it(`is accepted at the limit and refused a byte over it (${what})`, () => {
      const atLimit = read(bodyWithItemOf(MAX_ITEM_BYTES).raw);
      assert.equal(atLimit.ok, true);
      const over = read(bodyWithItemOf(MAX_ITEM_BYTES + 1).raw);
      assert.equal(over.ok, false);
      if (!over.ok) {
        assert.equal(over.error.id, 'item_too_large');
        assert.equal(over.error.field, 'ScheduledItems[1]');
        assert.match(over.error.message, new RegExp(`^${MAX_ITEM_BYTES + 1} bytes, more than the ${MAX_ITEM_BYTES} one item may take$`));
      }
    });
  }

  it('is not checked when items are not (the applier reads bodies already accepted)', () => {
    assert.equal(readBody(bodyWithItemOf(MAX_ITEM_BYTES + 1).raw, { checkItems: false }).ok, true);
  });
});

describe('the number of items and the size of the other members', () => {
  const items = (n: number): Buffer => Buffer.from(`{"ChangeSequence":2,"ParentChangeSequence":1,"LocationID":7,"ScheduledItems":[${new Array(n).fill('0').join(',')}]}`);
  // The members other than ScheduledItems taking `bytes` together (ChangeSequence, ParentChangeSequence and LocationID a byte each).
  const member = (bytes: number): Buffer => Buffer.from(`{"ChangeSequence":2,"ParentChangeSequence":1,"LocationID":7,"Pad":"${'x'.repeat(bytes - 5)}","ScheduledItems":[]}`);
  for (const [what, read] of [
    ['in memory', (raw: Buffer) => readBody(raw, { checkItems: true })],
    ['from a file, piece by piece', (raw: Buffer) => readBodyFrom(bytesSource(raw), { checkItems: true, block: 4096 })],
  ] as const) {
    it(`refuses an update of more than MAX_ITEMS items, whatever their size (${what})`, () => {
      const at = read(items(MAX_ITEMS));
      assert.ok(at.ok || at.error.id !== 'too_many_items', 'refused at the limit');
      const over = read(items(MAX_ITEMS + 1));
      assert.deepEqual(over.ok ? null : over.error, { id: 'too_many_items', field: 'ScheduledItems', message: `more than the ${MAX_ITEMS} items one update may hold` });
    });

    it(`refuses the item limit before what follows the item past it, as both readers do (${what})`, () => {
      const raw = Buffer.from(`{"ChangeSequence":2,"ParentChangeSequence":1,"LocationID":7,"ScheduledItems":[${new Array(MAX_ITEMS + 1).fill('0').join(',')} x]}`);
      const r = read(raw);
      assert.equal(r.ok ? null : r.error.id, 'too_many_items');
    });

    it(`says a ScheduledItems that is not an array is not one, however large (${what})`, () => {
      const raw = Buffer.from(`{"ChangeSequence":2,"ParentChangeSequence":1,"LocationID":7,"ScheduledItems":"${'x'.repeat(MAX_MEMBER_BYTES)}"}`);
      const r = read(raw);
      assert.deepEqual(r.ok ? null : r.error, { id: 'invalid_envelope', field: 'ScheduledItems', message: 'expected an array' });
    });

    it(`refuses members other than ScheduledItems of more than MAX_MEMBER_BYTES together (${what})`, () => {
      const at = read(member(MAX_MEMBER_BYTES));
      assert.ok(at.ok, JSON.stringify(at.ok ? null : at.error));
      const over = read(member(MAX_MEMBER_BYTES + 1));
      assert.deepEqual(over.ok ? null : over.error, { id: 'member_too_large', field: 'Pad', message: `the members other than ScheduledItems take more than the ${MAX_MEMBER_BYTES} bytes they may take together` });
    });
  }
});

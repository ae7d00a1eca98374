import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_ITEM_BYTES, readBody, readBodyFrom } from '../../../src/domain/body';
import type { ByteSource } from '../../../src/domain/json-scan-stream';

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

function sourceOf(bytes: Buffer): ByteSource {
  return { length: bytes.length, read: (start, end) => bytes.subarray(start, end) };
}

describe('the size of one item', () => {
  for (const [what, read] of [
    ['in memory', (raw: Buffer) => readBody(raw, { checkItems: true })],
    ['from a file, piece by piece', (raw: Buffer) => readBodyFrom(sourceOf(raw), { checkItems: true })],
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

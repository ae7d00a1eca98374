import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { firstInvalidUtf8, firstInvalidUtf8From, readBody, readBodyFrom } from '../../../src/domain/body';
import { scanObjectFrom, type ByteSource } from '../../../src/domain/json-scan-stream';
import { decode, pieces as scanPieces, sourceOf, whole as scanWhole } from './scan-harness';

/**
 * A large body in a file of its own is checked piece by piece (scanObjectFrom, readBodyFrom), a body in
 * memory whole (scanObject, readBody). Whatever the size of the pieces, the two must give the same
 * answer: the same members and items where they are, or the same refusal in the same words at the same
 * byte.
 */

const member = 'ScheduledItems';

const whole = (bytes: Buffer): string => scanWhole(bytes, {});
const pieces = (bytes: Buffer, block: number): string => scanPieces(bytes, {}, block);

const INSERTS = ['', ',', ']', '}', '[', '{', '"', ':', 'tru', '1e', '-', ' ', '\\', '\u0001', 'null', '0x1', '\n\t '];

/** Objects with an items array (or not), spaced or not, with a BOM or not, edited at a random byte or not. */
const bodies = fc
  .tuple(
    fc.record(
      { ChangeSequence: fc.integer(), LocationID: fc.oneof(fc.integer(), fc.string()), [member]: fc.oneof(fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 8 }), fc.jsonValue()), extra: fc.jsonValue() },
      { requiredKeys: [] },
    ),
    fc.constantFrom(undefined, 1, '\t'),
    fc.boolean(),
    fc.option(fc.tuple(fc.nat(), fc.constantFrom(...INSERTS)), { nil: null }),
  )
  .map(([value, indent, bom, edit]) => {
    let text = JSON.stringify(value, null, indent);
    if (edit) {
      const i = edit[0] % (text.length + 1);
      text = text.slice(0, i) + edit[1] + text.slice(i + (edit[1] === '' ? 1 : 0));
    }
    return Buffer.concat([Buffer.from(bom ? [0xef, 0xbb, 0xbf] : []), Buffer.from(text)]);
  });

const blocks = fc.oneof(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 9, max: 200 }));

describe('scanning a body piece by piece', () => {
  it('finds the same members and items, or the same refusal at the same byte, as scanning it whole', () => {
    let refused = 0;
    let accepted = 0;
    let cut = 0;
    fc.assert(
      fc.property(fc.oneof({ weight: 4, arbitrary: bodies }, { weight: 1, arbitrary: fc.string().map((s) => Buffer.from(s)) }), blocks, (bytes, block) => {
        const want = whole(bytes);
        assert.equal(pieces(bytes, block), want, `${bytes.toString()} in pieces of ${block}`);
        if (want.startsWith('ok')) accepted++;
        else refused++;
        if (bytes.length > block) cut++;
      }),
      { numRuns: 5000 },
    );
    assert.ok(refused > 1000 && accepted > 1000 && cut > 2500, `drawn: ${refused} refused, ${accepted} accepted, ${cut} longer than a piece`);
  });

  it('reads each byte a few times at most, even for one value far larger than a piece', () => {
    const bytes = Buffer.from(JSON.stringify({ LocationID: 1, note: 'x'.repeat(100_000), [member]: Array.from({ length: 2000 }, (_, i) => ({ i })) }));
    let read = 0;
    const source: ByteSource = {
      length: bytes.length,
      read: (start, end) => {
        read += end - start;
        return Buffer.from(bytes.subarray(start, end));
      },
    };
    const scanned = scanObjectFrom(source, member, decode, 64);
    assert.equal(scanned.elements!.length, 2000);
    assert.equal(whole(bytes), pieces(bytes, 64));
    assert.ok(read <= 4 * bytes.length, `read ${read} bytes of ${bytes.length}`);
  });
});

/** Bytes that are not UTF-8, or cut sequences, at random places in a body. */
// Each edit is left out a third of the time (fast-check's default, a sixth, drew an untouched body
// about 300 times in 4,000 runs, at the very edge of the check below).
const BAD_UTF8 = [[0xc3], [0xe2, 0x82], [0xf0, 0x9f, 0x98], [0x80], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xff], [0xe2, 0x82, 0xac], [0xf0, 0x9f, 0x98, 0x80], [0xc3, 0xa9]];

const envelopes = fc
  .tuple(fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 6 }), fc.string({ unit: 'grapheme' }), fc.option(fc.tuple(fc.nat(), fc.constantFrom(...INSERTS)), { nil: null, freq: 2 }), fc.option(fc.tuple(fc.nat(), fc.constantFrom(...BAD_UTF8)), { nil: null, freq: 2 }))
  .map(([items, name, edit, bad]) => {
    let text = JSON.stringify({ ChangeSequence: 2, ParentChangeSequence: 1, LocationID: 7, LocationName: name, CurrencyIsoCode: 'GBP', ScheduledItems: items });
    if (edit) {
      const i = edit[0] % (text.length + 1);
      text = text.slice(0, i) + edit[1] + text.slice(i + (edit[1] === '' ? 1 : 0));
    }
    let bytes = Buffer.from(text);
    if (bad) {
      const i = bad[0] % (bytes.length + 1);
      bytes = Buffer.concat([bytes.subarray(0, i), Buffer.from(bad[1]), bytes.subarray(i)]);
    }
    return bytes;
  });

function summary(result: ReturnType<typeof readBody>): string {
  if (!result.ok) return `refused ${JSON.stringify(result.error)}`;
  return `ok ${JSON.stringify({ envelope: result.envelope, head: result.head, layout: result.layout, items: [...result.items()] })}`;
}

describe('reading a body piece by piece (a body file)', () => {
  it('gives readBody\'s answer on the whole body: the same envelope, layout and items, or the same refusal', () => {
    const seen = new Map<string, number>();
    fc.assert(
      fc.property(envelopes, blocks, (bytes, block) => {
        const want = summary(readBody(bytes, { checkItems: true }));
        assert.equal(summary(readBodyFrom(sourceOf(bytes), { checkItems: true, block })), want, `${bytes.toString('hex')} in pieces of ${block}`);
        const kind = want.startsWith('ok') ? 'ok' : (/"id":"(\w+)"/.exec(want)?.[1] ?? 'other');
        seen.set(kind, (seen.get(kind) ?? 0) + 1);
      }),
      { numRuns: 4000 },
    );
    for (const kind of ['ok', 'invalid_encoding', 'invalid_json']) assert.ok((seen.get(kind) ?? 0) > 300, `drawn: ${JSON.stringify([...seen])}`);
  });

  it('finds the first byte that is not UTF-8 wherever the pieces are cut', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.constantFrom(...BAD_UTF8), fc.string({ unit: 'grapheme', maxLength: 4 }).map((s) => [...Buffer.from(s)])), { maxLength: 20 }), blocks, (parts, block) => {
        const bytes = Buffer.from(parts.flat());
        assert.equal(firstInvalidUtf8From(sourceOf(bytes), block), firstInvalidUtf8(bytes), `${bytes.toString('hex')} in pieces of ${block}`);
      }),
      { numRuns: 3000 },
    );
  });
});

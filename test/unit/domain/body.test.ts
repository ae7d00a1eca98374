import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { readBody } from '../../../src/domain/body';
import { parseExact, parseLazily } from '../../../src/domain/json-scan';

/**
 * The receiver checks that every item of a body parses before it answers 200 (a body it accepted must
 * be appliable). It checks with the native JSON.parse, the applier parses with parseExact; this holds
 * the two to the same answer and the same error message as checking with parseExact itself.
 */
function checkedWithParseExact(raw: Buffer): { ok: true } | { ok: false; message: string } {
  try {
    const lazy = parseLazily(raw, 'ScheduledItems', parseExact);
    for (const span of lazy.elements ?? []) lazy.element(span);
    return { ok: true };
  } catch (err) {
    return { ok: false, message: `not valid JSON: ${(err as Error).message}` };
  }
}

const INSERTS = ['', ',', ']', '}', '[', '{', '"', ':', 'tru', '1e', '-', '01', '1.', ' ', '\\', '\u0001', 'null', '0x1', '\ud800'];

/** A body whose items are random JSON, one of them edited at a random place (or none). */
const bodies = fc
  .tuple(fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 6 }), fc.nat(), fc.nat(), fc.constantFrom(...INSERTS), fc.boolean())
  .map(([items, which, at, insert, edit]) => {
    const texts = items.map((v) => JSON.stringify(v));
    if (edit && texts.length > 0) {
      const i = which % texts.length;
      const text = texts[i]!;
      const p = at % (text.length + 1);
      texts[i] = text.slice(0, p) + insert + text.slice(p + (insert === '' ? 1 : 0));
    }
    return Buffer.from(`{"ChangeSequence":2,"ParentChangeSequence":1,"LocationID":7,"ScheduledItems":[${texts.join(',')}]}`);
  });

describe('the receiver\'s item check', () => {
  it('refuses exactly the bodies parseExact refuses, with the same message', () => {
    let refused = 0;
    let accepted = 0;
    fc.assert(
      fc.property(bodies, (raw) => {
        const want = checkedWithParseExact(raw);
        const got = readBody(raw, { checkItems: true });
        const gotInvalid = !got.ok && got.error.id === 'invalid_json';
        assert.equal(gotInvalid, !want.ok, raw.toString());
        if (!want.ok && !got.ok) assert.equal(got.error.message, want.message, raw.toString());
        if (want.ok) accepted++;
        else refused++;
      }),
      { numRuns: 4000 },
    );
    assert.ok(refused > 500 && accepted > 500, `both branches drawn often: ${refused} refused, ${accepted} accepted`);
  });

  it('names the position inside the failing item, as parseExact does', () => {
    const raw = Buffer.from('{"ChangeSequence":2,"ParentChangeSequence":1,"LocationID":7,"ScheduledItems":[{"a":1},{"b":tru}]}');
    const got = readBody(raw, { checkItems: true });
    const want = checkedWithParseExact(raw);
    assert.ok(!got.ok && !want.ok);
    assert.equal(got.error.message, want.message);
    assert.match(got.error.message, /at position 5/);
  });
});

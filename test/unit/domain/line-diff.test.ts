import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { bodyLines, diffHunks, diffLines } from '../../../src/domain/line-diff';

describe('line diff of two bodies', () => {
  it('rebuilds both sides from its output, and keeps every common line of the LCS', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('a', 'b', 'c', 'd'), { maxLength: 30 }), fc.array(fc.constantFrom('a', 'b', 'c', 'd'), { maxLength: 30 }), (a, b) => {
        const d = diffLines(a, b);
        assert.deepEqual(d.filter((l) => l.kind !== 'added').map((l) => l.text), a);
        assert.deepEqual(d.filter((l) => l.kind !== 'removed').map((l) => l.text), b);
      }),
    );
    // Minimal: one changed line in the middle is one removed and one added line.
    const d = diffLines(['{', '"x": 1,', '"y": 2', '}'], ['{', '"x": 1,', '"y": 3', '}']);
    assert.deepEqual(d.filter((l) => l.kind !== 'same'), [{ kind: 'removed', text: '"y": 2' }, { kind: 'added', text: '"y": 3' }]);
  });

  it('compares JSON by content, not by its line breaks', () => {
    assert.deepEqual(bodyLines('{"a":1,"b":[2]}'), bodyLines('{\n  "a": 1,\n  "b": [ 2 ]\n}'));
    assert.deepEqual(bodyLines('not json\nat all'), ['not json', 'at all']);
  });

  it('keeps a few lines around each change and counts the rest', () => {
    const a = Array.from({ length: 100 }, (_, i) => `line ${i}`);
    const b = a.map((l, i) => (i === 50 ? 'changed' : l));
    const hunks = diffHunks(diffLines(a, b), 2);
    assert.deepEqual(hunks, [
      { kind: 'skipped', count: 48 },
      { kind: 'same', text: 'line 48' },
      { kind: 'same', text: 'line 49' },
      { kind: 'removed', text: 'line 50' },
      { kind: 'added', text: 'changed' },
      { kind: 'same', text: 'line 51' },
      { kind: 'same', text: 'line 52' },
      { kind: 'skipped', count: 47 },
    ]);
  });
});

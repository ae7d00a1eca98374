import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { classifyReceipt, decideApply, sameJson } from '../../../src/domain/sequence';

describe('change-sequence decisions', () => {
  it('applies only when the parent is the last applied change', () => {
    assert.deepEqual(decideApply({ lastApplied: 1041 }, { changeSequence: 1042, parentChangeSequence: 1041 }, 'auto'), { kind: 'apply', baseline: false });
    assert.deepEqual(decideApply({ lastApplied: 1041 }, { changeSequence: 1043, parentChangeSequence: 1042 }, 'auto'), { kind: 'wait', waitingFor: 1042 });
    assert.deepEqual(decideApply({ lastApplied: 1043 }, { changeSequence: 1042, parentChangeSequence: 1041 }, 'auto'), { kind: 'stale' });
    assert.deepEqual(decideApply({ lastApplied: 1043 }, { changeSequence: 1043, parentChangeSequence: 1042 }, 'auto'), { kind: 'stale' });
    assert.deepEqual(decideApply({ lastApplied: 1043 }, { changeSequence: 1050, parentChangeSequence: 1042 }, 'auto'), { kind: 'fork' });
  });

  it('adopts the first update as the baseline, or waits for an operator', () => {
    assert.deepEqual(decideApply({ lastApplied: null }, { changeSequence: 5, parentChangeSequence: 4 }, 'auto'), { kind: 'apply', baseline: true });
    assert.deepEqual(decideApply({ lastApplied: null }, { changeSequence: 5, parentChangeSequence: 4 }, 'operator'), { kind: 'needs-adoption' });
  });

  it('never applies anything but the direct child of the last applied change (property, every branch drawn often)', () => {
    // Uniform numbers almost never make the parent equal the last applied change (the "apply" branch
    // was drawn about 10 times in 2,000), so the parent is drawn mostly within 2 of it, and the child a
    // few numbers past its parent; some draws stay arbitrary.
    const chain = fc.nat(1e6).chain((last) =>
      fc.record({
        last: fc.constant(last),
        parent: fc.oneof({ arbitrary: fc.integer({ min: Math.max(0, last - 2), max: last + 2 }), weight: 5 }, { arbitrary: fc.nat(1e6), weight: 1 }),
        delta: fc.oneof({ arbitrary: fc.nat(2), weight: 3 }, { arbitrary: fc.nat(1e6), weight: 1 }),
      }),
    );
    const drawn = new Map<string, number>();
    const runs = 2000;
    fc.assert(
      fc.property(chain, ({ last, parent, delta }) => {
        const change = parent + 1 + delta;
        const d = decideApply({ lastApplied: last }, { changeSequence: change, parentChangeSequence: parent }, 'auto');
        drawn.set(d.kind, (drawn.get(d.kind) ?? 0) + 1);
        if (d.kind === 'apply') assert.equal(parent, last);
        if (parent === last) assert.equal(d.kind, 'apply');
        if (change <= last) assert.equal(d.kind, 'stale');
        if (d.kind === 'wait') assert.ok(parent > last && d.waitingFor === parent);
        if (d.kind === 'fork') assert.ok(parent < last && change > last);
        assert.notEqual(d.kind, 'needs-adoption');
      }),
      { numRuns: runs },
    );
    for (const kind of ['apply', 'wait', 'stale', 'fork']) {
      const n = drawn.get(kind) ?? 0;
      assert.ok(n >= runs * 0.1, `the ${kind} branch was drawn ${n} times in ${runs}: ${JSON.stringify([...drawn])}`);
    }
  });

  it('tells duplicates from conflicts, by bytes first and then by JSON content', () => {
    const stored = [{ id: 7, bodySha256: 'aaa' }];
    assert.deepEqual(classifyReceipt([], 'x', () => false), { kind: 'new' });
    assert.deepEqual(classifyReceipt(stored, 'aaa', () => assert.fail('bytes matched; no need to compare content')), { kind: 'duplicate', of: 7 });
    assert.deepEqual(classifyReceipt(stored, 'bbb', () => true), { kind: 'duplicate', of: 7 });
    assert.deepEqual(classifyReceipt(stored, 'bbb', () => false), { kind: 'conflict', with: 7 });
  });

  it('compares JSON structurally, ignoring key order', () => {
    assert.ok(sameJson({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 }));
    assert.ok(!sameJson({ a: 1 }, { a: 1, b: undefined }));
    assert.ok(!sameJson([1, 2], [2, 1]));
    assert.ok(!sameJson({ a: '1' }, { a: 1 }));
    assert.ok(!sameJson(null, {}));
    assert.ok(!sameJson([], {}));
  });
});

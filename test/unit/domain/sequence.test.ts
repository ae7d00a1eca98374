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

  it('never applies anything but the direct child of the last applied change (property)', () => {
    fc.assert(
      fc.property(fc.nat(1e6), fc.nat(1e6), fc.nat(1e6), (last, parent, delta) => {
        const change = parent + 1 + delta;
        const d = decideApply({ lastApplied: last }, { changeSequence: change, parentChangeSequence: parent }, 'auto');
        if (d.kind === 'apply') assert.equal(parent, last);
        if (parent === last) assert.equal(d.kind, 'apply');
        if (change <= last) assert.equal(d.kind, 'stale');
      }),
    );
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

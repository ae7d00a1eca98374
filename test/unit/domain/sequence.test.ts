import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { classifyReceipt, decideApply, sameJson, classifyPending, siteRoleOf } from '../../../src/domain/sequence';

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

describe('classifyPending: why a stored update is not applied yet', () => {
  const link = (changeSequence: number, parentChangeSequence: number) => ({ changeSequence, parentChangeSequence });

  it('calls a chain that leads back to what is applied queued, not a gap (an apply in progress or a stop mid-apply)', () => {
    const v = classifyPending(31879, [link(31880, 31879), link(31881, 31880), link(31883, 31881)], 'auto');
    assert.deepEqual(v.map((x) => x.reason), ['queued', 'queued', 'queued']);
    assert.deepEqual(v.map((x) => x.missing), [null, null, null]);
  });

  it('names the first missing link of a broken chain for every update behind it', () => {
    const v = classifyPending(10, [link(12, 11), link(13, 12), link(20, 19)], 'auto');
    assert.deepEqual(v.map((x) => [x.reason, x.missing]), [['waiting', 11], ['waiting', 11], ['waiting', 19]]);
  });

  it('with nothing applied (auto, settle over): the lowest becomes the baseline and the rest follow it', () => {
    const v = classifyPending(null, [link(31883, 31882), link(31880, 31879), link(31881, 31880)], 'auto');
    assert.deepEqual(v.map((x) => x.reason), ['waiting', 'queued', 'queued']);
    assert.equal(v[0]!.missing, 31882);
    assert.deepEqual(classifyPending(null, [link(5, 4)], 'operator').map((x) => x.reason), ['needs-adoption']);
    assert.deepEqual(classifyPending(null, [link(5, 4)], 'auto', { settling: true }).map((x) => x.reason), ['settling']);
  });

  it('marks forks, and every update of a location that is not this site', () => {
    assert.deepEqual(classifyPending(10, [link(12, 8)], 'auto').map((x) => x.reason), ['fork']);
    assert.deepEqual(classifyPending(10, [link(11, 10)], 'auto', { notForSite: true }).map((x) => x.reason), ['not-for-site']);
  });

  it('agrees with the applier: an update is queued exactly when draining would reach it (property)', () => {
    fc.assert(
      fc.property(fc.option(fc.integer({ min: 0, max: 30 }), { nil: null }), fc.uniqueArray(fc.integer({ min: 1, max: 40 }), { maxLength: 12 }), fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 12, maxLength: 12 }), (last, sequences, steps) => {
        const pending = sequences.map((s, i) => link(s, Math.max(0, s - 1 - steps[i]!)));
        const verdicts = classifyPending(last, pending, 'auto');
        // Drain as the applier does: from the applied sequence (or the lowest as baseline), child by child.
        let applied = last ?? (pending.length > 0 ? Math.min(...pending.map((p) => p.changeSequence)) : null);
        const reached = new Set<number>(last === null && applied !== null ? [applied] : []);
        for (let moved = true; moved && applied !== null; ) {
          moved = false;
          const next = pending.filter((p) => p.parentChangeSequence === applied && p.changeSequence > applied!).sort((a, b) => a.changeSequence - b.changeSequence)[0];
          if (next) {
            reached.add(next.changeSequence);
            applied = next.changeSequence;
            moved = true;
          }
        }
        pending.forEach((p, i) => {
          const stale = last !== null && p.changeSequence <= last;
          if (stale) return;
          assert.equal(verdicts[i]!.reason === 'queued', reached.has(p.changeSequence), `${JSON.stringify({ last, pending })} #${i}`);
        });
      }),
    );
  });

  it('tells which locations are this site', () => {
    const site = { configured: [3021], acceptOthers: false };
    assert.equal(siteRoleOf(3021, null, site), 'configured');
    assert.equal(siteRoleOf(3000, null, site), 'other');
    // Already on the till (a 0.2 site whose list was written later): kept, not frozen.
    assert.equal(siteRoleOf(3000, 17, site), 'open');
    assert.equal(siteRoleOf(3000, null, { configured: [], acceptOthers: false }), 'open');
    assert.equal(siteRoleOf(3000, null, { configured: [3021], acceptOthers: true }), 'open');
  });
});

import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { AgentCore } from '../../src/core';
import { parseUpdateName } from '../../src/domain/update-name';
import { silentLogger } from '../../src/log';
import { resolveUpdateName } from '../../src/store/update-names';
import { item, price, testConfig, update } from '../helpers/fixtures';

/** Real agent.db: names resolve to the inbox rows the receiver stored. */
describe('resolving an update name against the inbox', () => {
  const core = new AgentCore(testConfig(), silentLogger);
  after(() => core.close());
  const body = (location: number, sequence: number, parent: number, sell = 1.5): Buffer =>
    Buffer.from(JSON.stringify(update(location, sequence, parent, [item(1001, 1, [price('2026-01-01', '2026-12-31', 'Eat In', sell)])])));
  const store = (location: number, sequence: number, parent: number, sell?: number): number => {
    const { outcome } = core.importPayload(body(location, sequence, parent, sell), 'tester');
    assert.equal(outcome.kind, 'stored');
    return (outcome as { inboxId: number }).inboxId;
  };
  // Inbox numbers and ChangeSequences chosen to overlap, as they can on a real site.
  const ids = {
    l5s1: store(5, 1, 0), // #1, applied (baseline)
    l7s3: store(7, 3, 2), // #2, applied (baseline)
    l7s5: store(7, 5, 4), // #3, waiting for 4
    l9s100: store(9, 100, 99), // #4, applied (baseline)
    l9s102: store(9, 102, 101), // #5, waiting for 101
  };
  const conflict = store(7, 5, 4, 9.99); // #6, a different body under 7:5
  const resolve = (text: string) => resolveUpdateName(core.agentDb, parseUpdateName(text)!);

  it('LOCATION:SEQUENCE names the waiting row, even with a conflicting redelivery beside it', () => {
    assert.deepEqual(Object.values(ids), [1, 2, 3, 4, 5]);
    assert.equal(conflict, 6);
    assert.deepEqual(resolve('7:5'), { inboxId: 3, locationId: 7, changeSequence: 5, state: 'pending' });
    assert.deepEqual(resolve('7:3'), { inboxId: 2, locationId: 7, changeSequence: 3, state: 'applied' });
  });

  it('#N is the inbox number', () => {
    assert.equal(resolve('#5').inboxId, 5);
    assert.equal(resolve('#6').state, 'conflict');
  });

  it('a bare number works only when it names one update', () => {
    assert.equal(resolve('100').inboxId, 4); // ChangeSequence 100 only (no inbox #100)
    assert.equal(resolve('4').inboxId, 4); // inbox #4 only (no ChangeSequence 4 stored)
    assert.throws(() => resolve('3'), (err: { id?: string; message?: string }) => {
      // #3 is 7:5 and ChangeSequence 3 is 7:3: both are offered, never a guess.
      assert.equal(err.id, 'update_name_ambiguous');
      assert.match(err.message!, /3 could mean #3 \(7:5\) or 7:3/);
      return true;
    });
    // #1 is 5:1 and ChangeSequence 1 is 5:1 too: the same update, so not ambiguous.
    assert.equal(resolve('1').inboxId, 1);
    assert.throws(() => resolve('5'), { id: 'update_name_ambiguous' });
  });

  it('says how to name an update when nothing matches', () => {
    assert.throws(() => resolve('8:1'), (err: { id?: string; message?: string }) => {
      assert.equal(err.id, 'update_not_found');
      assert.match(err.message!, /no stored update 8:1: name an update as LOCATION:SEQUENCE/);
      return true;
    });
    assert.throws(() => resolve('#99'), { id: 'update_not_found' });
    assert.throws(() => resolve('999'), { id: 'update_not_found' });
  });
});

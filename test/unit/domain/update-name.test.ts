import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { describeUpdateName, formatUpdateName, parseUpdateName } from '../../../src/domain/update-name';

describe('update names', () => {
  it('reads LOCATION:SEQUENCE, #N and a bare number', () => {
    assert.deepEqual(parseUpdateName('118:1047'), { kind: 'sequence', locationId: 118, changeSequence: 1047 });
    assert.deepEqual(parseUpdateName(' 118 : 1047 '), { kind: 'sequence', locationId: 118, changeSequence: 1047 });
    assert.deepEqual(parseUpdateName('#12'), { kind: 'inbox', inboxId: 12 });
    assert.deepEqual(parseUpdateName('1047'), { kind: 'number', value: 1047 });
  });

  it('refuses anything else', () => {
    for (const text of ['', ':', '118:', ':1047', '118:1047:1', '0:5', '5:0', '#0', '#', '#x', '-3', '1.5', '118-1047', 'abc', '1e3', '1234567890123456']) {
      assert.equal(parseUpdateName(text), null, text);
    }
  });

  it('formats what it parses, and reads back what it formats', () => {
    assert.equal(formatUpdateName(118, 1047), '118:1047');
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.integer({ min: 1, max: 2 ** 31 - 1 }), (location, sequence) => {
        const name = parseUpdateName(formatUpdateName(location, sequence));
        assert.deepEqual(name, { kind: 'sequence', locationId: location, changeSequence: sequence });
        assert.equal(describeUpdateName(name!), `${location}:${sequence}`);
      }),
    );
    assert.equal(describeUpdateName({ kind: 'inbox', inboxId: 3 }), '#3');
    assert.equal(describeUpdateName({ kind: 'number', value: 3 }), '3');
  });
});

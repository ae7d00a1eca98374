import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readBody } from '../../../src/domain/body';
import { envelopeIdsOf, envelopeIdsSteps } from '../../../src/domain/envelope-ids';
import { runSteps } from '../../../src/domain/steps';

/** envelopeIdsOf read three bytes at a time (pieces cutting keys, values and escapes). */
function inPieces(raw: Buffer): unknown {
  return runSteps(envelopeIdsSteps({ length: raw.length, read: (start, end) => raw.subarray(start, end) }, 3));
}

describe('the update a refused body names (envelope-ids.ts)', () => {
  it('reads LocationID and ChangeSequence as an accepted body does, whatever else is refused, in one piece or many', () => {
    const deep = '['.repeat(200_000) + ']'.repeat(200_000);
    const cases: [string, { locationId: number; changeSequence: number } | null][] = [
      ['{"LocationID":5003,"ChangeSequence":11,"ParentChangeSequence":10,"ScheduledItems":[]}', { locationId: 5003, changeSequence: 11 }],
      ['\uFEFF { "LocationID" : "5003" , "ChangeSequence" : " 11 " }', { locationId: 5003, changeSequence: 11 }],
      [`{"ScheduledItems":[${deep}],"LocationID":5003,"ChangeSequence":11}`, { locationId: 5003, changeSequence: 11 }],
      ['{"Loc\\u0061tionID":5003,"ChangeSequence":11}', { locationId: 5003, changeSequence: 11 }],
      ['{"X":{"LocationID":1,"ChangeSequence":2},"Y":"\\",\\\\","LocationID":5003,"ChangeSequence":11', { locationId: 5003, changeSequence: 11 }],
      // Sent twice: the same value is one identifier; two values, which one was meant is not known.
      ['{"LocationID":5003,"ChangeSequence":11,"ChangeSequence":"11"}', { locationId: 5003, changeSequence: 11 }],
      ['{"LocationID":5003,"ChangeSequence":11,"ChangeSequence":12}', null],
      ['{"LocationID":5003,"ChangeSequence":11.5}', null],
      ['{"LocationID":5003,"ChangeSequence":[11]}', null],
      ['{"LocationID":5003,"ChangeSequence":"eleven"}', null],
      ['{"LocationID":5003}', null],
      ['[{"LocationID":5003,"ChangeSequence":11}]', null],
    ];
    for (const [text, expected] of cases) {
      const raw = Buffer.from(text);
      assert.deepEqual(envelopeIdsOf(raw), expected, text.slice(0, 80));
      assert.deepEqual(inPieces(raw), expected, text.slice(0, 80));
    }
  });

  it('agrees with the accepted path for the bodies it accepts', () => {
    for (const [l, c] of [['5003', '11'], ['"5003"', '"11"'], ['" 5003"', '11'], ['5003.0', '1.1e1']]) {
      const raw = Buffer.from(`{"LocationID":${l},"ChangeSequence":${c},"ParentChangeSequence":1,"ScheduledItems":[]}`);
      const accepted = readBody(raw, { checkItems: true });
      assert.ok(accepted.ok, `${l} ${c}`);
      assert.deepEqual(envelopeIdsOf(raw), { locationId: accepted.envelope.LocationID, changeSequence: accepted.envelope.ChangeSequence });
    }
  });

  it('reads past an item that is not UTF-8', () => {
    const raw = Buffer.concat([Buffer.from('{"LocationID":5003,"ScheduledItems":[{"ItemName":"'), Buffer.from([0xff, 0xc3]), Buffer.from('"}],"ChangeSequence":11}')]);
    assert.deepEqual(envelopeIdsOf(raw), { locationId: 5003, changeSequence: 11 });
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { scrubPersonalData } from '../../../src/ops/diagnostics';

/**
 * The support bundle's log excerpts keep no National Insurance number in any of the forms people and
 * systems write one: together, spaced in pairs, with hyphens or dots, in either case, with or
 * without the space before the suffix letter.
 */
describe('scrubPersonalData: National Insurance numbers', () => {
  const forms = [
    'QQ123456C',
    'QQ 12 34 56 C',
    'qq 12 34 56 c',
    'QQ-12-34-56-C',
    'QQ.12.34.56.C',
    'QQ 123456 C',
    'QQ123456 C',
    'QQ-123456-C',
  ];
  for (const ni of forms) {
    it(`scrubs ${ni}`, () => {
      const out = scrubPersonalData(`staff lookup for ${ni} failed`);
      assert.equal(out, 'staff lookup for <NI number> failed');
    });
  }

  it('leaves change sequences, PLUs and dates alone', () => {
    const line = 'applied 3000:1200345 (PLU 123456, 2026-02-29) in 12 ms';
    assert.equal(scrubPersonalData(line), line);
  });
});

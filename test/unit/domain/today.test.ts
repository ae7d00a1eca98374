import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { TODAY_STATEMENT } from '../../../src/domain/today';
import { clockAlerts } from '../../../src/ops/panels';

const ROOT = path.resolve(__dirname, '..', '..', '..');

describe('"today" explained once', () => {
  it('is the same sentence in the README, the docs and the clock banner', () => {
    for (const file of ['README.md', 'docs/pos-database.md', 'docs/operations.md', 'docs/status-window.md']) {
      const text = fs.readFileSync(path.join(ROOT, file), 'utf8').replace(/\s*\n\s*/g, ' ');
      assert.ok(text.includes(TODAY_STATEMENT), `${file} says what "today" is in the one sentence`);
    }
    const skew = { source: 'x', skewMs: 600_000, uncertaintyMs: 0, at: '2027-01-04T10:00:00Z' };
    assert.ok(clockAlerts({ machineTimezone: 'UTC', timezoneMismatches: [], observations: [skew], wrongClock: [skew], warnings: [] })[0]!.text.startsWith(TODAY_STATEMENT));
  });

  it('no doc says the views follow the PC\'s local date, except as the fallback for a location without day rows', () => {
    for (const file of ['README.md', 'docs/operations.md', 'docs/status-window.md', 'docs/staff.md']) {
      assert.doesNotMatch(fs.readFileSync(path.join(ROOT, file), 'utf8'), /date\('now', 'localtime'\)/, file);
    }
  });
});

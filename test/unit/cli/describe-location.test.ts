import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeLocation } from '../../../src/cli/commands/sync';
import type { LocationStatus } from '../../../src/store/read-models';

describe('status text of a location', () => {
  const base: LocationStatus = {
    locationId: 118,
    locationName: null,
    currency: null,
    lastChangeSequence: null,
    lastAppliedAt: null,
    firstSeenAt: '2026-11-22T22:00:00Z',
    waiting: [{ inboxId: 4, changeSequence: 1047, parentChangeSequence: 1046, receivedAt: '2026-11-22T22:00:00Z', reason: 'settling', waitingFor: null, note: null }],
    conflicts: 0,
    warnings: 0,
    recentWarnings: [],
  };

  it('names the update LOCATION:SEQUENCE and says a new location waits for its first publication (points 10, 13)', () => {
    const lines = describeLocation(base, 90);
    assert.equal(lines[1], '  nothing applied yet');
    assert.match(lines[2]!, /^ {2}new location: update 118:1047 received .*; nothing is on the till yet: waiting up to 90 s for head office's first publication/);
  });

  it('points to the commands that resolve a conflict (point 14)', () => {
    const lines = describeLocation({ ...base, waiting: [], conflicts: 1 });
    assert.ok(lines.includes('  1 update was received again with different content (not applied): compare with `pos-sync-agent conflicts`, keep one with `resolve-conflict`'), lines.join('\n'));
  });
});

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
    waiting: [{ inboxId: 4, changeSequence: 1047, parentChangeSequence: 1046, receivedAt: '2026-11-22T22:00:00Z', reason: 'settling', waitingFor: null, missing: null, note: null }],
    conflicts: 0,
    warnings: 0,
    recentWarnings: [],
    notApplied: [],
    notAppliedCount: 0,
    siteRole: 'open',
  };

  it('names the update LOCATION:SEQUENCE and says a new location waits for its first publication (points 10, 13)', () => {
    const lines = describeLocation(base);
    assert.equal(lines[1], '  nothing applied yet');
    assert.match(lines[2]!, /^ {2}new location: update 118:1047 received .*; the lowest update received becomes the baseline when the settle window ends/);
  });

  it('points to the commands that resolve a conflict (point 14)', () => {
    const lines = describeLocation({ ...base, waiting: [], conflicts: 1 });
    assert.ok(lines.includes('  1 update was received again with different content (not applied): compare with `pos-sync-agent conflicts`, keep one with `resolve-conflict`'), lines.join('\n'));
  });
});

describe('status text of waiting updates', () => {
  const base: LocationStatus = {
    locationId: 3021, locationName: null, currency: null, lastChangeSequence: 31879, lastAppliedAt: '2026-11-22T22:00:00Z', firstSeenAt: '2026-11-22T22:00:00Z',
    waiting: [], conflicts: 0, warnings: 0, recentWarnings: [], notApplied: [], notAppliedCount: 0, siteRole: 'open',
  };
  const w = (changeSequence: number, reason: LocationStatus['waiting'][number]['reason'], missing: number | null = null) => ({ inboxId: changeSequence, changeSequence, parentChangeSequence: changeSequence - 1, receivedAt: '2026-11-22T22:00:00Z', reason, waitingFor: changeSequence - 1, missing, note: null });

  it('does not list queued updates (a resumable apply after Ctrl-C) as waiting for anything', () => {
    const lines = describeLocation({ ...base, waiting: [w(31880, 'queued'), w(31881, 'queued')] });
    assert.ok(!lines.some((l) => /waiting|needs|gap/.test(l)), lines.join('\n'));
  });

  it('names the missing update of a gap', () => {
    const lines = describeLocation({ ...base, waiting: [w(31882, 'waiting', 31880)] });
    assert.ok(lines.some((l) => /gap: update 3021:31882 .* needs update 31880, which has not arrived/.test(l)), lines.join('\n'));
  });
});

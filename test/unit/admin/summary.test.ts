import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { summarise, type StatusLocation } from '../../../src/admin/summary';

const now = new Date('2027-01-04T10:00:00Z');
const options = { now, paused: false, gapAlertMinutes: 30, formatTime: (iso: string) => iso.slice(11, 16) };

function location(extra: Partial<StatusLocation> = {}): StatusLocation {
  return {
    locationId: 3021,
    locationName: 'Riverside Kitchen',
    currency: 'GBP',
    lastChangeSequence: 1041,
    lastAppliedAt: '2027-01-04T09:00:00Z',
    firstSeenAt: '2027-01-01T09:00:00Z',
    waiting: [],
    conflicts: 0,
    warnings: 0,
    recentWarnings: [],
    ...extra,
  };
}

const waiting = (receivedAt: string, reason: 'waiting' | 'fork' | 'needs-adoption' | 'settling' = 'waiting') => ({
  inboxId: 7,
  changeSequence: 1043,
  parentChangeSequence: 1042,
  receivedAt,
  reason,
  waitingFor: reason === 'waiting' ? 1042 : null,
  note: null,
});

describe('summarise', () => {
  it('is green when every location is current', () => {
    const s = summarise([location()], options);
    assert.equal(s.light, 'green');
    assert.equal(s.headline, 'The till is up to date.');
    assert.deepEqual(s.locations[0]!.lines, ['Up to date: update 1041 applied 09:00.']);
  });
  it('says a gap in plain words: amber while recent, red when old', () => {
    const recent = summarise([location({ waiting: [waiting('2027-01-04T09:50:00Z')] })], options);
    assert.equal(recent.light, 'amber');
    assert.equal(recent.locations[0]!.lines[0], 'Update 1043 is waiting for update 1042 from head office since 09:50 — if it does not arrive, contact support.');
    const old = summarise([location({ waiting: [waiting('2027-01-04T09:14:00Z')] })], options);
    assert.equal(old.light, 'red');
    assert.equal(old.headline, '1 location needs attention.');
    assert.match(old.locations[0]!.lines[0]!, /waiting for update 1042 from head office since 09:14/);
  });
  it('is red for forks, first updates awaiting adoption and conflicts', () => {
    assert.equal(summarise([location({ waiting: [waiting('2027-01-04T09:59:00Z', 'fork')] })], options).light, 'red');
    assert.equal(summarise([location({ lastChangeSequence: null, waiting: [waiting('2027-01-04T09:59:00Z', 'needs-adoption')] })], options).light, 'red');
    assert.equal(summarise([location({ conflicts: 1 })], options).light, 'red');
  });
  it('is amber for warnings, nothing applied, no locations and paused', () => {
    assert.equal(summarise([location({ warnings: 2 })], options).light, 'amber');
    assert.equal(summarise([location({ lastChangeSequence: null, lastAppliedAt: null })], options).light, 'amber');
    const none = summarise([], options);
    assert.equal(none.light, 'amber');
    assert.match(none.headline, /No updates received yet/);
    const paused = summarise([location()], { ...options, paused: true });
    assert.equal(paused.light, 'amber');
    assert.match(paused.headline, /paused/);
    const named = summarise([location()], { ...options, paused: true, pausedBy: 'maria@backoffice (command line)', pausedAt: '2027-01-04T09:41:00Z' });
    assert.match(named.headline, /^Applying updates is paused by maria@backoffice \(command line\) since 09:41 \(deliveries are still received\)\./);
  });
  it('takes the worst light across locations', () => {
    const s = summarise([location(), location({ locationId: 2, conflicts: 1 }), location({ locationId: 3, warnings: 1 })], options);
    assert.equal(s.light, 'red');
    assert.deepEqual(s.locations.map((l) => l.light), ['green', 'red', 'amber']);
    assert.equal(s.headline, '2 locations need attention.');
  });
  it('puts operations problems that stop updates into the light and the headline, worst first', () => {
    const tunnel = { id: 'tunnel', light: 'red' as const, title: 'Head office cannot reach this PC.', text: 't' };
    const disk = { id: 'disk', light: 'amber' as const, title: 'Disk space is low.', text: 'd' };
    const clock = { id: 'clock', light: null, title: 'Clock looks wrong.', text: 'c' };
    const s = summarise([location()], { ...options, alerts: [clock, disk, tunnel] });
    assert.equal(s.light, 'red');
    assert.deepEqual(s.alerts.map((a) => a.id), ['tunnel', 'disk', 'clock']);
    // "Up to date" would overstate it while updates may not be arriving.
    assert.equal(s.headline, 'Head office cannot reach this PC. Disk space is low. Everything received so far is applied.');
    assert.deepEqual(s.locations[0]!.lines, ['Up to date: update 1041 applied 09:00.'], 'the location card still says what was applied');
    const amber = summarise([location()], { ...options, alerts: [disk] });
    assert.equal(amber.light, 'amber');
  });
  it('shows alerts without a light but does not change the light for them', () => {
    const s = summarise([location()], { ...options, alerts: [{ id: 'clock', light: null, title: 'Clock looks wrong.', text: 'c' }] });
    assert.equal(s.light, 'green');
    assert.equal(s.headline, 'The till is up to date.');
    assert.equal(s.alerts.length, 1);
  });
  it('keeps the location wording and pause after an alert', () => {
    const tunnel = { id: 'tunnel', light: 'amber' as const, title: 'The tunnel is restarting.', text: 't' };
    const s = summarise([location({ conflicts: 1 })], { ...options, paused: true, alerts: [tunnel] });
    assert.equal(s.light, 'red');
    assert.equal(s.headline, 'Applying updates is paused (deliveries are still received). The tunnel is restarting. 1 location needs attention.');
    assert.equal(summarise([], { ...options, alerts: [tunnel] }).headline, 'The tunnel is restarting. No updates received yet from head office.');
  });
  it('is amber, in plain words, while a new location settles its baseline (issue 12, point 13)', () => {
    // Nothing is on the till yet: never green, never "up to date".
    const settling = location({ lastChangeSequence: null, lastAppliedAt: null, waiting: [waiting('2027-01-04T09:59:30Z', 'settling')] });
    const s = summarise([settling], { ...options, baselineSettleSeconds: 60 });
    assert.equal(s.light, 'amber');
    assert.equal(s.headline, "New location: waiting up to 60 s for head office's first publication.");
    assert.deepEqual(s.locations[0]!.lines, ["Waiting up to 60 s for head office's first publication: update 1043 arrived at 09:59; the till is updated once any earlier update has had time to arrive."]);
    const two = summarise([settling, location({ locationId: 2 })], { ...options, baselineSettleSeconds: 90 });
    assert.equal(two.light, 'amber');
    assert.equal(two.headline, "One new location: waiting up to 90 s for head office's first publication.");
    // Settling beside a real problem: the problem leads the headline.
    assert.equal(summarise([settling, location({ locationId: 2, conflicts: 1 })], options).headline, '2 locations need attention.');
  });
  it('offers a way out of a conflict instead of "contact support" (point 14), and counts in good English (point 15)', () => {
    const one = summarise([location({ conflicts: 1, warnings: 1 })], options);
    assert.equal(one.locations[0]!.lines[0], 'An update arrived again with different content under the same number — compare the two copies and keep one.');
    assert.equal(one.locations[0]!.lines[1], 'One warning from applied updates (some items were skipped).');
    assert.doesNotMatch(one.locations[0]!.lines.join(' '), /contact support/);
  });
});

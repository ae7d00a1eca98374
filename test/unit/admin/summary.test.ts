import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { neverReceivedOf, severityOf, staffSeverityOf, type StatusReply } from '../../../src/admin/summary';

const reply: StatusReply = { generatedAt: '2027-01-04T10:00:00Z', paused: false, gapAlertMinutes: 30, baselineSettleSeconds: 60, locations: [], alerts: [] };

describe('status reply to severity', () => {
  it('counts an expired right to work (and one ending today) apart from those ending soon', () => {
    const warnings = [-5, 0, 1, 30].map((d) => ({ residency: { daysToExpiry: d } }));
    assert.deepEqual(staffSeverityOf(warnings, 60), { expired: 2, expiringSoon: 2, windowDays: 60 });
    const s = severityOf({ ...reply, staff: staffSeverityOf(warnings, 60), locations: [] }, new Date('2027-01-04T10:00:00Z'), (iso) => iso);
    assert.equal(s.light, 'red');
  });

  it('lists configured locations that never received anything', () => {
    assert.deepEqual(neverReceivedOf({ '3021': { name: 'Riverside' }, '3000': {} }, [{ locationId: 3000 }]), [{ locationId: 3021, name: 'Riverside' }]);
    const s = severityOf({ ...reply, neverReceived: [{ locationId: 3021, name: 'Riverside' }] }, new Date(), (iso) => iso);
    assert.equal(s.light, 'amber');
    assert.match(s.headline, /Riverside \(3021\) is configured but has never received an update/);
  });

  it('is red while the agent cannot be reached', () => {
    const s = severityOf(reply, new Date(), (iso) => iso.slice(11, 16), { reachable: false, since: '2027-01-04T09:58:00Z' });
    assert.equal(s.light, 'red');
    assert.equal(s.actionsEnabled, false);
  });
});

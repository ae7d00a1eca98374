import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { notYetOnTillNote, notYetOnTillNotes, plainServiceProblem, plural, staffRetryText, staffSyncText, tillDayNotes, type NotYetOnTill } from '../../../src/domain/wording';

describe('window wording (issue 12, point 15)', () => {
  it('counts with the right noun', () => {
    assert.equal(plural(1, 'delivery', 'deliveries'), '1 delivery');
    assert.equal(plural(0, 'delivery', 'deliveries'), '0 deliveries');
    assert.equal(plural(2, 'delivery', 'deliveries'), '2 deliveries');
  });

  it('says what went wrong with the employee service without a URL or a system error code', () => {
    const cases: [string, RegExp][] = [
      ['the employee service could not be reached for GET http://127.0.0.1:9/organisations/42/Employees: ECONNREFUSED (after 3 attempts)', /^Nothing answered at the employee service’s address/],
      ['the employee service could not be reached for GET https://hr.example.com/x: ENOTFOUND hr.example.com', /address could not be found: this PC may be offline/],
      ['the employee service did not answer GET https://hr.example.com/x in time', /did not answer in time/],
      ['the employee service refused our credentials for GET https://hr.example.com/x (HTTP 401); check employees.auth', /refused the agent’s credentials/],
      ['the employee service answered GET https://hr.example.com/x with HTTP 503', /fault on its side/],
      ['something nobody foresaw at https://hr.example.com/x', /^The last attempt to reach the employee service failed\.$/],
    ];
    for (const [technical, plain] of cases) {
      const text = plainServiceProblem(technical);
      assert.match(text, plain, technical);
      assert.doesNotMatch(text, /https?:|ECONN|ENOTFOUND|could not be reached:/, text);
    }
  });

  it('does not report a delta sync as "0 employees"', () => {
    const delta = staffSyncText('delta', { employees: 0, employments: 0, divisions: 4, sources: 1, locations: 2 }, 30);
    assert.equal(delta, 'no staff changes since the last sync; re-read 4 divisions, 1 source, 2 locations; the cache holds 30 employees');
    assert.doesNotMatch(delta, /\b0 employees/);
    assert.equal(staffSyncText('delta', { employees: 1, employments: 2 }, null), 'changed since the last sync: 1 employee, 2 employments');
    assert.equal(staffSyncText('full', { employees: 30, employments: 31, divisions: 1 }, 30), 'full download: 30 employees, 31 employments, 1 division; the cache holds 30 employees');
  });
});

describe('staff banner while the employee service cannot be reached (issue 27)', () => {
  const time = (iso: string): string => iso.slice(11, 19);
  it('says when the next attempt is, that one is under way, or that there are no more', () => {
    assert.equal(
      staffRetryText({ attempt: 2, of: 4, at: '2026-11-25T18:03:12.000Z' }, true, time),
      'Trying again in the background at 18:03:12 (attempt 2 of 4); the cached data can be used meanwhile.',
    );
    assert.equal(staffRetryText({ attempt: 3, of: 4, at: null }, true, time), 'Trying again now (attempt 3 of 4)…');
    assert.equal(staffRetryText(null, false, time), 'No more attempts for now: “Refresh staff data now” tries again.');
    assert.equal(staffRetryText(null, true, time), null, 'a sync going on with no retry pending adds nothing');
  });
});

describe('till lookup notes on selling an item on a date', () => {
  it('never says an item with no price that day is sold, whatever its meal periods', () => {
    for (const mealPeriods of [false, true]) {
      const notes = tillDayNotes('2026-11-26', false, mealPeriods);
      assert.equal(notes.prices, 'No price on 2026-11-26: the till cannot sell this item that day.');
      assert.doesNotMatch(notes.mealPeriods ?? '', /\bsold\b|whenever|till is open/);
    }
    assert.equal(tillDayNotes('2026-11-26', false, false).mealPeriods, 'No meal periods set for 2026-11-26.');
    assert.equal(tillDayNotes('2026-11-26', false, true).mealPeriods, 'Without a price on 2026-11-26, the till does not sell it in these meal periods either.');
  });

  it('says a priced item without meal periods that day is sold whenever it is priced, and adds nothing to meal periods', () => {
    assert.deepEqual(tillDayNotes('2026-12-25', true, false), { prices: null, mealPeriods: 'Not tied to meal periods on 2026-12-25: sold whenever it is priced, at any time of day.' });
    assert.deepEqual(tillDayNotes('2026-12-25', true, true), { prices: null, mealPeriods: null });
  });
});

describe('updates sent but not on the till yet, beside a till answer', () => {
  const w = (changeSequence: number, reason: NotYetOnTill['reason'], missing: number | null = null): NotYetOnTill => ({ changeSequence, reason, missing });
  const MAY_CHANGE_ONE = 'This is what the till has now, and it may change once it is applied.';
  const MAY_CHANGE_MANY = 'This is what the till has now, and it may change once they are applied.';

  it('says nothing when nothing sent waits, or only updates this site never applies', () => {
    assert.equal(notYetOnTillNote([], false), null);
    assert.equal(notYetOnTillNote([w(9, 'not-for-site')], true), null);
  });

  it('names the first missing update of a gap, before anything else', () => {
    assert.equal(
      notYetOnTillNote([w(12, 'waiting', 11), w(15, 'waiting', 14), w(13, 'queued'), w(9, 'not-for-site')], true),
      `Head office has sent 3 updates for this location that are not on the till yet: they wait for update 11, which has not arrived (a gap in the chain). ${MAY_CHANGE_MANY}`,
    );
    assert.equal(
      notYetOnTillNote([w(7, 'waiting', 6)], false),
      `Head office has sent 1 update for this location that is not on the till yet: it waits for update 6, which has not arrived (a gap in the chain). ${MAY_CHANGE_ONE}`,
    );
  });

  it('says a decision is wanted, applying is paused, a new location settles, or it is being applied', () => {
    assert.equal(notYetOnTillNote([w(3, 'fork'), w(4, 'queued')], true), `Head office has sent 2 updates for this location that are not on the till yet: they wait for a decision on Sync status. ${MAY_CHANGE_MANY}`);
    assert.equal(notYetOnTillNote([w(3, 'needs-adoption')], false), `Head office has sent 1 update for this location that is not on the till yet: it waits for a decision on Sync status. ${MAY_CHANGE_ONE}`);
    assert.equal(notYetOnTillNote([w(3, 'queued')], true), 'Head office has sent 1 update for this location that is not on the till yet: applying is paused. This is what the till has now, and it may change once applying resumes.');
    assert.equal(
      notYetOnTillNote([w(3, 'settling'), w(4, 'settling')], false),
      `Head office has sent 2 updates for this location that are not on the till yet: a new location's first updates are collected for a short while before the first is applied. ${MAY_CHANGE_MANY}`,
    );
    assert.equal(notYetOnTillNote([w(3, 'settling'), w(4, 'queued')], false), `Head office has sent 2 updates for this location that are not on the till yet: they are being applied. ${MAY_CHANGE_MANY}`);
  });

  it('keeps one note per location that has one', () => {
    const notes = notYetOnTillNotes([{ locationId: 1, waiting: [] }, { locationId: 2, waiting: [w(5, 'queued')] }, { locationId: 3, waiting: [w(5, 'not-for-site')] }], false);
    assert.deepEqual([...notes.keys()], [2]);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { IsoDate } from '../../../src/domain/dates';
import { CANCELLED, EmployeeApiError, serverMessageOf } from '../../../src/employees/errors';
import { backoffDelay, isRetryableStatus, nextDelay, parseRetryAfter } from '../../../src/employees/retry';
import { normaliseForSearch, searchTerms } from '../../../src/employees/search';
import { planPull, limitWarnings } from '../../../src/employees/sync';
import { accrualView, parseExpiryDate, residencyView, timezoneForCountry } from '../../../src/employees/views';

describe('retry rules', () => {
  it('retries 429 and 5xx only', () => {
    assert.deepEqual([400, 401, 404, 409, 422, 429, 500, 502, 503, 599].map(isRetryableStatus), [false, false, false, false, false, true, true, true, true, true]);
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-03-02T10:00:00Z');
    assert.equal(parseRetryAfter('3', now), 3000);
    assert.equal(parseRetryAfter('0', now), 0);
    assert.equal(parseRetryAfter('Mon, 02 Mar 2026 10:00:07 GMT', now), 7000);
    assert.equal(parseRetryAfter('Mon, 02 Mar 2026 09:00:00 GMT', now), 0);
    assert.equal(parseRetryAfter(null, now), null);
    assert.equal(parseRetryAfter('-1', now), null);
    assert.equal(parseRetryAfter('soon-ish', now), null);
  });

  it('back-off grows exponentially, is capped, and keeps at least half the step', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 1, max: 60_000 }), fc.double({ min: 0, max: 0.9999, noNaN: true }), (attempt, base, cap, r) => {
        const step = Math.min(cap, base * 2 ** (attempt - 1));
        const d = backoffDelay(attempt, base, cap, () => r);
        return d >= Math.floor(step / 2) && d <= Math.ceil(step);
      }),
    );
    assert.equal(backoffDelay(1, 100, 10_000, () => 0), 50);
    assert.equal(backoffDelay(4, 100, 10_000, () => 0), 400);
    assert.equal(backoffDelay(30, 100, 10_000, () => 1), 10_000);
  });

  it('honours Retry-After exactly, and gives up when it exceeds the cap or retries run out', () => {
    const base = { retries: 3, baseMs: 100, capMs: 5000, random: () => 0 };
    assert.equal(nextDelay({ ...base, attempt: 1, retryAfterMs: 2000 }), 2000);
    assert.equal(nextDelay({ ...base, attempt: 1, retryAfterMs: 6000 }), null);
    assert.equal(nextDelay({ ...base, attempt: 2, retryAfterMs: null }), 100);
    assert.equal(nextDelay({ ...base, attempt: 4, retryAfterMs: null }), null);
  });
});

describe('server messages', () => {
  it('finds the message in the usual error body shapes, or the text', () => {
    assert.equal(serverMessageOf('{"message":"Employee not found"}'), 'Employee not found');
    assert.equal(serverMessageOf('{"Message":"The request is invalid.","ModelState":{"x":["bad"]}}'), 'The request is invalid.');
    assert.equal(serverMessageOf('{"errors":[{"message":"a"},{"message":"b"}]}'), 'a; b');
    assert.equal(serverMessageOf('{"error":{"error_description":"expired token"}}'), 'expired token');
    assert.equal(serverMessageOf('Service Unavailable'), 'Service Unavailable');
    assert.equal(serverMessageOf('<!DOCTYPE html><html>...</html>'), null);
    assert.equal(serverMessageOf(''), null);
    assert.equal(serverMessageOf('x'.repeat(1000))!.length, 300);
  });
});

describe('failures that say the whole service cannot be reached', () => {
  const network = (reason: string) => new EmployeeApiError('network', 'GET /Locations', null, reason, 1);
  it('a connection never made is true of every endpoint at the address; a timeout or a cut connection may be one endpoint alone', () => {
    for (const reason of ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT Connect Timeout Error']) assert.equal(network(reason).addressUnreachable, true, reason);
    for (const reason of ['UND_ERR_SOCKET other side closed', 'ECONNRESET', 'fetch failed', CANCELLED]) assert.equal(network(reason).addressUnreachable, false, reason);
    assert.equal(new EmployeeApiError('timeout', 'GET /Locations', null, 'no answer within 2000 ms', 2).addressUnreachable, false);
    assert.equal(new EmployeeApiError('http', 'GET /Locations', 503, 'ECONNREFUSED upstream', 1).addressUnreachable, false, 'an answer, whatever it says');
  });
  it('a call the agent cancelled is told apart', () => {
    assert.equal(network(CANCELLED).cancelled, true);
    assert.equal(network('ECONNREFUSED').cancelled, false);
  });
});

describe('search normalisation', () => {
  it('folds case, accents and letters without decomposition', () => {
    assert.equal(normaliseForSearch('Zoë MÜLLER'), 'zoe muller');
    assert.equal(normaliseForSearch('Łukasz Wiśniewski'), 'lukasz wisniewski');
    assert.equal(normaliseForSearch('Björn Ødegaard'), 'bjorn odegaard');
    assert.equal(normaliseForSearch('Nguyễn Thị Hương'), 'nguyen thi huong');
    assert.equal(normaliseForSearch("Renée O'Sullivan"), 'renee osullivan');
    assert.equal(normaliseForSearch('García-Núñez'), 'garcianunez');
    assert.equal(normaliseForSearch('Straße'), 'strasse');
    assert.deepEqual(searchTerms('  ZOË  zoe müller '), ['zoe', 'muller']);
  });

  it('is idempotent and never contains upper case or combining marks', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 30 }), (s) => {
        const n = normaliseForSearch(s);
        return normaliseForSearch(n) === n && !/\p{M}/u.test(n) && n === n.toLowerCase();
      }),
    );
  });
});

describe('residency warnings', () => {
  const today = '2026-03-02' as IsoDate;
  it('warns within the window and after expiry, not before the window', () => {
    const pre = (date: string) => residencyView({ PreSettledStatus: 'Yes', PreSettledStatusExpiryDate: date }, today, 60);
    assert.equal(pre('2026-Apr-01').daysToExpiry, 30);
    assert.match(pre('2026-Apr-01').warning!, /pre-settled status expires on 2026-04-01, in 30 days/);
    assert.match(pre('2026-May-01').warning!, /in 60 days/);
    assert.equal(pre('2026-May-02').warning, null);
    assert.match(pre('2026-Mar-02').warning!, /expires today/);
    assert.match(pre('2026-02-20').warning!, /expired on 2026-02-20 \(10 days ago\)/);
  });

  it('uses the expiry of the status that is yes, and none for settled', () => {
    const r = residencyView({ TemporaryLeaveToRemain: 'YES', TemporaryLeaveToRemainExpiryDate: '2026-Mar-10', PreSettledStatusExpiryDate: '2026-Mar-05' }, today, 60);
    assert.equal(r.status, 'temporary leave to remain');
    assert.equal(r.expiryDate, '2026-03-10');
    const s = residencyView({ SettledStatus: 'yes', SettledStatusShareCode: '0042' }, today, 60);
    assert.deepEqual([s.status, s.shareCode, s.expiryDate, s.warning], ['settled', '0042', null, null]);
    assert.equal(residencyView({}, today, 60).status, null);
  });

  it('reads expiry dates in the request format, ISO dates and date-times', () => {
    assert.equal(parseExpiryDate('2027-Mar-05'), '2027-03-05');
    assert.equal(parseExpiryDate('2027-03-05'), '2027-03-05');
    assert.equal(parseExpiryDate('2027-03-05T00:00:00'), '2027-03-05');
    assert.equal(parseExpiryDate('05/03/2027'), null);
    assert.equal(parseExpiryDate(''), null);
  });
});

describe('holiday balance', () => {
  it('shows calculation fields of non-flexible staff as not applicable, not zero', () => {
    const v = accrualView({ EmployeeID: 5, Units: 8, UnitType: 'Days', IsFlexible: 'No', AvgSummary: '0', AvgTime: '0', AvgDays: '0', DayRate: '0' }, 'T', 'live');
    assert.deepEqual([v.balanceText, v.flexible, v.avgHoursPerDay, v.avgHoursPerWeek, v.avgDaysPerWeek, v.dayRate], ['8 Days', false, null, null, null, null]);
  });

  it('keeps the figures of flexible staff, negative balances and DayRate as text', () => {
    const v = accrualView({ EmployeeID: 5, Units: -1.5, UnitType: 'Hours', IsFlexible: 'yes', AvgSummary: 4.5, AvgTime: '22.5', AvgDays: 5, DayRate: 51.48 }, 'T', 'live');
    assert.deepEqual([v.units, v.balanceText, v.flexible, v.avgHoursPerDay, v.avgHoursPerWeek, v.avgDaysPerWeek, v.dayRate], [-1.5, '-1.5 Hours', true, 4.5, 22.5, 5, '51.48']);
  });
});

describe('locations', () => {
  it('maps the documented countries and says null for others', () => {
    assert.equal(timezoneForCountry('UK'), 'Europe/London');
    assert.equal(timezoneForCountry('Ireland'), 'Europe/Dublin');
    assert.equal(timezoneForCountry('Jersey'), 'Europe/Jersey');
    assert.equal(timezoneForCountry(' united kingdom '), 'Europe/London');
    assert.equal(timezoneForCountry('France'), null);
    assert.equal(timezoneForCountry(null), null);
  });
});

describe('sync plan', () => {
  const now = new Date('2026-03-02T10:00:00Z');
  const cfg = { deltaSync: true, fullSyncEveryHours: 24 };
  it('pulls in full the first time, when delta is off, forced, or the last full pull is old', () => {
    assert.deepEqual(planPull(null, cfg, now), { mode: 'full' });
    const state = { pulled_from: '2026-03-02T09:00:00Z', last_full_at: '2026-03-02T01:00:00Z' };
    assert.deepEqual(planPull(state, { ...cfg, deltaSync: false }, now), { mode: 'full' });
    assert.deepEqual(planPull(state, cfg, now, true), { mode: 'full' });
    assert.deepEqual(planPull({ ...state, last_full_at: '2026-03-01T09:59:00Z' }, cfg, now), { mode: 'full' });
  });
  it('otherwise asks for changes from the day before the last pull', () => {
    assert.deepEqual(planPull({ pulled_from: '2026-03-02T09:00:00Z', last_full_at: '2026-03-02T01:00:00Z' }, cfg, now), { mode: 'delta', dateFrom: '2026-03-01' });
  });
  it('flags stored values over the section 8 limits', () => {
    assert.equal(limitWarnings('locations', [{ Description: 'd'.repeat(51), AccountingSystemCode: 'ok' }]).length, 1);
    assert.equal(limitWarnings('employments', [{ ReportsTo: 'r'.repeat(99) }]).length, 0);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeFieldError, parseYearMonthNameDay, validateEmployeesForPost, yesNoValue } from '../../../src/employees/validation';

const fieldsOf = (body: unknown): string[] => {
  const r = validateEmployeesForPost(body);
  return r.ok ? [] : r.errors.map((e) => e.field);
};

describe('POST Employees validation', () => {
  it('accepts a complete valid element and normalises the expiry month capitalisation', () => {
    const r = validateEmployeesForPost([
      { EmployeeNumber: 'E1', PreSettledStatus: 'Yes', PreSettledStatusExpiryDate: '2027-mar-05', SettledStatus: 'no', TemporaryLeaveToRemain: '', Other: { kept: true } },
    ]);
    assert.equal(r.ok, true);
    if (r.ok) {
      assert.equal(r.elements[0]!.PreSettledStatusExpiryDate, '2027-Mar-05');
      assert.deepEqual(r.elements[0]!.Other, { kept: true });
    }
  });

  it('yes/no/empty are compared case-insensitively; anything else names the field', () => {
    for (const v of ['yes', 'Yes', 'YES', 'no', 'No', '']) assert.notEqual(yesNoValue(v), null, v);
    for (const v of ['y', 'true', ' yes', 'si']) assert.equal(yesNoValue(v), null, v);
    assert.deepEqual(fieldsOf([{ EmployeeNumber: 'E1', SettledStatus: 'Y', PreSettledStatus: 'maybe', TemporaryLeaveToRemain: true }]), ['SettledStatus', 'PreSettledStatus', 'TemporaryLeaveToRemain']);
  });

  it('at most one of the three statuses is yes', () => {
    assert.deepEqual(fieldsOf([{ EmployeeNumber: 'E1', SettledStatus: 'YES', PreSettledStatus: 'no', TemporaryLeaveToRemain: 'no' }]), []);
    assert.deepEqual(fieldsOf([{ EmployeeNumber: 'E1', SettledStatus: 'Yes', PreSettledStatus: 'yes' }]), ['SettledStatus', 'PreSettledStatus']);
    assert.deepEqual(fieldsOf([{ EmployeeNumber: 'E1', SettledStatus: 'Yes', PreSettledStatus: 'yes', TemporaryLeaveToRemain: 'YES' }]).length, 3);
  });

  it('the share code is up to 20 digits', () => {
    assert.deepEqual(fieldsOf([{ EmployeeNumber: 'E1', SettledStatus: 'Yes', SettledStatusShareCode: '12345678901234567890' }]), []);
    assert.deepEqual(fieldsOf([{ EmployeeNumber: 'E1', SettledStatusShareCode: '' }]), []);
    assert.deepEqual(fieldsOf([{ EmployeeNumber: 'E1', SettledStatusShareCode: '0' }]), []);
    assert.deepEqual(fieldsOf([{ EmployeeNumber: 'E1', SettledStatusShareCode: '123456789012345678901' }]), ['SettledStatusShareCode']);
    assert.deepEqual(fieldsOf([{ EmployeeNumber: 'E1', SettledStatusShareCode: 'ABC123' }]), ['SettledStatusShareCode']);
    assert.deepEqual(fieldsOf([{ EmployeeNumber: 'E1', SettledStatusShareCode: 12345 }]), ['SettledStatusShareCode']);
  });

  it('expiry dates are real dates written yyyy-MMM-dd', () => {
    assert.deepEqual(parseYearMonthNameDay('2027-Mar-05'), { canonical: '2027-Mar-05', iso: '2027-03-05' });
    assert.deepEqual(parseYearMonthNameDay('2028-Feb-29')?.iso, '2028-02-29');
    for (const bad of ['2027-Feb-29', '2027-03-05', '05-Mar-2027', '2027-Mar-5', '2027-Mrz-05', '2027-Apr-31', '2027-Mar-00']) {
      assert.equal(parseYearMonthNameDay(bad), null, bad);
      assert.deepEqual(fieldsOf([{ EmployeeNumber: 'E1', TemporaryLeaveToRemain: 'Yes', TemporaryLeaveToRemainExpiryDate: bad }]), ['TemporaryLeaveToRemainExpiryDate'], bad);
    }
    assert.deepEqual(fieldsOf([{ EmployeeNumber: 'E1', PreSettledStatusExpiryDate: '' }]), []);
  });

  it('section 8 limits are checked on the fields we send', () => {
    assert.deepEqual(fieldsOf([{ EmployeeNumber: 'E1', ReportsTo: 'x'.repeat(99) }]), []);
    assert.deepEqual(fieldsOf([{ EmployeeNumber: 'E1', ReportsTo: 'x'.repeat(100) }]), ['ReportsTo']);
    assert.deepEqual(fieldsOf([{ EmployeeNumber: 'E1', SourceDescription: 's'.repeat(41), AccountingSystemCode: 'c'.repeat(11), Description: 'd'.repeat(51) }]).sort(), [
      'AccountingSystemCode',
      'Description',
      'SourceDescription',
    ]);
    // Characters, not UTF-16 units: 99 accented letters fit.
    assert.deepEqual(fieldsOf([{ EmployeeNumber: 'E1', ReportsTo: 'é'.repeat(99) }]), []);
  });

  it('reports every error of every element, with its position and number', () => {
    const r = validateEmployeesForPost([
      { EmployeeNumber: 'OK1' },
      { EmployeeNumber: 'E2', SettledStatus: 'perhaps', SettledStatusShareCode: 'x' },
      { SettledStatus: 'Yes' },
      'not an object',
    ]);
    assert.equal(r.ok, false);
    if (!r.ok) {
      assert.deepEqual(
        r.errors.map((e) => [e.index, e.field]),
        [
          [1, 'SettledStatus'],
          [1, 'SettledStatusShareCode'],
          [2, 'EmployeeNumber'],
          [3, '(element)'],
        ],
      );
      assert.match(describeFieldError(r.errors[0]!), /^employee 2 \(E2\): SettledStatus must be yes, no or empty/);
    }
  });

  it('refuses a body that is not a non-empty array', () => {
    assert.deepEqual(fieldsOf({ EmployeeNumber: 'E1' }), ['(body)']);
    assert.deepEqual(fieldsOf([]), ['(body)']);
  });
});

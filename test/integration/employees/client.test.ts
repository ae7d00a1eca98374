import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EmployeeClient } from '../../../src/employees/client';
import { EmployeeApiError, EmployeeValidationError } from '../../../src/employees/errors';
import { redactor } from '../../../src/log';
import { startSimulator, staffConfig } from './sim';

describe('employee interface client against the simulator (real HTTP)', async () => {
  const { sim, running } = await startSimulator({ auth: { type: 'bearer', token: 'sim-bearer-token' } });
  const client = (employees: Record<string, unknown> = {}) => new EmployeeClient(staffConfig(running.url, { auth: { type: 'bearer', token: 'sim-bearer-token' }, ...employees }).employees!);

  it('GET Employees: showFormer defaults to true and is sent; false leaves former staff out; unknown fields kept', async () => {
    const all = await client().employees();
    assert.equal(all.length, sim.data.employees.length);
    assert.equal(sim.requests.at(-1)!.query.showFormer, 'true');
    const current = await client().employees({ showFormer: false });
    assert.ok(current.length < all.length);
    assert.ok(!current.some((e) => e.EmployeeID === 1004), 'José (former) is not current');
    const zoe = all.find((e) => e.EmployeeID === 1002)!;
    assert.equal(zoe.IsEmployeeFurlough, true);
    assert.equal(zoe.FurLoughContractHours, 18.5);
    assert.equal(zoe.FirstName, 'Zoë', 'an undocumented field is kept');
    assert.equal(zoe.PreSettledStatus, 'Yes');
  });

  it('GET Employees: start/duration, dateFrom/dateTo and delta are passed through', async () => {
    const page = await client().employees({ start: 2, duration: 3 });
    assert.deepEqual(page.map((e) => e.EmployeeID), [1003, 1004, 1005]);
    await client().employees({ dateFrom: '2026-01-01', dateTo: '2026-02-01', delta: true });
    assert.deepEqual(sim.requests.at(-1)!.query, { dateFrom: '2026-01-01', dateTo: '2026-02-01', delta: 'true', showFormer: 'true' });
    await assert.rejects(client().employees({ dateFrom: '01/01/2026' }), /dateFrom must be YYYY-MM-DD/);
  });

  it('pages through a listing when employees.pageSize is set', async () => {
    sim.requests.length = 0;
    const all = await client({ pageSize: 7 }).employees();
    assert.equal(all.length, sim.data.employees.length);
    assert.equal(new Set(all.map((e) => e.EmployeeID)).size, all.length);
    // Until an empty page.
    assert.equal(sim.requests.length, Math.ceil(sim.data.employees.length / 7) + 1);
    assert.deepEqual([sim.requests[1]!.query.start, sim.requests[1]!.query.duration], ['7', '7']);
  });

  it('pages on past a page shorter than asked for: the service may have a page size of its own', async () => {
    const capped = await startSimulator({ maxPageSize: 4 });
    const all = await new EmployeeClient(staffConfig(capped.running.url, { pageSize: 10 }).employees!).employees();
    assert.equal(all.length, capped.sim.data.employees.length);
    assert.equal(new Set(all.map((e) => e.EmployeeID)).size, all.length);
    assert.deepEqual(capped.sim.requests.slice(0, 3).map((r) => r.query.start), ['0', '4', '8'], 'each page from where the last ended');
  });

  it('GET Employments carries IR35 and the manager fields', async () => {
    const rows = await client().employments();
    const lukasz = rows.find((r) => r.EmployeeID === 1003)!;
    assert.equal(lukasz.IR35, true);
    assert.equal(lukasz.ReportsTo, 'François Dvořák');
    assert.equal(lukasz.ReportsToEmployeeNumber, 'E1008');
    assert.match(lukasz.ReportsToFAID!, /^FA\d+$/);
  });

  it('GET Accrual for one employee, with the non-flexible "0" fields', async () => {
    const [bjorn] = await client().accrual(1005);
    assert.equal(sim.requests.at(-1)!.query.employeeId, '1005');
    assert.equal(bjorn!.ElementName, 'Holiday Balance');
    assert.equal(bjorn!.ElementType, 'ACCRUAL');
    assert.equal(bjorn!.IsFlexible, 'No');
    assert.equal(bjorn!.AvgSummary, '0');
    assert.match(bjorn!.StartDateTime!, /^\d{4}-\d{2}-\d{2}T00:00:00$/);
    assert.equal((await client().accrual()).length, sim.data.employees.length);
  });

  it('GET Divisions, EmployeeSource and Locations', async () => {
    const c = client();
    assert.deepEqual((await c.divisions()).map((d) => d.DivisionName), ['Bar', 'Kitchen', 'Front of House', 'Management']);
    assert.ok((await c.employeeSources()).some((s) => s.SourceDescription === 'Staff referral'));
    const locations = await c.locations();
    assert.deepEqual(locations.map((l) => [l.LocationID, l.Country]), [
      [101, 'UK'],
      [102, 'Ireland'],
      [103, 'Jersey'],
      [104, 'Ireland'],
    ]);
  });

  it('POST Employees sends a validated array and returns the answer', async () => {
    const before = sim.data.employees.length;
    const result = await client().postEmployees([
      { EmployeeNumber: 'E9001', FirstName: 'Aisling', LastName: 'Ní Dhomhnaill', TemporaryLeaveToRemain: 'yes', TemporaryLeaveToRemainExpiryDate: '2026-APR-15' },
      { EmployeeNumber: 'E1002', PreSettledStatus: 'No', SettledStatus: 'Yes', SettledStatusShareCode: '12345' },
    ]);
    assert.equal(result.status, 200);
    assert.equal(result.sent, 2);
    assert.deepEqual((result.body as { Result: string }[]).map((r) => r.Result), ['Created', 'Updated']);
    assert.equal(sim.data.employees.length, before + 1);
    const created = sim.data.employees.find((e) => e.EmployeeNumber === 'E9001')!;
    assert.equal(created.TemporaryLeaveToRemainExpiryDate, '2026-Apr-15', 'canonical date format sent');
    assert.equal(sim.data.employees.find((e) => e.EmployeeNumber === 'E1002')!.SettledStatus, 'Yes');
  });

  it('POST with any invalid field sends nothing and lists every field', async () => {
    sim.requests.length = 0;
    await assert.rejects(
      client().postEmployees([
        { EmployeeNumber: 'E1', SettledStatus: 'Yes', PreSettledStatus: 'Yes' },
        { EmployeeNumber: 'E2', SettledStatusShareCode: '1'.repeat(21), PreSettledStatusExpiryDate: '2027-Feb-30' },
      ]),
      (err: unknown) => {
        assert.ok(err instanceof EmployeeValidationError);
        assert.deepEqual(err.fieldErrors.map((e) => e.field), ['SettledStatus', 'PreSettledStatus', 'SettledStatusShareCode', 'PreSettledStatusExpiryDate']);
        assert.equal(err.status, 422);
        return true;
      },
    );
    assert.equal(sim.requests.length, 0, 'nothing reached the service');
  });

  it('the simulator enforces the same rules on what reaches it', async () => {
    const res = await fetch(`${running.url}/organisations/42/Employees`, {
      method: 'POST',
      headers: { authorization: 'Bearer sim-bearer-token', 'content-type': 'application/json' },
      body: JSON.stringify([{ EmployeeNumber: 'E1', TemporaryLeaveToRemain: 'Yes', SettledStatus: 'yes' }]),
    });
    assert.equal(res.status, 400);
    const body = (await res.json()) as { errors: { field: string }[] };
    assert.deepEqual(body.errors.map((e) => e.field), ['SettledStatus', 'TemporaryLeaveToRemain']);
  });

  it('wrong credentials give a typed auth error that never contains the secret', async () => {
    await assert.rejects(client({ auth: { type: 'bearer', token: 'wrong-token-value' } }).divisions(), (err: unknown) => {
      assert.ok(err instanceof EmployeeApiError);
      assert.equal(err.id, 'employee_api_auth');
      assert.equal(err.httpStatus, 401);
      assert.equal(err.attempts, 1, '401 is not retried');
      assert.match(err.message, /refused our credentials.*Authorization has been denied/);
      assert.ok(!err.message.includes('wrong-token-value'));
      return true;
    });
    assert.equal(redactor.redact('x wrong-token-value y'), 'x ******** y', 'the token was registered with the redactor');
  });

  it('an unknown organisation is a typed 404 naming the endpoint', async () => {
    await assert.rejects(client({ organisationId: 7 }).employees(), (err: unknown) => {
      assert.ok(err instanceof EmployeeApiError);
      assert.equal(err.id, 'employee_api_not_found');
      assert.equal(err.endpoint, 'GET /organisations/7/Employees?showFormer=true');
      assert.equal(err.serverMessage, 'Organisation 7 was not found.');
      return true;
    });
  });
});

describe('authentication variants and reference path prefix', () => {
  it('HTTP basic', async () => {
    const { running } = await startSimulator({ auth: { type: 'basic', username: 'agent', password: 'pässwörd' } });
    const ok = new EmployeeClient(staffConfig(running.url, { auth: { type: 'basic', username: 'agent', password: 'pässwörd' } }).employees!);
    assert.equal((await ok.locations()).length, 4);
    const bad = new EmployeeClient(staffConfig(running.url, { auth: { type: 'basic', username: 'agent', password: 'nope' } }).employees!);
    await assert.rejects(bad.locations(), { id: 'employee_api_auth' });
  });

  it('a custom header, and Divisions/EmployeeSource/Locations under a configured prefix', async () => {
    const { running } = await startSimulator({ auth: { type: 'header', name: 'X-Api-Key', value: 'key-123456' }, referencePathPrefix: '/organisations/{organisationId}' });
    const c = new EmployeeClient(staffConfig(running.url, { auth: { type: 'header', name: 'X-Api-Key', value: 'key-123456' }, referencePathPrefix: '/organisations/{organisationId}' }).employees!);
    assert.equal(c.referencePath('Locations'), '/organisations/42/Locations');
    assert.equal((await c.divisions()).length, 4);
    assert.equal((await c.employeeSources()).length, 5);
    const noPrefix = new EmployeeClient(staffConfig(running.url, { auth: { type: 'header', name: 'X-Api-Key', value: 'key-123456' } }).employees!);
    await assert.rejects(noPrefix.locations(), { id: 'employee_api_not_found' });
  });
});

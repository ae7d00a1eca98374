import fs from 'node:fs';
import type { Config } from '../../config/schema';
import { AgentCore } from '../../core';
import { EmployeeValidationError } from '../../employees/errors';
import type { AccrualView, Freshness, StaffDetail } from '../../employees/model';
import { StaffCache } from '../../employees/cache';
import { StaffService } from '../../employees/service';
import { describeFieldError } from '../../employees/validation';
import { AppError } from '../../errors';
import { cliCommand } from '../../config/invocation';
import { silentLogger } from '../../log';
import { purgeStaffCopies } from '../../ops/backup/staff-purge';
import { legacySplitBackupDir } from '../../store/split';
import { backupDir } from '../../ops/paths';
import { EXIT, UsageError, type Command, type CommandContext } from '../command';
import { writeErr } from '../output';
import { timeWithZone } from '../../domain/local-time';
import { staffSyncText } from '../../domain/wording';

/** Runs fn with a StaffService on staff.db (the cache), closed afterwards. */
async function withStaff<T>(ctx: CommandContext, fn: (staff: StaffService, config: Readonly<Config>) => Promise<T> | T): Promise<T> {
  const config = ctx.config();
  if (!config.employees) throw new AppError('staff_not_configured', 500, 'the employee interface is not configured: add an "employees" section to the configuration (see docs/staff.md)');
  const log = ctx.json ? silentLogger : ctx.logger(config, { console: false });
  const core = new AgentCore(config, log);
  const staff = new StaffService(config, log, { db: core.staffDb });
  try {
    return await fn(staff, config);
  } finally {
    await staff.stop();
    core.close();
  }
}

function wholeNumber(ctx: CommandContext, name: string, fallback: number): number {
  const raw = ctx.values[name];
  if (raw === undefined) return fallback;
  if (typeof raw !== 'string' || !/^\d+$/.test(raw)) throw new UsageError(`--${name} takes a whole number`);
  return Number(raw);
}

/** EMPLOYEE_ID: the EmployeeID, or an employee number (e.g. E1001) found in the cache. */
function resolveEmployee(staff: StaffService, text: string): number {
  if (/^\d+$/.test(text)) return Number(text);
  // The exact number, former staff included (a search ranks current staff whose numbers start with it first).
  const id = staff.employeeIdByNumber(text);
  if (id === null) throw new AppError('employee_not_found', 404, `no employee with number ${text} in the cache (run ${cliCommand('staff sync')}, or use the EmployeeID)`);
  return id;
}

export function describeFreshness(f: Freshness): string {
  if (f.refreshedAt === null) return `${f.resource}: never synced${f.lastError ? ` (last attempt failed: ${f.lastError})` : ''}`;
  const age = f.ageMinutes === 0 ? 'just now' : f.ageMinutes! < 120 ? `${f.ageMinutes} min ago` : `${Math.round(f.ageMinutes! / 60)} h ago`;
  return `${f.resource}: ${f.records} records, refreshed ${age} (${timeWithZone(f.refreshedAt)}, ${f.lastMode})${f.stale ? ' STALE' : ''}${f.lastError ? `; last attempt failed: ${f.lastError}` : ''}`;
}

export function describeAccrual(a: AccrualView): string[] {
  const na = 'not applicable (not flexible)';
  const lines = [`Holiday balance: ${a.balanceText}${a.units < 0 ? ' (leave taken ahead of accrual)' : ''}`];
  lines.push(`  flexible: ${a.flexible === null ? 'unknown' : a.flexible ? 'yes' : 'no'}`);
  lines.push(`  average hours per day: ${a.avgHoursPerDay ?? na}`);
  lines.push(`  average hours per week: ${a.avgHoursPerWeek ?? na}`);
  lines.push(`  average days per week: ${a.avgDaysPerWeek ?? na}`);
  lines.push(`  day rate: ${a.dayRate ?? na}`);
  lines.push(`  as of ${a.asOf ?? '(not stated)'}; fetched ${timeWithZone(a.fetchedAt)}${a.source === 'cache' ? ' (cached' + (a.liveError ? `; the live fetch failed: ${a.liveError}` : '') + ')' : ''}`);
  return lines;
}

export function describeDetail(d: StaffDetail): string[] {
  const yn = (v: boolean | null): string => (v === null ? 'unknown' : v ? 'yes' : 'no');
  const lines = [`${d.name}  (EmployeeID ${d.employeeId}${d.employeeNumber ? `, number ${d.employeeNumber}` : ''})${d.former ? '  FORMER EMPLOYEE' : ''}`];
  if (d.manager) lines.push(`  manager: ${d.manager.name ?? '(name not given)'}${d.manager.employeeNumber ? ` (${d.manager.employeeNumber})` : ''}`);
  lines.push(`  IR35: ${yn(d.ir35)}${d.ir35 ? ' (payments must go through payroll)' : ''}`);
  lines.push(`  furloughed: ${yn(d.furloughed)}`);
  lines.push(`  contract hours per week: ${d.contractHours ?? 'unknown'}`);
  for (const e of d.employments) {
    const job = typeof e.raw.JobTitle === 'string' ? e.raw.JobTitle : null;
    lines.push(`  employment${job ? `: ${job}` : ''}${e.reportsTo ? `, reports to ${e.reportsTo}` : ''}${e.reportsToFAID ? ` (FAID ${e.reportsToFAID})` : ''}`);
  }
  const r = d.residency;
  lines.push(`  residency: ${r.status ?? 'none recorded'}${r.expiryDate ? `, expires ${r.expiryDate}` : ''}${r.shareCode ? `, share code ${r.shareCode}` : ''}`);
  if (r.warning) lines.push(`  WARNING: ${r.warning}`);
  if (d.accrual) lines.push(...describeAccrual(d.accrual).map((l) => `  ${l}`));
  lines.push(`  (${describeFreshness(d.freshness)})`);
  return lines;
}

export const staffSync: Command = {
  name: 'staff sync',
  summary: 'pull employees, employments, divisions, sources and locations into the local cache',
  usage: '[--full]',
  options: { full: { type: 'boolean' } },
  run(ctx) {
    return withStaff(ctx, async (staff) => {
      const report = await staff.sync({ full: ctx.values.full === true });
      if (ctx.json) ctx.printJson({ report, freshness: staff.freshness() });
      else {
        const held = staff.freshness().find((f) => f.resource === 'employees')?.records ?? null;
        ctx.out(`Staff sync in ${report.ms} ms: ${staffSyncText(report.mode, report.counts, held)}.`);
        for (const e of report.errors) ctx.out(`  FAILED ${e.resource}: ${e.message} (the cached data was kept)`);
        for (const w of report.warnings.slice(0, 20)) ctx.out(`  warning: ${w}`);
      }
      return report.errors.length > 0 ? EXIT.failed : EXIT.ok;
    });
  },
};

export const staffSearch: Command = {
  name: 'staff search',
  summary: 'find staff by name or employee number (partial, any case, accents optional), from the cache',
  usage: 'QUERY [--limit N]',
  options: { limit: { type: 'string' } },
  positionals: [1, 10],
  run(ctx) {
    const limit = wholeNumber(ctx, 'limit', 20);
    return withStaff(ctx, (staff) => {
      const result = staff.search(ctx.args.join(' '), limit);
      if (ctx.json) ctx.printJson(result);
      else {
        if (result.results.length === 0) ctx.out(`Nobody matches "${result.query}".`);
        for (const r of result.results) ctx.out(`${String(r.employeeId).padEnd(8)} ${(r.employeeNumber ?? '').padEnd(10)} ${r.name}${r.former ? '  (former)' : ''}${r.furloughed ? '  (furloughed)' : ''}`);
        if (result.truncated) ctx.out(`(more than ${result.results.length} matches; refine the search or use --limit)`);
        ctx.out(`(${describeFreshness(result.freshness)})`);
      }
      return EXIT.ok;
    });
  },
};

export const staffShow: Command = {
  name: 'staff show',
  summary: 'one person: employment, manager, IR35, furlough, contract hours, residency, last holiday balance',
  usage: 'EMPLOYEE_ID',
  positionals: [1, 1],
  run(ctx) {
    return withStaff(ctx, (staff) => {
      const detail = staff.show(resolveEmployee(staff, ctx.args[0]!));
      if (!detail) throw new AppError('employee_not_found', 404, `no employee ${ctx.args[0]} in the cache (run ${cliCommand('staff sync')})`);
      if (ctx.json) ctx.printJson(detail);
      else ctx.out(describeDetail(detail).join('\n'));
      return EXIT.ok;
    });
  },
};

export const staffAccrual: Command = {
  name: 'staff accrual',
  summary: 'holiday balance, fetched live (the cached one with its time when offline)',
  usage: 'EMPLOYEE_ID',
  positionals: [1, 1],
  run(ctx) {
    return withStaff(ctx, async (staff) => {
      const id = resolveEmployee(staff, ctx.args[0]!);
      const accrual = await staff.accrual(id, { refresh: true });
      if (ctx.json) ctx.printJson({ employeeId: id, accrual });
      else if (!accrual) ctx.out(`The employee service has no holiday record for employee ${id}.`);
      else ctx.out(describeAccrual(accrual).join('\n'));
      return accrual ? EXIT.ok : EXIT.failed;
    });
  },
};

export const staffSubmit: Command = {
  name: 'staff submit',
  summary: 'validate and POST the employees in a JSON file (nothing is sent if any field is wrong)',
  usage: 'FILE',
  positionals: [1, 1],
  run(ctx) {
    const file = ctx.args[0]!;
    let body: unknown;
    try {
      // A byte-order mark is skipped: Notepad ("UTF-8 with BOM") and PowerShell's Out-File write one, and JSON.parse refuses it.
      body = JSON.parse(fs.readFileSync(file, 'utf8').replace(/^\uFEFF/, ''));
    } catch (err) {
      throw new AppError('file_unreadable', 400, `cannot read ${file} as JSON: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    return withStaff(ctx, async (staff) => {
      try {
        const report = await staff.submit(body);
        if (ctx.json) ctx.printJson(report);
        else ctx.out(`Sent ${report.sent} employee${report.sent === 1 ? '' : 's'}; the service answered HTTP ${report.status}${report.response === null ? '' : `: ${JSON.stringify(report.response).slice(0, 500)}`}`);
        return EXIT.ok;
      } catch (err) {
        if (!(err instanceof EmployeeValidationError)) throw err;
        const message = `Nothing was sent: ${err.fieldErrors.length} field error${err.fieldErrors.length === 1 ? '' : 's'} in ${file}`;
        // An error, so on stderr in both modes; --json keeps the field errors for a script to show.
        if (ctx.json) writeErr(`${JSON.stringify({ error: { id: 'employees_invalid', message, fieldErrors: err.fieldErrors } })}\n`);
        else writeErr([`${message}:`, ...err.fieldErrors.map((e) => `  ${describeFieldError(e)}`), ''].join('\n'));
        return EXIT.invalidInput;
      }
    });
  },
};

export const staffResidency: Command = {
  name: 'staff residency',
  summary: 'current staff whose residency status expires within the warning window (or has expired)',
  usage: '',
  run(ctx) {
    return withStaff(ctx, (staff) => {
      const warnings = staff.residencyWarnings();
      // The answer is only as good as the cache it is read from: say how fresh that is, and give no
      // all-clear from a cache that was never filled.
      const freshness = staff.employeesFreshness();
      if (ctx.json) ctx.printJson({ windowDays: staff.settings.residencyWarningDays, warnings, freshness });
      else {
        ctx.out(describeFreshness(freshness));
        if (freshness.refreshedAt === null) ctx.out(`Nothing to check: run ${cliCommand('staff sync')} first.`);
        else if (warnings.length === 0) ctx.out(`No residency status expires within ${staff.settings.residencyWarningDays} days.`);
        else for (const w of warnings) ctx.out(`${w.employee.employeeId}  ${w.employee.name}: ${w.residency.warning}`);
      }
      return freshness.refreshedAt === null ? EXIT.failed : EXIT.ok;
    });
  },
};

export const staffLocations: Command = {
  name: 'staff locations',
  summary: 'the locations GET /Locations lists, with the timezone each one uses',
  usage: '',
  run(ctx) {
    return withStaff(ctx, (staff) => {
      const rows = staff.locations().map((l) => ({ ...l, timezone: staff.locationTimezone(l.locationId) }));
      if (ctx.json) ctx.printJson({ locations: rows });
      else {
        if (rows.length === 0) ctx.out(`No locations cached (run ${cliCommand('staff sync')}).`);
        for (const l of rows) ctx.out(`${l.locationId}  ${l.description}  ${l.country ?? '?'}${l.area ? ` / ${l.area}` : ''}  ${l.timezone.timezone} (${l.timezone.source})${l.timezone.note ? `  ${l.timezone.note}` : ''}`);
      }
      return EXIT.ok;
    });
  },
};

export const staffPurge: Command = {
  name: 'staff purge',
  summary: 'delete every cached staff record (personal data) from this computer',
  usage: '--yes',
  options: { yes: { type: 'boolean' } },
  check(ctx) {
    if (ctx.values.yes !== true) throw new UsageError('staff purge deletes all cached staff data; add --yes to confirm');
  },
  run(ctx) {
    // Needs no employee interface: a site that stopped using staff lookups (the `employees` section
    // removed) still holds what was cached before, and must be able to erase it.
    const config = ctx.config();
    const core = new AgentCore(config, ctx.json ? silentLogger : ctx.logger(config, { console: false }));
    try {
      const removed = new StaffCache(core.staffDb, config.employees?.fieldNames).purge();
      // The agent's own copies too: sets that carry staff.db and 0.1 files with staff tables.
      const copies = purgeStaffCopies([backupDir(config), legacySplitBackupDir(config.dataDir)]);
      if (ctx.json) ctx.printJson({ removed, backupsPurged: copies });
      else {
        const again = config.employees ? "A later staff sync (or the running agent's schedule) fetches them again." : 'No employee interface is configured, so nothing fetches them again.';
        ctx.out(`Deleted ${Object.values(removed).reduce((a, b) => a + b, 0)} cached staff rows. ${again}`);
        const n = copies.sets.length + copies.legacyFiles.length;
        ctx.out(n === 0 ? 'No backup held staff data.' : `Deleted the staff data kept in ${n} backup${n === 1 ? '' : 's'}: ${[...copies.sets, ...copies.legacyFiles].join(', ')}. Their menu and inbox can still be restored.`);
      }
      if (copies.failed.length === 0) return EXIT.ok;
      for (const f of copies.failed) writeErr(`could not purge the staff data in ${f.file}: ${f.error} (close the program that holds it and run ${cliCommand('staff purge')} again, or delete it by hand)`);
      return EXIT.failed;
    } finally {
      core.close();
    }
  },
};

export const devEmployeeApi: Command = {
  name: 'dev employee-api',
  summary: 'run the local simulator of the UK employee interface (seeded staff; faults via /__admin/faults)',
  usage: '[--port P] [--host H] [--employees N] [--seed S] [--organisation ID]',
  options: { port: { type: 'string' }, host: { type: 'string' }, employees: { type: 'string' }, seed: { type: 'string' }, organisation: { type: 'string' } },
  async run(ctx) {
    const host = typeof ctx.values.host === 'string' ? ctx.values.host : '127.0.0.1';
    // Loaded here, not with the command table: the simulator's HTTP stack is for developers, and every
    // other command (serve above all) would otherwise carry it.
    const { createEmployeeApi } = require('../../dev/employee-api/app') as typeof import('../../dev/employee-api/app');
    const sim = createEmployeeApi({ employees: wholeNumber(ctx, 'employees', 40), seed: wholeNumber(ctx, 'seed', 42), organisationId: wholeNumber(ctx, 'organisation', 1) });
    const running = await sim.listen(wholeNumber(ctx, 'port', 8790), host);
    ctx.out(
      `Employee interface simulator at ${running.url} (organisation ${sim.options.organisationId}, ${sim.data.employees.length} employees).\n` +
        `Point the agent at it: "employees": { "baseUrl": "${running.url}", "organisationId": ${sim.options.organisationId} }\n` +
        `Faults: curl -X POST ${running.url}/__admin/faults -H 'content-type: application/json' -d '{"kind":"status","status":500,"times":2}'`,
    );
    await new Promise<void>((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
    });
    await running.close();
    return EXIT.ok;
  },
};

export const STAFF_COMMANDS: readonly Command[] = [staffSync, staffSearch, staffShow, staffAccrual, staffSubmit, staffResidency, staffLocations, staffPurge, devEmployeeApi];

import Router from 'router';
import { AppError } from '../../errors';
import { sendJson } from '../../http/errors';
import { query } from '../../http/request';
import type { Logger } from '../../log';
import type { StaffService } from '../../employees/service';
import type { AccrualView, StaffDetail } from '../../employees/model';
import type { AdminAgent } from '../deps';

/**
 * Staff lookups for the window, over the staff helper's StaffService ('staff'). The service may be
 * absent (config.employees is null): the window then says lookups are not configured. Raw vendor
 * records are not passed on: the card needs a handful of fields, and less personal data in the
 * browser is better.
 */

function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value : typeof value === 'number' ? String(value) : null;
}

function withoutRawAccrual(a: AccrualView | null): Omit<AccrualView, 'raw'> | null {
  if (!a) return null;
  const { raw: _raw, ...rest } = a;
  return rest;
}

export function staffCard(detail: StaffDetail, locationName: (id: number) => string | null): Record<string, unknown> {
  const { raw, employments, accrual, ...rest } = detail;
  return {
    ...rest,
    knownAs: text(raw.KnownAs),
    startDate: text(raw.StartDate),
    leaveDate: text(raw.LeaveDate),
    employments: employments.map((e) => {
      const locationId = typeof e.raw.LocationID === 'number' ? e.raw.LocationID : Number.isInteger(Number(e.raw.LocationID)) && text(e.raw.LocationID) ? Number(e.raw.LocationID) : null;
      return {
        jobTitle: text(e.raw.JobTitle),
        locationId,
        locationName: locationId === null ? null : locationName(locationId),
        startDate: text(e.raw.StartDate),
        endDate: text(e.raw.EndDate),
        reportsTo: e.reportsTo,
        reportsToEmployeeNumber: e.reportsToEmployeeNumber,
        ir35: e.ir35,
      };
    }),
    accrual: withoutRawAccrual(accrual),
  };
}

export function staffRoutes(agent: AdminAgent, log: Logger): Router.Router {
  const router = Router();
  const staff = (): StaffService => {
    const service = agent.service<StaffService>('staff');
    if (!service) throw new AppError('staff_not_configured', 404, 'staff lookups are not configured on this agent');
    return service;
  };
  const employeeId = (value: unknown): number => {
    if (typeof value !== 'string' || !/^\d{1,12}$/.test(value)) throw new AppError('invalid_parameter', 400, 'employee id must be a whole number');
    return Number(value);
  };

  router.get('/', (_req, res) => {
    const service = agent.service<StaffService>('staff');
    if (!service) {
      sendJson(res, 200, { configured: false });
      return;
    }
    const warnings = service.residencyWarnings();
    sendJson(res, 200, { configured: true, syncing: service.syncing, link: service.link, freshness: service.freshness(), residencyWarnings: warnings.slice(0, 50), residencyWarningCount: warnings.length });
  });

  router.get('/search', (req, res) => {
    const q = query(req).q;
    if (typeof q !== 'string' || q.length > 100) throw new AppError('invalid_parameter', 400, 'q must be text of at most 100 characters');
    if (q.trim() === '') {
      sendJson(res, 200, { query: q, results: [], truncated: false, freshness: staff().freshness().find((f) => f.resource === 'employees') ?? null });
      return;
    }
    sendJson(res, 200, staff().search(q, 25));
  });

  router.post('/sync', async (_req, res) => {
    const report = await staff().sync();
    log.info(`status window: staff sync requested (${report.mode}, ${report.errors.length} errors)`);
    sendJson(res, 200, { mode: report.mode, ms: report.ms, counts: report.counts, errors: report.errors });
  });

  // "Try again now" in the offline banner: a call waiting between attempts tries at once.
  router.post('/retry', (_req, res) => {
    const woken = staff().retryNow();
    if (woken) log.info('status window: the employee service is being tried again now');
    sendJson(res, 200, { retrying: woken });
  });

  router.get('/:id', (req, res) => {
    const service = staff();
    const detail = service.show(employeeId(req.params.id));
    if (!detail) throw new AppError('not_found', 404, 'no such person in the staff cache');
    sendJson(res, 200, staffCard(detail, (id) => {
      try {
        return service.locationName(id);
      } catch {
        return null;
      }
    }));
  });

  router.get('/:id/accrual', async (req, res) => {
    const accrual = await staff().accrual(employeeId(req.params.id), { refresh: query(req).refresh === '1' });
    sendJson(res, 200, { accrual: withoutRawAccrual(accrual) });
  });

  return router;
}

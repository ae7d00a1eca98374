import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Request, type Response, type NextFunction } from 'express';
import { isIsoDate, type IsoDate } from '../../domain/dates';
import { validateEmployeesForPost } from '../../employees/validation';
import { generateStaff, type SeedOptions, type SimData, type SimEmployee, type SimRecord } from './seed';

/**
 * A local simulator of the UK employee data interface, faithful to the specification where it speaks
 * and to docs/staff.md where it is silent (the same choices the client makes):
 * - GET /organisations/{id}/Employees and /Employees/Employments: showFormer (default true),
 *   dateFrom/dateTo (YYYY-MM-DD; without delta: employed during the range), delta=true (changed on or
 *   after dateFrom, up to dateTo), start/duration (offset and page size; empty accepted).
 * - GET /organisations/{id}/Employees/Accrual?employeeId=N (all records without it); non-flexible
 *   staff have the calculation fields "0".
 * - POST /organisations/{id}/Employees: the section 2 rules, upsert by EmployeeNumber.
 * - GET {prefix}/Divisions, /EmployeeSource, /Locations.
 * Errors are `{ "message": ... }` with 400/401/404. Faults can be injected per test or over
 * /__admin/faults: slow, an HTTP status, 429 with Retry-After, malformed JSON, a dropped connection,
 * no answer at all, an answer whose body stops part-way.
 */

export type FaultKind = 'status' | 'rate' | 'slow' | 'malformed' | 'shape' | 'drop' | 'hang' | 'stall';

const FAULT_KINDS: readonly FaultKind[] = ['status', 'rate', 'slow', 'malformed', 'shape', 'drop', 'hang', 'stall'];

export interface Fault {
  /**
   * What goes wrong. hang: the request is read and never answered (until the client gives up or the
   * simulator closes); stall: status 200, the headers and the start of a JSON array, then nothing.
   */
  readonly kind: FaultKind;
  /** Applies to requests whose path contains this text (default: every non-admin request). */
  readonly match?: string;
  /** How many requests it applies to (default 1; Infinity for "until cleared"). */
  times?: number;
  /** status: the HTTP status (default 500). */
  readonly status?: number;
  /** rate: the Retry-After header value (default "1"). */
  readonly retryAfter?: string;
  /** slow: delay before answering normally (default 1000 ms). */
  readonly delayMs?: number;
}

export type SimAuth =
  | { type: 'none' }
  | { type: 'bearer'; token: string }
  | { type: 'basic'; username: string; password: string }
  | { type: 'header'; name: string; value: string };

export interface SimulatorOptions extends SeedOptions {
  readonly organisationId?: number;
  /** Prefix of /Divisions, /EmployeeSource, /Locations ({organisationId} is replaced). */
  readonly referencePathPrefix?: string;
  readonly auth?: SimAuth;
  /** Name of the accrual query parameter naming the employee. */
  readonly accrualEmployeeParam?: string;
  /** Answer delta=true with 400, like a service without incremental support. */
  readonly rejectDelta?: boolean;
  /** Give at most this many records per page, whatever duration asks for (a page size of its own). */
  readonly maxPageSize?: number;
  /** Send a Date header this far from our clock, as if this PC's clock were wrong by -clockOffsetMs. */
  readonly clockOffsetMs?: number;
}

export interface LoggedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: Record<string, string>;
  readonly at: string;
  /** POST: how many elements the body held. */
  readonly elements: number | null;
}

export interface EmployeeApiSimulator {
  readonly app: express.Express;
  readonly data: SimData;
  readonly faults: Fault[];
  readonly requests: LoggedRequest[];
  readonly options: Required<Pick<SimulatorOptions, 'organisationId' | 'referencePathPrefix' | 'accrualEmployeeParam'>> & SimulatorOptions;
  today(): IsoDate;
  /** Adds a fault (see Fault). */
  fail(fault: Fault): void;
  clearFaults(): void;
  /** Changes an employee as the service would (LastModified becomes today). */
  updateEmployee(employeeId: number, patch: Record<string, unknown>): void;
  listen(port?: number, host?: string): Promise<RunningSimulator>;
}

export interface RunningSimulator {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

const MAX_LOGGED = 2000;

function error(res: Response, status: number, message: string): void {
  res.status(status).json({ message });
}

function isFormer(e: SimEmployee, today: IsoDate): boolean {
  return e.LeaveDate !== null && e.LeaveDate <= today;
}

function parseBool(value: unknown, name: string, fallback: boolean): boolean | string {
  if (value === undefined || value === '') return fallback;
  if (typeof value !== 'string') return `${name} must be true or false`;
  const v = value.toLowerCase();
  if (v === 'true') return true;
  if (v === 'false') return false;
  return `${name} must be true or false`;
}

export function createEmployeeApi(options: SimulatorOptions = {}): EmployeeApiSimulator {
  const data = generateStaff(options);
  const fixedToday = options.today ?? null;
  const today = (): IsoDate => fixedToday ?? (new Date().toISOString().slice(0, 10) as IsoDate);
  const settings = { organisationId: 1, referencePathPrefix: '', accrualEmployeeParam: 'employeeId', ...options };
  const faults: Fault[] = [];
  const requests: LoggedRequest[] = [];
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  if (options.clockOffsetMs) {
    const offset = options.clockOffsetMs;
    app.use((_req, res, next) => {
      res.setHeader('Date', new Date(Date.now() + offset).toUTCString());
      next();
    });
  }

  const sim: EmployeeApiSimulator = {
    app,
    data,
    faults,
    requests,
    options: settings,
    today,
    fail(fault) {
      faults.push({ ...fault, times: fault.times ?? 1 });
    },
    clearFaults() {
      faults.length = 0;
    },
    updateEmployee(employeeId, patch) {
      const e = data.employees.find((x) => x.EmployeeID === employeeId);
      if (!e) throw new Error(`no employee ${employeeId}`);
      Object.assign(e, patch, { LastModified: `${today()}T12:00:00` });
    },
    listen(port = 0, host = '127.0.0.1') {
      return new Promise((resolve, reject) => {
        const server = http.createServer(app);
        server.once('error', reject);
        server.listen(port, host, () => {
          const address = server.address() as AddressInfo;
          const shownHost = host.includes(':') ? `[${host}]` : host;
          resolve({
            url: `http://${shownHost}:${address.port}`,
            port: address.port,
            close: () =>
              new Promise<void>((done) => {
                server.closeAllConnections();
                server.close(() => done());
              }),
          });
        });
      });
    },
  };

  // Admin routes for manual use (`dev employee-api`): not part of the simulated interface.
  app.use('/__admin', express.json());
  app.get('/__admin/requests', (_req, res) => {
    res.json(requests);
  });
  app.delete('/__admin/requests', (_req, res) => {
    requests.length = 0;
    res.status(204).end();
  });
  app.get('/__admin/faults', (_req, res) => {
    res.json(faults);
  });
  app.post('/__admin/faults', (req, res) => {
    const list = (Array.isArray(req.body) ? req.body : [req.body]) as Fault[];
    for (const f of list) {
      if (!f || !FAULT_KINDS.includes(f.kind)) return error(res, 400, `kind must be ${FAULT_KINDS.slice(0, -1).join(', ')} or ${FAULT_KINDS.at(-1)!}`);
      sim.fail({ ...f, times: f.times === null ? Infinity : f.times });
    }
    res.status(201).json(faults);
  });
  app.delete('/__admin/faults', (_req, res) => {
    sim.clearFaults();
    res.status(204).end();
  });

  // Request log, then faults, then authentication: as a real service's edge would behave.
  app.use((req, _res, next) => {
    requests.push({
      method: req.method,
      path: req.path,
      query: Object.fromEntries(Object.entries(req.query).map(([k, v]) => [k, String(v)])),
      at: new Date().toISOString(),
      elements: null,
    });
    if (requests.length > MAX_LOGGED) requests.splice(0, requests.length - MAX_LOGGED);
    next();
  });

  app.use((req, res, next) => {
    const index = faults.findIndex((f) => (f.times ?? 1) > 0 && (f.match === undefined || req.path.includes(f.match)));
    if (index < 0) return next();
    const fault = faults[index]!;
    fault.times = (fault.times ?? 1) - 1;
    if (fault.times <= 0) faults.splice(index, 1);
    switch (fault.kind) {
      case 'slow':
        setTimeout(next, fault.delayMs ?? 1000);
        return;
      case 'status':
        return error(res, fault.status ?? 500, 'Simulated failure: An error has occurred.');
      case 'rate':
        res.setHeader('Retry-After', fault.retryAfter ?? '1');
        return error(res, 429, 'Too many requests: rate limit exceeded');
      case 'malformed':
        res.status(200).type('application/json').send('[{"EmployeeID": 1001, "FirstName": "Tru');
        return;
      case 'shape':
        res.status(200).json({ EmployeeID: 'not-a-number' });
        return;
      case 'drop':
        req.socket.destroy();
        return;
      case 'hang':
        // No timer: the connection stays open until the client closes it or close() ends it.
        return;
      case 'stall':
        res.status(200).type('application/json');
        res.write('[');
        return;
    }
  });

  app.use((req, res, next) => {
    const auth = settings.auth ?? { type: 'none' };
    let ok = true;
    if (auth.type === 'bearer') ok = req.get('authorization') === `Bearer ${auth.token}`;
    else if (auth.type === 'basic') ok = req.get('authorization') === `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
    else if (auth.type === 'header') ok = req.get(auth.name) === auth.value;
    if (!ok) return error(res, 401, 'Authorization has been denied for this request.');
    next();
  });

  const org = (req: Request, res: Response, next: NextFunction): void => {
    if (req.params.organisationId !== String(settings.organisationId)) return error(res, 404, `Organisation ${req.params.organisationId} was not found.`);
    next();
  };

  /** The shared query rules of the two listing endpoints; an error message, or the filter. */
  function listFilter(req: Request): string | ((r: { start: string | null; end: string | null; modified: string; former: boolean }) => boolean) {
    const q = req.query as Record<string, string | undefined>;
    const showFormer = parseBool(q.showFormer, 'showFormer', true);
    if (typeof showFormer === 'string') return showFormer;
    const delta = parseBool(q.delta, 'delta', false);
    if (typeof delta === 'string') return delta;
    for (const name of ['dateFrom', 'dateTo'] as const) {
      const v = q[name];
      if (v !== undefined && v !== '' && !isIsoDate(v)) return `${name} must be a date YYYY-MM-DD`;
    }
    const from = q.dateFrom || null;
    const to = q.dateTo || null;
    if (delta === true && rejectDelta()) return 'delta is not supported';
    if (delta === true && !from) return 'delta=true requires dateFrom';
    return (r) => {
      if (!showFormer && r.former) return false;
      if (delta === true) return r.modified.slice(0, 10) >= from! && (to === null || r.modified.slice(0, 10) <= to);
      if (from !== null && r.end !== null && r.end < from) return false;
      if (to !== null && r.start !== null && r.start > to) return false;
      return true;
    };
  }
  const rejectDelta = (): boolean => settings.rejectDelta === true;

  function page<T>(req: Request, res: Response, records: T[]): T[] | null {
    const q = req.query as Record<string, string | undefined>;
    const start = q.start ?? '';
    const duration = q.duration ?? '';
    if ((start !== '' && !/^\d+$/.test(start)) || (duration !== '' && !/^\d+$/.test(duration))) {
      error(res, 400, 'start and duration must be whole numbers or empty');
      return null;
    }
    const offset = start === '' ? 0 : Number(start);
    const size = Math.min(duration === '' ? Number.POSITIVE_INFINITY : Number(duration), settings.maxPageSize ?? Number.POSITIVE_INFINITY);
    return records.slice(offset, offset + size);
  }

  const orgPath = '/organisations/:organisationId/Employees';

  app.get(orgPath, org, (req, res) => {
    const filter = listFilter(req);
    if (typeof filter === 'string') return error(res, 400, filter);
    const t = today();
    const selected = data.employees.filter((e) => filter({ start: e.StartDate, end: e.LeaveDate, modified: e.LastModified, former: isFormer(e, t) }));
    const out = page(req, res, selected);
    if (out) res.json(out);
  });

  app.get(`${orgPath}/Employments`, org, (req, res) => {
    const filter = listFilter(req);
    if (typeof filter === 'string') return error(res, 400, filter);
    const t = today();
    const byId = new Map(data.employees.map((e) => [e.EmployeeID, e]));
    const selected = data.employments.filter((m) => {
      const e = byId.get(m.EmployeeID as number);
      return filter({ start: (m.StartDate as string) ?? null, end: (m.EndDate as string | null) ?? null, modified: String(m.LastModified ?? e?.LastModified ?? ''), former: e ? isFormer(e, t) : false });
    });
    const out = page(req, res, selected);
    if (out) res.json(out);
  });

  app.get(`${orgPath}/Accrual`, org, (req, res) => {
    const raw = (req.query as Record<string, string | undefined>)[settings.accrualEmployeeParam];
    const stamp = `${today()}T00:00:00`;
    if (raw === undefined || raw === '') return res.json(data.accruals.map((a) => ({ ...a, StartDateTime: stamp })));
    if (!/^\d+$/.test(raw)) return error(res, 400, `${settings.accrualEmployeeParam} must be a number`);
    res.json(data.accruals.filter((a) => a.EmployeeID === Number(raw)).map((a) => ({ ...a, StartDateTime: stamp })));
  });

  app.post(orgPath, org, express.json({ limit: '20mb', type: () => true }), (req, res) => {
    const body: unknown = req.body;
    const last = requests[requests.length - 1];
    if (last) (last as { elements: number | null }).elements = Array.isArray(body) ? body.length : null;
    const validation = validateEmployeesForPost(body);
    if (!validation.ok) {
      return res.status(400).json({
        message: 'The request is invalid.',
        errors: validation.errors.map((e) => ({ index: e.index, EmployeeNumber: e.employeeNumber, field: e.field, message: `${e.field} ${e.message}` })),
      });
    }
    const results: SimRecord[] = [];
    for (const element of validation.elements) {
      const number = element.EmployeeNumber as string;
      const existing = data.employees.find((e) => e.EmployeeNumber === number);
      if (existing) {
        Object.assign(existing, element, { EmployeeID: existing.EmployeeID, LastModified: `${today()}T12:00:00` });
        results.push({ EmployeeNumber: number, EmployeeID: existing.EmployeeID, Result: 'Updated' });
      } else {
        const id = Math.max(0, ...data.employees.map((e) => e.EmployeeID)) + 1;
        data.employees.push({ FirstName: '', LastName: '', StartDate: today(), LeaveDate: null, ...element, EmployeeID: id, EmployeeNumber: number, LastModified: `${today()}T12:00:00` } as SimEmployee);
        results.push({ EmployeeNumber: number, EmployeeID: id, Result: 'Created' });
      }
    }
    res.status(200).json(results);
  });

  const prefix = settings.referencePathPrefix.replace(/\{organisationId\}/g, String(settings.organisationId)).replace(/\/+$/, '');
  const refBase = prefix === '' ? '' : prefix.startsWith('/') ? prefix : `/${prefix}`;
  app.get(`${refBase}/Divisions`, (_req, res) => {
    res.json(data.divisions);
  });
  app.get(`${refBase}/EmployeeSource`, (_req, res) => {
    res.json(data.sources);
  });
  app.get(`${refBase}/Locations`, (_req, res) => {
    res.json(data.locations);
  });

  app.use((_req, res) => error(res, 404, 'No HTTP resource was found that matches the request URI.'));
  app.use((err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    const status = typeof (err as { status?: unknown }).status === 'number' ? (err as { status: number }).status : 500;
    error(res, status >= 400 && status < 500 ? status : 500, status === 400 ? 'The request body is not valid JSON.' : 'An error has occurred.');
  });
  return sim;
}

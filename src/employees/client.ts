import { setTimeout as delay } from 'node:timers/promises';
import type { z } from 'zod';
import type { Config } from '../config/schema';
import { redactor, silentLogger, type Logger } from '../log';
import { clockWatch } from '../clock';
import { CANCELLED, EmployeeApiError, EmployeeValidationError, serverMessageOf } from './errors';
import { isRetryableStatus, nextDelay, parseRetryAfter } from './retry';
import {
  AccrualRecordSchema,
  DivisionRecordSchema,
  EmployeeRecordSchema,
  EmployeeSourceRecordSchema,
  EmploymentRecordSchema,
  LocationRecordSchema,
  type AccrualRecord,
  type DivisionRecord,
  type EmployeeRecord,
  type EmployeeSourceRecord,
  type EmploymentRecord,
  type LocationRecord,
} from './schemas';
import { validateEmployeesForPost } from './validation';

export type EmployeesConfig = NonNullable<Config['employees']>;

/** Query of the two listing endpoints (section 4). Dates are YYYY-MM-DD. */
export interface ListQuery {
  start?: number | string | null;
  duration?: number | string | null;
  dateFrom?: string | null;
  dateTo?: string | null;
  delta?: boolean | null;
  /** Default true, as in the specification; always sent explicitly. */
  showFormer?: boolean;
}

export interface PostResult {
  readonly status: number;
  /** The answer's JSON, or its text when not JSON, or null when empty ("not stated" in the spec). */
  readonly body: unknown;
  readonly sent: number;
}

export interface ClientOptions {
  readonly log?: Logger;
  /** Injected for tests of jitter; Math.random otherwise. */
  readonly random?: () => number;
  /** Aborts every call in flight (the service's stop). */
  readonly signal?: AbortSignal;
  /**
   * Told about every attempt as it happens, so a caller can say "offline, trying again" after the
   * first failure instead of after the last retry (the status window's staff banner). Each event says
   * whether the call was for a reference list (Divisions, EmployeeSource, Locations).
   */
  readonly onAttempt?: (event: AttemptEvent) => void;
}

/**
 * One attempt of a call, as it happens: answered (a 2xx), failed (with the next attempt when one is
 * scheduled, null when this was the last), or a retry starting after its wait. `reference`: the call
 * was for Divisions, EmployeeSource or Locations.
 */
export type AttemptEvent = { readonly reference: boolean } & (
  | { readonly kind: 'answered' }
  | { readonly kind: 'failed'; readonly error: EmployeeApiError; readonly next: { readonly attempt: number; readonly of: number; readonly at: Date } | null }
  | { readonly kind: 'retrying'; readonly attempt: number; readonly of: number }
);

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
/** Bound on paging so a service that ignores start/duration cannot loop us forever. */
const MAX_PAGES = 10_000;

/**
 * A typed client for every endpoint of the UK employee data interface. Each answer is checked by a
 * zod schema that types the documented fields and keeps all others. Retries network errors,
 * timeouts, 429 and 5xx with capped exponential back-off (Retry-After honoured); every other failure
 * is an EmployeeApiError naming the endpoint, the status and the server's message.
 */
export class EmployeeClient {
  private readonly log: Logger;
  private readonly authHeaders: Record<string, string>;
  private readonly base: string;
  /** Calls waiting between attempts; retryNow() ends their waits early. */
  private readonly waiting = new Set<() => void>();

  constructor(
    readonly config: EmployeesConfig,
    private readonly options: ClientOptions = {},
  ) {
    this.log = options.log ?? silentLogger;
    this.base = config.baseUrl.replace(/\/+$/, '');
    this.authHeaders = authHeadersFor(config.auth);
  }

  private orgPath(suffix: string): string {
    return `/organisations/${encodeURIComponent(String(this.config.organisationId))}/Employees${suffix}`;
  }

  /**
   * Ends the wait of every call now waiting to try again, so its next attempt starts at once (the
   * window's "Try again now"). Returns how many calls were waiting.
   */
  retryNow(): number {
    const woken = [...this.waiting];
    this.waiting.clear();
    for (const wake of woken) wake();
    return woken.length;
  }

  /** Divisions, EmployeeSource, Locations: their prefix is "not shown"; `{organisationId}` may appear in it. */
  referencePath(name: 'Divisions' | 'EmployeeSource' | 'Locations'): string {
    const prefix = this.config.referencePathPrefix.replace(/\{organisationId\}/g, String(this.config.organisationId)).replace(/\/+$/, '');
    return `${prefix && !prefix.startsWith('/') ? '/' : ''}${prefix}/${name}`;
  }

  /** GET /organisations/{organisationId}/Employees, every page when employees.pageSize is set. */
  employees(query: ListQuery = {}): Promise<EmployeeRecord[]> {
    return this.list(this.orgPath(''), query, EmployeeRecordSchema);
  }

  /** GET /organisations/{organisationId}/Employees/Employments. */
  employments(query: ListQuery = {}): Promise<EmploymentRecord[]> {
    return this.list(this.orgPath('/Employments'), query, EmploymentRecordSchema);
  }

  /**
   * GET .../Employees/Accrual. Its query parameters are not shown: the employee is named by
   * employees.accrualEmployeeParam, and the answer is filtered again here in case the service ignores it.
   */
  async accrual(employeeId?: number): Promise<AccrualRecord[]> {
    const params = new URLSearchParams();
    if (employeeId !== undefined) params.set(this.config.accrualEmployeeParam, String(employeeId));
    const records = await this.getArray(this.orgPath('/Accrual'), params, AccrualRecordSchema);
    return employeeId === undefined ? records : records.filter((r) => r.EmployeeID === employeeId);
  }

  divisions(): Promise<DivisionRecord[]> {
    return this.getArray(this.referencePath('Divisions'), new URLSearchParams(), DivisionRecordSchema, true);
  }

  employeeSources(): Promise<EmployeeSourceRecord[]> {
    return this.getArray(this.referencePath('EmployeeSource'), new URLSearchParams(), EmployeeSourceRecordSchema, true);
  }

  locations(): Promise<LocationRecord[]> {
    return this.getArray(this.referencePath('Locations'), new URLSearchParams(), LocationRecordSchema, true);
  }

  /**
   * POST /organisations/{organisationId}/Employees. The body is validated first; when any field is
   * wrong an EmployeeValidationError lists them all and nothing is sent.
   */
  async postEmployees(employees: unknown): Promise<PostResult> {
    const validation = validateEmployeesForPost(employees);
    if (!validation.ok) throw new EmployeeValidationError(validation.errors);
    const body = JSON.stringify(validation.elements);
    const { status, text } = await this.request('POST', this.orgPath(''), new URLSearchParams(), body);
    let parsed: unknown = null;
    if (text.trim() !== '') {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    return { status, body: parsed, sent: validation.elements.length };
  }

  private async list<S extends z.ZodType>(path: string, query: ListQuery, schema: S): Promise<z.infer<S>[]> {
    const params = listParams(query);
    const pageSize = this.config.pageSize;
    const callerPages = query.start !== undefined && query.start !== null;
    if (pageSize === null || callerPages) return this.getArray(path, params, schema);
    const all: z.infer<S>[] = [];
    // Until a page comes back empty, each from where the last one ended: a service may give fewer
    // records than asked for (a page size of its own; the specification does not say), so a short
    // page is not the end. A full pull that stopped early would remove everyone after it.
    for (let page = 0; page < MAX_PAGES; page++) {
      params.set('start', String(all.length));
      params.set('duration', String(pageSize));
      const records = await this.getArray(path, params, schema);
      if (records.length === 0) return all;
      all.push(...records);
    }
    throw new EmployeeApiError('malformed', `GET ${path}`, null, `more than ${MAX_PAGES} pages: the service seems to ignore start/duration; set employees.pageSize to null`, 1);
  }

  private async getArray<S extends z.ZodType>(path: string, params: URLSearchParams, schema: S, reference = false): Promise<z.infer<S>[]> {
    const { text, endpoint, attempts } = await this.request('GET', path, params, null, reference);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw new EmployeeApiError('malformed', endpoint, 200, `not JSON (${(err as Error).message})`, attempts);
    }
    if (!Array.isArray(json)) throw new EmployeeApiError('malformed', endpoint, 200, `expected a JSON array, got ${json === null ? 'null' : typeof json}`, attempts);
    const out: z.infer<S>[] = [];
    for (let i = 0; i < json.length; i++) {
      const parsed = schema.safeParse(json[i]);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        const field = issue && issue.path.length > 0 ? issue.path.join('.') : '(record)';
        throw new EmployeeApiError('malformed', endpoint, 200, `record ${i}: ${field}: ${issue?.message ?? 'invalid'}`, attempts);
      }
      out.push(parsed.data);
    }
    return out;
  }

  /**
   * One logical call: attempts until success, a non-retryable answer, or the retries run out.
   * Each attempt has timeoutMs from sending the request to the body's last byte: a body that stops
   * coming part-way is a timeout too, and a connection dropped mid-body is a network error.
   */
  private async request(
    method: 'GET' | 'POST',
    path: string,
    params: URLSearchParams,
    body: string | null,
    reference = false,
  ): Promise<{ status: number; text: string; endpoint: string; attempts: number }> {
    const qs = params.toString();
    const endpoint = `${method} ${path}${qs ? `?${qs}` : ''}`;
    const url = `${this.base}${path}${qs ? `?${qs}` : ''}`;
    const { retries, retryBaseDelayMs, retryMaxDelayMs, timeoutMs } = this.config;
    for (let attempt = 1; ; attempt++) {
      let failure: EmployeeApiError;
      let retryAfterMs: number | null = null;
      let retryable: boolean;
      const signals = [AbortSignal.timeout(timeoutMs)];
      if (this.options.signal) signals.push(this.options.signal);
      const signal = AbortSignal.any(signals);
      try {
        const sentAt = Date.now();
        const res = await fetch(url, {
          method,
          headers: {
            accept: 'application/json',
            ...(body !== null ? { 'content-type': 'application/json' } : {}),
            ...this.authHeaders,
          },
          body,
          signal,
          redirect: 'error',
        });
        // The service's Date header tells us whether this PC's clock is right (the till's "today").
        clockWatch.observe('the employee interface', res.headers.get('date'), sentAt);
        const text = await res.text();
        if (res.ok) {
          this.tell({ reference, kind: 'answered' });
          return { status: res.status, text, endpoint, attempts: attempt };
        }
        retryAfterMs = parseRetryAfter(res.headers.get('retry-after'));
        const message = serverMessageOf(text);
        failure = new EmployeeApiError('http', endpoint, res.status, message === null ? null : redactor.redact(message), attempt);
        // A POST is retried on 5xx only when the site says it is safe (the service may have applied it).
        retryable = res.status === 429 || (isRetryableStatus(res.status) && (method === 'GET' || this.config.retryPost));
        if (res.status === 429) failure = new EmployeeApiError('rate_limited', endpoint, 429, failure.serverMessage, attempt, retryAfterMs);
      } catch (err) {
        if (this.options.signal?.aborted) throw new EmployeeApiError('network', endpoint, null, CANCELLED, attempt);
        const timedOut = (err as Error).name === 'TimeoutError' || (err as Error).name === 'AbortError';
        const reason = causeOf(err);
        failure = new EmployeeApiError(timedOut ? 'timeout' : 'network', endpoint, null, timedOut ? `no answer within ${timeoutMs} ms` : reason, attempt);
        // Connection refused: the request surely never reached the service, so even a POST may retry.
        retryable = method === 'GET' || this.config.retryPost || /ECONNREFUSED/.test(reason);
      }
      const wait = retryable ? nextDelay({ attempt, retries, baseMs: retryBaseDelayMs, capMs: retryMaxDelayMs, retryAfterMs, random: this.options.random }) : null;
      if (wait === null) {
        if (failure.failure === 'rate_limited' && retryAfterMs !== null && retryAfterMs > retryMaxDelayMs) {
          failure = new EmployeeApiError('rate_limited', endpoint, 429, failure.serverMessage, attempt, retryAfterMs);
        }
        this.tell({ reference, kind: 'failed', error: failure, next: null });
        throw failure;
      }
      this.tell({ reference, kind: 'failed', error: failure, next: { attempt: attempt + 1, of: retries + 1, at: new Date(Date.now() + wait) } });
      this.log.warn(`employee service: ${failure.message}; retrying in ${wait} ms (attempt ${attempt + 1} of ${retries + 1})`);
      await this.pause(wait, endpoint, attempt);
      this.tell({ reference, kind: 'retrying', attempt: attempt + 1, of: retries + 1 });
    }
  }

  /** The wait before the next attempt: ended early by retryNow(), cancelled by the service's stop. */
  private async pause(ms: number, endpoint: string, attempt: number): Promise<void> {
    const stop = new AbortController();
    const signal = this.options.signal ? AbortSignal.any([this.options.signal, stop.signal]) : stop.signal;
    const wake = (): void => stop.abort();
    this.waiting.add(wake);
    try {
      await delay(ms, undefined, { signal });
    } catch {
      if (this.options.signal?.aborted) throw new EmployeeApiError('network', endpoint, null, CANCELLED, attempt);
    } finally {
      this.waiting.delete(wake);
    }
  }

  private tell(event: AttemptEvent): void {
    try {
      this.options.onAttempt?.(event);
    } catch (err) {
      this.log.error('employee service: an attempt listener failed:', err);
    }
  }
}

function causeOf(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code) return `${cause.code}${cause.message && !cause.message.includes(cause.code) ? ` ${cause.message}` : ''}`;
  return redactor.redact(cause?.message ?? (err as Error).message ?? String(err));
}

function listParams(query: ListQuery): URLSearchParams {
  const params = new URLSearchParams();
  const put = (name: string, value: string | number | boolean | null | undefined): void => {
    if (value !== undefined && value !== null) params.set(name, String(value));
  };
  for (const name of ['dateFrom', 'dateTo'] as const) {
    const value = query[name];
    if (value !== undefined && value !== null && !ISO_DATE.test(value)) throw new RangeError(`${name} must be YYYY-MM-DD (got ${JSON.stringify(value)})`);
  }
  put('start', query.start);
  put('duration', query.duration);
  put('dateFrom', query.dateFrom);
  put('dateTo', query.dateTo);
  put('delta', query.delta);
  put('showFormer', query.showFormer ?? true);
  return params;
}

/** The request headers for the configured authentication; every secret is registered with the redactor. */
export function authHeadersFor(auth: EmployeesConfig['auth']): Record<string, string> {
  switch (auth.type) {
    case 'bearer':
      redactor.add(auth.token);
      return { authorization: `Bearer ${auth.token}` };
    case 'basic': {
      const encoded = Buffer.from(`${auth.username}:${auth.password}`, 'utf8').toString('base64');
      redactor.add(auth.password, encoded);
      return { authorization: `Basic ${encoded}` };
    }
    case 'header':
      redactor.add(auth.value);
      return { [auth.name]: auth.value };
    default:
      return {};
  }
}

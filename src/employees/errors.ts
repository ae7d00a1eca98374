import { AppError } from '../errors';
import { describeFieldError, type FieldError } from './validation';

export type EmployeeApiFailure =
  /** Could not connect, connection dropped, DNS... */
  | 'network'
  /** No complete answer within timeoutMs. */
  | 'timeout'
  /** The service answered with an error status. */
  | 'http'
  /** The service answered 2xx with a body that is not JSON or not the documented shape. */
  | 'malformed'
  /** 429 with a Retry-After longer than we are allowed to wait, or retries exhausted on 429. */
  | 'rate_limited';

/**
 * Everything that goes wrong talking to the employee interface, with what a manager (and support)
 * needs: which endpoint, the HTTP status, the server's own message, how many attempts were made.
 * Never carries credentials: the endpoint is a path and query, and messages pass the redactor.
 */
export class EmployeeApiError extends AppError {
  constructor(
    readonly failure: EmployeeApiFailure,
    /** e.g. "GET /organisations/42/Employees?showFormer=true" */
    readonly endpoint: string,
    readonly httpStatus: number | null,
    readonly serverMessage: string | null,
    readonly attempts: number,
    /** Milliseconds the service asked us to wait (Retry-After), when it did. */
    readonly retryAfterMs: number | null = null,
  ) {
    super(idFor(failure, httpStatus), statusFor(failure, httpStatus), messageFor(failure, endpoint, httpStatus, serverMessage, attempts, retryAfterMs), {
      failure,
      endpoint,
      httpStatus,
      serverMessage,
      attempts,
    });
    this.name = 'EmployeeApiError';
  }

  /** Worth trying again later (the CLI says "try again"; sync keeps the cache and retries next time). */
  get transient(): boolean {
    return this.failure === 'network' || this.failure === 'timeout' || this.failure === 'rate_limited' || (this.httpStatus !== null && this.httpStatus >= 500);
  }

  /** The agent stopped the call (the staff service's stop), not the service. */
  get cancelled(): boolean {
    return this.failure === 'network' && this.serverMessage === CANCELLED;
  }

  /**
   * Nothing at the service's address took the connection: refused, the name not found, no route to
   * it, or no connection made in time. True of every endpoint there, whatever its path; a timeout or a
   * connection cut off after it was made may be one endpoint's alone.
   */
  get addressUnreachable(): boolean {
    return this.failure === 'network' && this.serverMessage !== null && ADDRESS_UNREACHABLE.test(this.serverMessage);
  }
}

/** The message of a call cancelled by the staff service's stop. */
export const CANCELLED = 'cancelled: the agent is stopping';

/** System and undici codes of a connection that was never made (the network failure's message starts with its code). */
const ADDRESS_UNREACHABLE = /^(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|UND_ERR_CONNECT_TIMEOUT)\b/;

function idFor(failure: EmployeeApiFailure, status: number | null): string {
  if (failure !== 'http') return `employee_api_${failure}`;
  if (status === 401 || status === 403) return 'employee_api_auth';
  if (status === 404) return 'employee_api_not_found';
  if (status !== null && status >= 400 && status < 500) return 'employee_api_rejected';
  return 'employee_api_server_error';
}

/** As seen by our own callers: a refusal of what we sent is 422 (input), the rest is an upstream failure. */
function statusFor(failure: EmployeeApiFailure, status: number | null): number {
  if (failure === 'timeout') return 504;
  if (failure === 'rate_limited') return 503;
  if (failure === 'http' && status !== null && status >= 400 && status < 500 && status !== 401 && status !== 403 && status !== 404) return 422;
  return 502;
}

function messageFor(failure: EmployeeApiFailure, endpoint: string, status: number | null, server: string | null, attempts: number, retryAfterMs: number | null): string {
  const tries = attempts > 1 ? ` (after ${attempts} attempts)` : '';
  const said = server ? `: ${server}` : '';
  switch (failure) {
    case 'network':
      return `the employee service could not be reached for ${endpoint}${said}${tries}`;
    case 'timeout':
      return `the employee service did not answer ${endpoint} in time${tries}`;
    case 'malformed':
      return `the employee service answered ${endpoint} with data this agent cannot read${said}${tries}`;
    case 'rate_limited':
      return `the employee service is limiting requests to ${endpoint}${retryAfterMs !== null ? `; it asks to wait ${Math.ceil(retryAfterMs / 1000)} s` : ''}${said}${tries}`;
    default:
      if (status === 401 || status === 403) return `the employee service refused our credentials for ${endpoint} (HTTP ${status})${said}; check employees.auth`;
      return `the employee service answered ${endpoint} with HTTP ${status}${said}${tries}`;
  }
}

/** A POST body that breaks the documented rules: nothing was sent. */
export class EmployeeValidationError extends AppError {
  constructor(readonly fieldErrors: readonly FieldError[]) {
    super(
      'employees_invalid',
      422,
      `nothing was sent: ${fieldErrors.length} field error${fieldErrors.length === 1 ? '' : 's'}:\n${fieldErrors.map((e) => `  ${describeFieldError(e)}`).join('\n')}`,
      { fieldErrors },
    );
    this.name = 'EmployeeValidationError';
  }
}

/** Pulls a readable message out of an error body whose shape the specification does not show. */
export function serverMessageOf(body: string, max = 300): string | null {
  const text = body.trim();
  if (text === '') return null;
  let message: string | null = null;
  try {
    message = findMessage(JSON.parse(text));
  } catch {
    // Not JSON: an HTML error page says little; plain text is shown as is.
    message = /^<(!doctype|html)/i.test(text) ? null : text;
  }
  if (message === null) return null;
  const oneLine = message.replace(/\s+/g, ' ').trim();
  return oneLine.length > max ? `${oneLine.slice(0, max - 1)}…` : oneLine;
}

function findMessage(value: unknown, depth = 0): string | null {
  if (depth > 3 || value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    const parts = value.map((v) => findMessage(v, depth + 1)).filter((v): v is string => v !== null);
    return parts.length > 0 ? parts.join('; ') : null;
  }
  if (typeof value === 'object') {
    const o = value as Record<string, unknown>;
    for (const key of ['message', 'Message', 'error_description', 'detail', 'title', 'error', 'Error', 'errors', 'Errors', 'ModelState']) {
      if (key in o) {
        const found = findMessage(o[key], depth + 1);
        if (found) return found;
      }
    }
  }
  return null;
}

/** Talks to the admin API: same origin, the token cookie, and the CSRF header on every change. */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly id: string,
    message: string,
  ) {
    super(message);
  }
}

let csrf: { header: string; token: string } | null = null;
/** The person using the window (asked once per window session): sent with every change for the audit log. */
let person: string | null = null;

export function setPerson(name: string | null): void {
  person = name;
}
let onUnauthorised: (() => void) | null = null;

export function whenUnauthorised(fn: () => void): void {
  onUnauthorised = fn;
}

export interface Session {
  readonly csrfToken: string;
  readonly csrfHeader: string;
  readonly shell: 'browser' | 'electron';
}

export async function startSession(): Promise<Session> {
  const session = await get<Session>('/api/session');
  csrf = { header: session.csrfHeader, token: session.csrfToken };
  return session;
}

async function handle<T>(res: Response): Promise<T> {
  if (res.status === 401) onUnauthorised?.();
  const text = await res.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  if (!res.ok) {
    const error = (body as { error?: { id?: string; message?: string } } | null)?.error;
    throw new ApiError(res.status, error?.id ?? 'http_error', error?.message ?? `the agent answered ${res.status}`);
  }
  return body as T;
}

export async function get<T>(path: string, params: Record<string, string | number | null | undefined> = {}): Promise<T> {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined && v !== '') query.set(k, String(v));
  const qs = query.toString();
  return handle<T>(await fetch(qs ? `${path}?${qs}` : path, { credentials: 'same-origin', headers: { accept: 'application/json' } }));
}

export async function getText(path: string): Promise<string> {
  const res = await fetch(path, { credentials: 'same-origin' });
  if (!res.ok) return handle<string>(res);
  return res.text();
}

export async function send<T>(method: 'POST' | 'PUT', path: string, body: unknown, contentType = 'application/json'): Promise<T> {
  if (!csrf) throw new Error('no session yet');
  const res = await fetch(path, {
    method,
    credentials: 'same-origin',
    headers: { 'content-type': contentType, accept: 'application/json', [csrf.header]: csrf.token, ...(person ? { 'x-operator-name': encodeURIComponent(person) } : {}) },
    body: contentType === 'application/json' ? JSON.stringify(body) : (body as BodyInit),
  });
  return handle<T>(res);
}

export function errorText(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  if (err instanceof TypeError) return 'The agent cannot be reached. Is it running?';
  return err instanceof Error ? err.message : String(err);
}

/**
 * Talks to the admin API: same origin, the session in `Authorization: Session <value>` on every call,
 * and the CSRF header on every change. The session comes from the login link's one-time code, traded
 * once (POST /api/login), and lives in this tab's sessionStorage: it belongs to this origin alone
 * (scheme, host and port), where a cookie would go to every port of 127.0.0.1 (src/admin/security.ts).
 */

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

const SESSION_KEY = 'pos-sync-agent.session';
const SESSION_SCHEME = 'Session';
const SESSION_RENEWED_HEADER = 'x-pos-session';
const LOGIN_PARAM = 'login';

/** Says a person used the window since the session was last renewed (src/admin/security.ts, USED_HEADER). */
const USED_HEADER = 'x-pos-used';
let usedSinceRenewal = false;
// What a person does in the window, and not what its own polls and live updates do: only this
// renews the session, so a window left alone signs out after admin.sessionHours.
for (const type of ['pointerdown', 'keydown', 'wheel', 'touchstart']) {
  addEventListener(type, noteUse, { capture: true, passive: true });
}

/**
 * A use this close to the session's end renews it at once: the window's next request (its poll)
 * could come only after the session had ended, and the use would be lost.
 */
const RENEW_AT_ONCE_WITHIN_MS = 5 * 60_000;

function noteUse(): void {
  if (usedSinceRenewal) return;
  usedSinceRenewal = true;
  // A session value starts with its end in Unix seconds (src/admin/security.ts, mintSession).
  const ends = Number(sessionStorage.getItem(SESSION_KEY)?.split('.')[0]) * 1000;
  if (ends > 0 && ends - Date.now() < RENEW_AT_ONCE_WITHIN_MS) void get('/api/session').catch(() => undefined);
}

function authHeaders(): Record<string, string> {
  const value = sessionStorage.getItem(SESSION_KEY);
  if (!value) return {};
  return usedSinceRenewal ? { authorization: `${SESSION_SCHEME} ${value}`, [USED_HEADER]: '1' } : { authorization: `${SESSION_SCHEME} ${value}` };
}

function keepRenewed(res: Response): void {
  const renewed = res.headers.get(SESSION_RENEWED_HEADER);
  if (renewed) {
    sessionStorage.setItem(SESSION_KEY, renewed);
    usedSinceRenewal = false;
  }
}

/**
 * Where the page goes after the code is taken out of the address: the same path on this origin, and
 * nothing else (a path starting `//` would name another host). The query and hash are dropped.
 */
export function ownPath(pathname: string): string {
  return /^\/(?![/\\])/.test(pathname) ? pathname : '/';
}

/** A login link's code, if this page was opened through one: traded for a session, then removed from the address. */
async function takeLoginCode(): Promise<void> {
  const params = new URLSearchParams(location.search);
  const code = params.get(LOGIN_PARAM);
  if (code === null) return;
  // Out of the address (and the session history) first, whatever the agent answers.
  history.replaceState(null, '', ownPath(location.pathname));
  const res = await fetch('/api/login', {
    method: 'POST',
    credentials: 'omit',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ code }),
  });
  const reply = await handle<{ session: string }>(res);
  sessionStorage.setItem(SESSION_KEY, reply.session);
}

export async function startSession(): Promise<Session> {
  await takeLoginCode();
  const session = await get<Session>('/api/session');
  csrf = { header: session.csrfHeader, token: session.csrfToken };
  return session;
}

async function handle<T>(res: Response): Promise<T> {
  keepRenewed(res);
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
  return handle<T>(await fetch(qs ? `${path}?${qs}` : path, { credentials: 'omit', headers: { accept: 'application/json', ...authHeaders() } }));
}

export async function getText(path: string): Promise<string> {
  const res = await fetch(path, { credentials: 'omit', headers: authHeaders() });
  keepRenewed(res);
  if (!res.ok) return handle<string>(res);
  return res.text();
}

export async function send<T>(method: 'POST' | 'PUT', path: string, body: unknown, contentType = 'application/json'): Promise<T> {
  if (!csrf) throw new Error('no session yet');
  const res = await fetch(path, {
    method,
    credentials: 'omit',
    headers: { 'content-type': contentType, accept: 'application/json', [csrf.header]: csrf.token, ...authHeaders(), ...(person ? { 'x-operator-name': encodeURIComponent(person) } : {}) },
    body: contentType === 'application/json' ? JSON.stringify(body) : (body as BodyInit),
  });
  return handle<T>(res);
}

export function errorText(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  if (err instanceof TypeError) return 'The agent cannot be reached. Is it running?';
  return err instanceof Error ? err.message : String(err);
}

export interface EventHandlers {
  /** Something changed on the agent: refresh. */
  change(): void;
  /** The stream is up (true) or being reconnected (false). */
  live(up: boolean): void;
}

/**
 * The live stream (text/event-stream from /api/events) read through fetch, which can carry the
 * session header (EventSource cannot). Reconnects after a pause when it ends or fails; stops on 401.
 * Returns what closes it for good (a signed-out window: the agent counts each open stream).
 */
export function openEvents(handlers: EventHandlers, retryMs = 3_000): () => void {
  const abort = new AbortController();
  let retry: number | undefined;
  const connect = async (): Promise<void> => {
    try {
      const res = await fetch('/api/events', { credentials: 'omit', signal: abort.signal, headers: { accept: 'text/event-stream', ...authHeaders() } });
      keepRenewed(res);
      if (res.status === 401) {
        handlers.live(false);
        onUnauthorised?.();
        return;
      }
      if (!res.ok || !res.body) throw new Error(`events: ${res.status}`);
      handlers.live(true);
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (/^event: change$/m.test(block)) handlers.change();
        }
      }
    } catch {
      // Network error or a stream cut short: reconnect below (unless closed).
    }
    if (abort.signal.aborted) return;
    handlers.live(false);
    retry = window.setTimeout(() => void connect(), retryMs);
  };
  void connect();
  return () => {
    window.clearTimeout(retry);
    abort.abort();
  };
}

import crypto from 'node:crypto';
import { cliCommand } from '../config/invocation';
import { sameSecret } from '../http/secrets';

/**
 * The admin server's access decisions as pure functions, so each rule is tested on its own. The
 * server (server.ts) only wires them to requests.
 */

export type Decision = { ok: true } | { ok: false; status: number; id: string; message: string };

const OK: Decision = { ok: true };

/** Loopback names a browser may put in `Host` for this server. Anything else is a rebinding attempt. */
const LOOPBACK_HOSTNAMES = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * DNS rebinding defence: a page from evil.example whose name now resolves to 127.0.0.1 still sends
 * `Host: evil.example:8780`. Only loopback names with our own port are accepted.
 */
export function checkHostHeader(host: string | undefined, port: number, names: ReadonlySet<string> = LOOPBACK_HOSTNAMES): Decision {
  const refused: Decision = { ok: false, status: 421, id: 'host_not_allowed', message: names === LOOPBACK_HOSTNAMES ? 'this server answers only to a loopback Host (127.0.0.1, localhost or [::1])' : 'this server answers only to its own loopback address' };
  if (!host) return refused;
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(host.trim().toLowerCase());
  if (!match) return refused;
  const [, name, portText] = match;
  if (!name || !names.has(name)) return refused;
  // Browsers omit the port only for 80; we never listen there, so the port must be present and ours.
  if (portText === undefined || Number(portText) !== port) return refused;
  return OK;
}

/** A new per-install token: 32 random bytes, URL-safe. */
export function newToken(): string {
  return crypto.randomBytes(32).toString('base64url');
}

export { sameSecret };

export interface Credentials {
  readonly authorization: string | undefined;
  /** The window's USED_HEADER: a person used the window since its session was last renewed. */
  readonly used?: string | undefined;
}

// ---- login links and sessions ----
//
// The long-lived token (the admin-token file) never travels in a URL, so it cannot end up in the
// browser's history, its address-bar suggestions or a Referer. A login link carries a one-time code
// instead: signed with the token, valid `admin.loginLinkMinutes`, accepted once (used codes are kept
// in the data folder until they expire, so a restart does not make a used link work again). The
// window's script trades it (POST /api/login) for a session value, keeps that in the page's
// sessionStorage and sends it as `Authorization: Session <value>` on every API call.
//
// Not a cookie: a browser sends a host's cookies to every port of that host, so another account's
// server on 127.0.0.1 or localhost (another port, the same site) received the window's session with
// any request the tab made to it. sessionStorage belongs to one origin (scheme, host and port), and a
// header is sent only where the window's own script sends it.
//
// Both values are signed with the server's signing key (signingKey): the token and a random key the
// window's server makes each time it starts and keeps in memory only. While the agent is stopped,
// another account can listen on the window's port; an open tab then sends it the session (its script
// polls), and a person may open a login link there. Neither works on the agent that starts next:
// every session and unused link ends with the server that issued it (the desktop app loads a fresh
// link itself), and the same follows from rotating the token (`admin-url --rotate`).

/** The Authorization scheme of the window's session. */
export const SESSION_SCHEME = 'Session';
/** Response header carrying the renewed session value (the session slides as the window is used). */
export const SESSION_RENEWED_HEADER = 'x-pos-session';
/**
 * Request header the window's script adds once a person has used the window (a key, a click, a
 * scroll) since its session was last renewed. Only such a request renews the session: the window's
 * own polls and refreshes come on a timer whether anyone is there or not, and renewing on them would
 * keep a window left alone signed in for ever.
 */
export const USED_HEADER = 'x-pos-used';

/** The query parameter of a login link. */
export const LOGIN_PARAM = 'login';

/** A new random key for one start of the window's server, never written anywhere. */
export function newStartKey(): string {
  return crypto.randomBytes(32).toString('base64url');
}

/** What one start of the window's server signs its sessions and login codes with (see above). */
export function signingKey(token: string, startKey: string): string {
  return `${token}\n${startKey}`;
}

function mac(token: string, purpose: string, text: string): string {
  return crypto.createHmac('sha256', token).update(`pos-sync-agent admin ${purpose} v1\n${text}`).digest('base64url');
}

/** A one-time login code: `<expires (unix s)>.<nonce>.<mac>`. */
export function mintLoginCode(key: string, now: Date, minutes: number): { code: string; expiresAt: Date } {
  const expires = Math.floor(now.getTime() / 1000 + minutes * 60);
  const nonce = crypto.randomBytes(16).toString('base64url');
  return { code: `${expires}.${nonce}.${mac(key, 'login', `${expires}.${nonce}`)}`, expiresAt: new Date(expires * 1000) };
}

export type CodeCheck = { ok: true; nonce: string; expiresAt: number } | { ok: false; reason: 'invalid' | 'expired' };

export function verifyLoginCode(code: string, key: string, now: Date): CodeCheck {
  const m = /^(\d{1,12})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/.exec(code);
  if (!m) return { ok: false, reason: 'invalid' };
  const [, expires, nonce, signature] = m as unknown as [string, string, string, string];
  if (!sameSecret(signature, mac(key, 'login', `${expires}.${nonce}`))) return { ok: false, reason: 'invalid' };
  if (Number(expires) * 1000 <= now.getTime()) return { ok: false, reason: 'expired' };
  return { ok: true, nonce, expiresAt: Number(expires) * 1000 };
}

/** A session value: `<expires (unix s)>.<mac>`; renewed (sliding) as the window is used. */
export function mintSession(key: string, now: Date, hours: number): { value: string; maxAgeMs: number } {
  const expires = Math.floor(now.getTime() / 1000 + hours * 3600);
  return { value: `${expires}.${mac(key, 'session', String(expires))}`, maxAgeMs: Math.round(hours * 3_600_000) };
}

/** Seconds of life left in a session value signed with `key`, or null if it is not valid now. */
export function sessionSecondsLeft(value: string, key: string, now: Date): number | null {
  const m = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(value);
  if (!m) return null;
  const [, expires, signature] = m as unknown as [string, string, string];
  if (!sameSecret(signature, mac(key, 'session', expires))) return null;
  const left = Number(expires) - now.getTime() / 1000;
  return left > 0 ? left : null;
}

/**
 * How old a session must be before a use renews it: old enough that not every request gets a new
 * value, and, for the shortest sessions admin.sessionHours allows, young enough that a use can renew
 * them before they end.
 */
function renewAfterSeconds(sessionHours: number): number {
  return Math.min(60, sessionHours * 360);
}

/**
 * The window's `Authorization: Session <value>`, or `Authorization: Bearer <token>` (scripts). No
 * cookie counts (see above). `renew`: the session is valid, old enough (renewAfterSeconds), and the
 * window says a person used it (USED_HEADER), so the server sends a fresh value (the session slides).
 */
export function checkCredentials(credentials: Credentials, keys: { readonly token: string; readonly signing: string }, now: Date, sessionHours: number): Decision & { renew?: boolean } {
  const { token } = keys;
  const m = /^(Session|Bearer)\s+(\S+)\s*$/i.exec(credentials.authorization ?? '');
  if (!m) {
    return { ok: false, status: 401, id: 'admin_token_required', message: `open the status window through a login link (${cliCommand('admin-url')}, or the tray in the desktop app)` };
  }
  const [, scheme, value] = m as unknown as [string, string, string];
  if (scheme.toLowerCase() === SESSION_SCHEME.toLowerCase()) {
    const left = sessionSecondsLeft(value, keys.signing, now);
    if (left !== null) return { ok: true, renew: credentials.used === '1' && left < sessionHours * 3600 - renewAfterSeconds(sessionHours) };
    return { ok: false, status: 401, id: 'admin_session_expired', message: `the session has ended: open a new login link (${cliCommand('admin-url')})` };
  }
  if (sameSecret(value, token)) return OK;
  return { ok: false, status: 401, id: 'admin_token_invalid', message: 'the access token is not valid for this agent' };
}

/** The CSRF value the window sends back on changes: derived from the token, so it needs no storage. */
export function csrfTokenFor(token: string): string {
  return crypto.createHmac('sha256', token).update('pos-sync-agent admin csrf v1').digest('base64url');
}

export const CSRF_HEADER = 'x-csrf-token';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function isChange(method: string): boolean {
  return !SAFE_METHODS.has(method.toUpperCase());
}

export interface ChangeRequest {
  readonly method: string;
  readonly csrfHeader: string | undefined;
  readonly origin: string | undefined;
  readonly secFetchSite: string | undefined;
}

/**
 * Any change needs the CSRF header (a cross-site form cannot set headers, a cross-site fetch cannot
 * without a CORS preflight we never answer) and, when the browser says where it came from, our own
 * origin.
 */
export function checkChange(req: ChangeRequest, ownOrigins: readonly string[], csrfToken: string): Decision {
  if (!isChange(req.method)) return OK;
  if (req.secFetchSite !== undefined && req.secFetchSite !== 'same-origin' && req.secFetchSite !== 'none') {
    return { ok: false, status: 403, id: 'cross_site_refused', message: 'changes are accepted only from the status window itself' };
  }
  if (req.origin !== undefined && req.origin !== 'null' && !ownOrigins.includes(req.origin.toLowerCase())) {
    return { ok: false, status: 403, id: 'cross_site_refused', message: 'changes are accepted only from the status window itself' };
  }
  if (req.origin === 'null') return { ok: false, status: 403, id: 'cross_site_refused', message: 'changes are accepted only from the status window itself' };
  if (!req.csrfHeader) return { ok: false, status: 403, id: 'csrf_header_required', message: `changes need the ${CSRF_HEADER} header` };
  if (!sameSecret(req.csrfHeader, csrfToken)) return { ok: false, status: 403, id: 'csrf_header_invalid', message: `the ${CSRF_HEADER} header is not valid` };
  return OK;
}

/**
 * The names a browser may put in `Host` for the window's server bound at `boundHost` (as written in a
 * URL: `127.0.0.1`, `[::1]`, `127.83.4.201`). On the fixed loopback addresses every loopback name
 * (`localhost` resolves to either); on an address of its own (admin.newAddressEachStart) that
 * address alone: no other name reaches it.
 */
export function windowHostNames(boundHost: string = '127.0.0.1'): ReadonlySet<string> {
  return boundHost === '127.0.0.1' || boundHost === '[::1]' ? LOOPBACK_HOSTNAMES : new Set([boundHost]);
}

/**
 * Origins the window can have for a server on `port` at `boundHost` (what browsers send in
 * `Origin`). On an address of its own, only that origin: 127.0.0.1 and localhost at the same port
 * are then another server's, which another account may hold.
 */
export function ownOrigins(port: number, boundHost: string = '127.0.0.1'): string[] {
  return [...windowHostNames(boundHost)].map((name) => `http://${name}:${port}`);
}

/**
 * A loopback address for the window's server, drawn afresh at each start (admin.newAddressEachStart):
 * 127.0.0.0/8 except 127.0.0.1 and the network and broadcast forms. A browser keeps what a page stored
 * (service workers, cached files) by origin; drawn afresh, the origin of the window that starts next
 * is one no page served while the agent was stopped could have had.
 */
export function freshLoopbackAddress(randomInt: (max: number) => number = (max) => crypto.randomInt(max)): string {
  for (;;) {
    const address = `127.${randomInt(256)}.${randomInt(256)}.${1 + randomInt(254)}`;
    if (address !== '127.0.0.1') return address;
  }
}

/** Only loopback addresses may be bound: the admin API must never be reachable from the network. */
export function isLoopbackBindAddress(host: string): boolean {
  return host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** The strictest policy the window works with: our own scripts and styles only, no framing. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Headers every admin response carries. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), usb=(), serial=(), hid=()',
};

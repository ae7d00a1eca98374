import crypto from 'node:crypto';
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
export function checkHostHeader(host: string | undefined, port: number): Decision {
  const refused: Decision = { ok: false, status: 421, id: 'host_not_allowed', message: 'this server answers only to a loopback Host (127.0.0.1, localhost or [::1])' };
  if (!host) return refused;
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(host.trim().toLowerCase());
  if (!match) return refused;
  const [, name, portText] = match;
  if (!name || !LOOPBACK_HOSTNAMES.has(name)) return refused;
  // Browsers omit the port only for 80; we never listen there, so the port must be present and ours.
  if (portText === undefined || Number(portText) !== port) return refused;
  return OK;
}

/** A new per-install token: 32 random bytes, URL-safe. */
export function newToken(): string {
  return crypto.randomBytes(32).toString('base64url');
}

export { sameSecret };

export function cookieName(port: number): string {
  // Cookies are not separated by port; naming it by port keeps two agents on one PC from clashing.
  return `pos_admin_${port}`;
}

/** The cookie header's value for `name`, or null. */
export function readCookie(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) {
      const value = part.slice(eq + 1).trim();
      try {
        return decodeURIComponent(value);
      } catch {
        return null;
      }
    }
  }
  return null;
}

export interface Credentials {
  readonly cookie: string | undefined;
  readonly authorization: string | undefined;
}

/** The token may come in our cookie (the window) or as `Authorization: Bearer` (scripts). */
export function checkToken(credentials: Credentials, port: number, token: string): Decision {
  const fromCookie = readCookie(credentials.cookie, cookieName(port));
  const bearer = /^Bearer\s+(\S+)$/i.exec(credentials.authorization ?? '')?.[1] ?? null;
  const provided = fromCookie ?? bearer;
  if (provided === null) {
    return { ok: false, status: 401, id: 'admin_token_required', message: 'open the status window through the URL the agent printed (it carries the access token)' };
  }
  if (!sameSecret(provided, token)) return { ok: false, status: 401, id: 'admin_token_invalid', message: 'the access token is not valid for this agent' };
  return OK;
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

/** Origins the window can have for a server on `port` (what browsers send in `Origin`). */
export function ownOrigins(port: number): string[] {
  return [`http://127.0.0.1:${port}`, `http://localhost:${port}`, `http://[::1]:${port}`];
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

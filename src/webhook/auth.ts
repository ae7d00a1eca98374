import { charsetOf } from '../http/content-type';
import { sameSecret } from '../http/secrets';

/**
 * Pure decisions for authenticating head office's calls (spec section 5): `Origin` is always sent
 * with the service's DNS name; `Authorization: Bearer <token>` when one was set at registration.
 */

export function normaliseOrigin(value: string): string | null {
  let text = value.trim().toLowerCase();
  if (text.startsWith('https://')) text = text.slice('https://'.length);
  else if (/^[a-z][a-z0-9+.-]*:\/\//.test(text)) return null; // another scheme (http://) is not head office
  text = text.replace(/\/+$/, '');
  if (text === '' || /[\s/?#@]/.test(text)) return null;
  return text;
}

export type AuthDecision = { ok: true } | { ok: false; status: 401 | 403; id: string; message: string };

/**
 * A request a web browser made. Head office's sender is a server: it sends `Origin` as a bare DNS name
 * (spec section 5) and no `Sec-Fetch-*` headers. Browsers send `Sec-Fetch-Site` on every request they
 * make (Chromium, Firefox, Safari), and an `Origin` that is a page's (scheme://host[:port], or "null").
 * Such a request never reaches the inbox, whatever the configuration: otherwise any web page open on
 * this PC could POST a menu to the default loopback webhook with `fetch(url, { mode: 'no-cors' })`.
 */
/**
 * Fetch metadata only a browser sends. Not `Sec-Fetch-Mode` alone: Node's own fetch (undici) sends
 * `sec-fetch-mode: cors` on every request, and head office's sender may well be a Node server.
 * Browsers (Chromium, Firefox, Safari 16.4+) send `Sec-Fetch-Site` on every request, and
 * `Sec-Fetch-Dest` with it; older browsers are still caught by the page `Origin` they send on a POST.
 */
export function sentByBrowserFetch(headers: Readonly<Record<string, string | string[] | undefined>>): boolean {
  return headers['sec-fetch-site'] !== undefined || headers['sec-fetch-dest'] !== undefined || headers['sec-fetch-user'] !== undefined;
}

export function isBrowserRequest(headers: { origin?: string | undefined; secFetch: boolean }, expectedOrigin: string | null): boolean {
  if (headers.secFetch) return true;
  if (headers.origin === undefined) return false;
  const origin = headers.origin.trim().toLowerCase();
  if (origin === 'null') return true;
  if (!/^[a-z][a-z0-9+.-]*:\/\//.test(origin)) return false;
  // A page's origin, unless it is exactly the configured menu service written as https://host (a form
  // this agent has always accepted for head office); a browser would still have sent Sec-Fetch-*.
  return expectedOrigin === null || normaliseOrigin(origin) === null || normaliseOrigin(origin) !== normaliseOrigin(expectedOrigin);
}

export function checkCaller(
  headers: { origin?: string | undefined; authorization?: string | undefined; secFetch?: boolean },
  expected: { expectedOrigin: string | null; bearerToken: string | null },
): AuthDecision {
  if (isBrowserRequest({ origin: headers.origin, secFetch: headers.secFetch ?? false }, expected.expectedOrigin)) {
    return { ok: false, status: 403, id: 'browser_request', message: 'this endpoint takes calls from the menu service, not from a web browser' };
  }
  if (expected.expectedOrigin !== null) {
    const want = normaliseOrigin(expected.expectedOrigin);
    const got = headers.origin === undefined ? null : normaliseOrigin(headers.origin);
    if (got === null || got !== want) {
      return { ok: false, status: 403, id: 'origin_not_allowed', message: 'the Origin header does not name the configured menu service' };
    }
  }
  if (expected.bearerToken !== null) {
    const header = headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) return { ok: false, status: 401, id: 'missing_bearer_token', message: 'an Authorization: Bearer token is required' };
    if (!sameSecret(match[1] as string, expected.bearerToken)) {
      return { ok: false, status: 401, id: 'invalid_bearer_token', message: 'the bearer token is not valid' };
    }
  }
  return { ok: true };
}

/** Content types we take as JSON: application/json, anything +json, and none at all. */
/**
 * The charset a Content-Type declares when it is not UTF-8, else null. JSON between systems is UTF-8
 * (RFC 8259, section 8.1); a body declared as another would be read as UTF-8 all the same: refused
 * when it is not valid UTF-8, silently misread when its bytes happen to be (Latin-1 "Ã©" as "é").
 */
export function otherCharset(contentType: string | undefined): string | null {
  const charset = charsetOf(contentType);
  if (charset === undefined) return null;
  return charset === 'utf-8' || charset === 'utf8' ? null : charset;
}

export function isJsonContentType(contentType: string | undefined): boolean {
  if (contentType === undefined || contentType.trim() === '') return true;
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || /^application\/[a-z0-9.+-]*\+json$/.test(type) || type === 'text/json';
}

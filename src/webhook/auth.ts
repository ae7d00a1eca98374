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

export function checkCaller(
  headers: { origin?: string | undefined; authorization?: string | undefined },
  expected: { expectedOrigin: string | null; bearerToken: string | null },
): AuthDecision {
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
export function isJsonContentType(contentType: string | undefined): boolean {
  if (contentType === undefined || contentType.trim() === '') return true;
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || /^application\/[a-z0-9.+-]*\+json$/.test(type) || type === 'text/json';
}

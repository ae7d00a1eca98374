/**
 * The status window's browser session, as pure decisions (no `electron` import; harden.ts wires them
 * to the session's webRequest events and main.ts clears the session before each load).
 *
 * Why: while the agent is stopped, another OS account can listen on the window's port. A page it
 * serves there could register a service worker or answer `/app.js` with a year-long cache; the next
 * login link opened in the same session would then run the other account's code on the window's
 * origin, which trades the one-time code for a session. So the window has a session of its own that
 * lives in memory only (nothing survives a restart of the app), that is cleared before every load, in
 * which no service worker script is ever fetched, nothing from the window's origin is cached, and
 * requests go to the window's current origin only (the origin of the login link it loaded last).
 */

/** The window's own session: no `persist:` prefix, so Electron keeps it in memory only. */
export const WINDOW_PARTITION = 'pos-sync-status-window';

/** Everything a page can leave behind in its origin's storage, cleared before every load of the window. */
export const CLEARED_STORAGES = ['serviceworkers', 'cachestorage', 'cookies', 'localstorage', 'indexdb', 'filesystem', 'websql'] as const;

/** Appended to every response from the window's origin: a second policy can only restrict the page's own. */
export const NO_WORKERS_POLICY = "worker-src 'none'";

type Headers = Readonly<Record<string, string | readonly string[]>>;

function httpOriginOf(url: string): { scheme: string; origin: string } | null {
  try {
    const u = new URL(url);
    return { scheme: u.protocol, origin: u.origin };
  } catch {
    return null;
  }
}

function headerNamed(headers: Headers, name: string): string | undefined {
  return Object.keys(headers).find((key) => key.toLowerCase() === name);
}

const NETWORK_SCHEMES = new Set(['http:', 'https:', 'ws:', 'wss:']);

export type RequestDecision = { readonly cancel: false } | { readonly cancel: true; readonly why: 'service-worker' | 'other-origin' | 'no-origin' };

/**
 * Before a request of the window's session leaves: refused if it fetches a service worker's script
 * (the browser marks those with a `Service-Worker: script` header; any value of it, in any case, is
 * refused), or if it goes over the network anywhere but the window's current origin (`windowOrigin`:
 * the origin of the login link loaded last; null while the window shows its local page, when the
 * agent is not running). Other schemes (data:, devtools:) are left to the navigation policy.
 */
export function requestDecision(url: string, requestHeaders: Headers, windowOrigin: string | null): RequestDecision {
  if (headerNamed(requestHeaders, 'service-worker') !== undefined) return { cancel: true, why: 'service-worker' };
  const target = httpOriginOf(url);
  if (target === null) return { cancel: true, why: 'other-origin' };
  if (!NETWORK_SCHEMES.has(target.scheme)) return { cancel: false };
  if (windowOrigin === null) return { cancel: true, why: 'no-origin' };
  return target.origin === windowOrigin ? { cancel: false } : { cancel: true, why: 'other-origin' };
}

/**
 * The response headers the window's session uses: for a response from the window's current origin,
 * `Cache-Control: no-store` in place of whatever the server said (and no `Expires` or `Pragma`), and a
 * policy without workers beside the server's own; anything else is left as it came (null: unchanged).
 */
export function responseHeadersDecision(url: string, responseHeaders: Headers | undefined, windowOrigin: string | null): Record<string, string[]> | null {
  if (windowOrigin === null || httpOriginOf(url)?.origin !== windowOrigin) return null;
  const out: Record<string, string[]> = {};
  let policyKey: string | null = null;
  for (const [key, value] of Object.entries(responseHeaders ?? {})) {
    const lower = key.toLowerCase();
    if (lower === 'cache-control' || lower === 'expires' || lower === 'pragma') continue;
    if (lower === 'content-security-policy') policyKey = key;
    out[key] = typeof value === 'string' ? [value] : [...value];
  }
  out['Cache-Control'] = ['no-store'];
  if (policyKey === null) out['Content-Security-Policy'] = [NO_WORKERS_POLICY];
  else out[policyKey] = [...out[policyKey]!, NO_WORKERS_POLICY];
  return out;
}

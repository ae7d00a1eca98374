import { app, session, type Session, type WebContents } from 'electron';
import type { Logger } from '../log';
import { isAllowedNavigation, permissionDecision, windowOpenDecision } from './policy';
import { CLEARED_STORAGES, WINDOW_PARTITION, requestDecision, responseHeadersDecision } from './window-session';

/**
 * Applies the security policy to every web contents the app creates: no new windows, no navigation
 * away from the admin origin, no webviews, no permissions (except clipboard write from our origin).
 * Call before the first window; `adminOrigin()` is read at decision time: it is the origin of the login
 * link the window loaded last (the agent binds a new address at each start), null while it shows its
 * local page. The default session gets the same permission policy; the window uses its own
 * (windowSession below).
 */
export function hardenApp(adminOrigin: () => string | null, log: Logger): void {
  app.on('web-contents-created', (_event, contents: WebContents) => {
    contents.setWindowOpenHandler(({ url }) => {
      log.warn(`[shell] refused to open a new window for ${safeUrl(url)}`);
      return windowOpenDecision(url);
    });
    const guard = (event: { preventDefault(): void }, url: string): void => {
      const origin = adminOrigin();
      if (origin !== null && isAllowedNavigation(url, origin)) return;
      event.preventDefault();
      log.warn(`[shell] refused navigation to ${safeUrl(url)}`);
    };
    contents.on('will-navigate', guard);
    contents.on('will-redirect', guard);
    contents.on('will-frame-navigate', (event) => {
      if (!event.isMainFrame) {
        const origin = adminOrigin();
        if (origin === null || !isAllowedNavigation(event.url, origin)) event.preventDefault();
      }
    });
    contents.on('will-attach-webview', (event) => {
      event.preventDefault();
      log.warn('[shell] refused to attach a webview');
    });
  });
  hardenSession(session.defaultSession, adminOrigin, log);
}

function hardenSession(ses: Session, adminOrigin: () => string | null, log: Logger): void {
  ses.setPermissionRequestHandler((contents, permission, callback) => {
    const origin = adminOrigin();
    const allowed = origin !== null && permissionDecision(permission, contents.getURL(), origin);
    if (!allowed) log.info(`[shell] refused permission ${permission}`);
    callback(allowed);
  });
  ses.setPermissionCheckHandler((_contents, permission, requestingOrigin) => {
    const origin = adminOrigin();
    return origin !== null && permissionDecision(permission, requestingOrigin, origin);
  });
  ses.setDevicePermissionHandler(() => false);
  // Downloads are not part of the window; refuse them rather than writing files where the page says.
  ses.on('will-download', (event) => event.preventDefault());
}

let windowSessionMade: Session | null = null;

/**
 * The status window's session (window-session.ts): in memory only (no `persist:` partition, no HTTP
 * cache), with the app's permission policy; no service worker script is fetched, requests go to the
 * window's current origin only, and its responses are not cached and may start no worker. Made once,
 * after the app is ready.
 */
export function windowSession(adminOrigin: () => string | null, log: Logger): Session {
  if (windowSessionMade) return windowSessionMade;
  const ses = session.fromPartition(WINDOW_PARTITION, { cache: false });
  hardenSession(ses, adminOrigin, log);
  ses.webRequest.onBeforeSendHeaders((details, callback) => {
    const decision = requestDecision(details.url, details.requestHeaders, adminOrigin());
    if (decision.cancel) log.warn(`[shell] refused a request of the status window (${decision.why}): ${safeUrl(details.url)}`);
    // The headers are passed back as they came: some Electron versions sent none when they were left out.
    callback(decision.cancel ? { cancel: true } : { requestHeaders: details.requestHeaders });
  });
  ses.webRequest.onHeadersReceived((details, callback) => {
    const responseHeaders = responseHeadersDecision(details.url, details.responseHeaders, adminOrigin());
    callback(responseHeaders === null ? {} : { responseHeaders });
  });
  // Should a service worker still get registered, it is removed at once.
  ses.serviceWorkers.on('registration-completed', (_event, details) => {
    log.warn(`[shell] removed a service worker the status window registered (${safeUrl(details.scope)})`);
    void ses.clearStorageData({ storages: ['serviceworkers'] }).catch((err: unknown) => log.error(`[shell] removing a service worker: ${String(err)}`));
  });
  windowSessionMade = ses;
  return ses;
}

/** Before every load of the window: nothing a page stored earlier (service workers, caches, storage) is left. */
export async function clearWindowSession(ses: Session): Promise<void> {
  await ses.clearStorageData({ storages: [...CLEARED_STORAGES] });
  await ses.clearCache();
}

/** A URL for the log without its query (the login URL carries the token). */
export function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return '(unparseable URL)';
  }
}

import { app, session, type WebContents } from 'electron';
import type { Logger } from '../log';
import { isAllowedNavigation, permissionDecision, windowOpenDecision } from './policy';

/**
 * Applies the security policy to every web contents the app creates: no new windows, no navigation
 * away from the admin origin, no webviews, no permissions (except clipboard write from our origin).
 * Call before the first window; `adminOrigin()` is read at decision time (the port is known late).
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
  const ses = session.defaultSession;
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

/** A URL for the log without its query (the login URL carries the token). */
export function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return '(unparseable URL)';
  }
}

import { Router, type Response } from 'express';
import { cliCommand } from '../../config/invocation';
import { AppError } from '../../errors';
import {
  CSRF_HEADER,
  SECURITY_HEADERS,
  LOGIN_PARAM,
  checkChange,
  checkCredentials,
  checkHostHeader,
  cookieName,
  csrfTokenFor,
  mintSession,
  ownOrigins,
  verifyLoginCode,
  type Decision,
} from '../security';

/**
 * What every request passes before any area's routes: the security headers and the Host check, a
 * login link's one-time code traded for a session cookie, the token or session, and (for changes)
 * the CSRF check. The decisions themselves are in security.ts.
 */

function refuse(decision: Decision): never {
  if (decision.ok) throw new Error('refuse() called with an accepting decision');
  throw new AppError(decision.id, decision.status, decision.message);
}

export function accessRoutes(options: { readonly port: () => number; readonly token: () => string; readonly sessionHours: number; readonly onLogin?: () => void }): Router {
  const { port, sessionHours } = options;
  const currentToken = options.token;
  /** Login codes already traded for a session (each works once), until they expire anyway. */
  const usedCodes = new Map<string, number>();
  const router = Router();

  router.use((req, res, next) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
    res.setHeader('Cache-Control', 'no-store');
    const host = checkHostHeader(req.headers.host, port());
    if (!host.ok) {
      // Plain text on purpose: nothing from this response may be useful to a rebinding page.
      res.status(host.status).type('text/plain').send(`${host.message}\n`);
      return;
    }
    next();
  });

  // Trade a login link's one-time code for a session cookie, then load the same page without it:
  // the address bar, the back button and a bookmark never hold a usable credential.
  const setSession = (res: Response): void => {
    const session = mintSession(currentToken(), new Date(), sessionHours);
    res.cookie(cookieName(port()), session.value, { httpOnly: true, sameSite: 'strict', path: '/', maxAge: session.maxAgeMs });
  };
  router.use((req, res, next) => {
    const offered = req.query[LOGIN_PARAM];
    if (req.method !== 'GET' || typeof offered !== 'string') {
      next();
      return;
    }
    const now = new Date();
    for (const [nonce, expires] of usedCodes) if (expires <= now.getTime()) usedCodes.delete(nonce);
    const check = verifyLoginCode(offered, currentToken(), now);
    const used = check.ok && usedCodes.has(check.nonce);
    if (!check.ok || used) {
      const why = used ? 'This login link has already been used.' : check.ok ? '' : check.reason === 'expired' ? 'This login link has expired.' : 'This link is not valid for this agent.';
      res.status(401).type('text/plain').send(`${why} Run: ${cliCommand('admin-url')} (or open the window from the tray) for a new one.\n`);
      return;
    }
    usedCodes.set(check.nonce, check.expiresAt);
    setSession(res);
    options.onLogin?.();
    res.redirect(303, req.path);
  });

  router.use((req, res, next) => {
    const decision = checkCredentials({ cookie: req.headers.cookie, authorization: req.headers.authorization }, port(), currentToken(), new Date(), sessionHours);
    if (decision.ok) {
      // Sliding session: each use of the window extends it to admin.sessionHours from now.
      if (decision.renew) setSession(res);
      next();
      return;
    }
    if (req.path.startsWith('/api/')) {
      res.status(decision.status).json({ error: { id: decision.id, message: decision.message } });
      return;
    }
    res
      .status(decision.status)
      .type('text/plain')
      .send(`The status window needs its access link. Open the login link the agent printed when it started (${cliCommand('serve')}), or run: ${cliCommand('admin-url')}\n`);
  });

  router.use((req, _res, next) => {
    const decision = checkChange(
      {
        method: req.method,
        csrfHeader: req.get(CSRF_HEADER),
        origin: req.get('origin'),
        secFetchSite: req.get('sec-fetch-site'),
      },
      ownOrigins(port()),
      csrfTokenFor(currentToken()),
    );
    if (!decision.ok) refuse(decision);
    next();
  });
  return router;
}

import type http from 'node:http';
import Router from 'router';
import { cliCommand } from '../../config/invocation';
import { AppError } from '../../errors';
import { bodyOf, jsonBody } from '../../http/body';
import { sendJson } from '../../http/errors';
import { sendText } from '../../http/reply';
import { header } from '../../http/request';
import {
  CSRF_HEADER,
  SECURITY_HEADERS,
  SESSION_RENEWED_HEADER,
  USED_HEADER,
  checkChange,
  checkCredentials,
  checkHostHeader,
  windowHostNames,
  csrfTokenFor,
  mintSession,
  ownOrigins,
  verifyLoginCode,
  type Decision,
} from '../security';
import { UsedLoginCodes } from '../used-codes';

/**
 * What every request passes before any area's routes: the security headers and the Host check; a
 * login link's one-time code traded for a session (POST /api/login); the session or token on every
 * other API call; and (for changes) the CSRF check. The decisions themselves are in security.ts.
 *
 * The window's files (index.html, app.js, app.css) hold no data and are served without a session: a
 * browser's navigation cannot carry the Authorization header the session travels in.
 */

function refuse(decision: Decision): never {
  if (decision.ok) throw new Error('refuse() called with an accepting decision');
  throw new AppError(decision.id, decision.status, decision.message);
}

/**
 * First for every request to a listener of the window's server (the window's own, and the front door
 * at 127.0.0.1): the security headers, no caching, and the Host check (DNS rebinding) against where
 * that listener is bound; a refused Host gets 421 in plain text.
 */
export function hostGate(address: () => { readonly host: string; readonly port: number }): (req: http.IncomingMessage, res: http.ServerResponse, next: () => void) => void {
  return (req, res, next) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
    res.setHeader('Cache-Control', 'no-store');
    const bound = address();
    const host = checkHostHeader(req.headers.host, bound.port, windowHostNames(bound.host));
    if (!host.ok) {
      // Plain text on purpose: nothing from this response may be useful to a rebinding page.
      sendText(res, host.status, 'text/plain', `${host.message}\n`);
      return;
    }
    next();
  };
}

export function accessRoutes(options: {
  /** Where the server listens (known after listen): its port, and its host as a URL writes it. */
  readonly address: () => { readonly host: string; readonly port: number };
  readonly token: () => string;
  /** What this start of the server signs sessions and login codes with (security.ts, signingKey). */
  readonly signingKey: () => string;
  readonly sessionHours: number;
  readonly usedCodesFile: string;
  readonly onLogin?: () => void;
}): Router.Router {
  const { address, sessionHours, signingKey } = options;
  const currentToken = options.token;
  const usedCodes = new UsedLoginCodes(options.usedCodesFile);
  const router = Router();

  router.use(hostGate(address));

  // The window's script trades the login link's one-time code for a session value it keeps in the
  // page's sessionStorage (security.ts). Only from the window's own origin, like every change.
  router.post('/api/login', jsonBody({ limit: 1024, decompress: false }), (req, res) => {
    const bound = address();
    const origin = checkChange({ method: 'POST', csrfHeader: 'login', origin: header(req, 'origin'), secFetchSite: header(req, 'sec-fetch-site') }, ownOrigins(bound.port, bound.host), 'login');
    if (!origin.ok) refuse(origin);
    const code = (bodyOf(req) as { code?: unknown } | undefined)?.code;
    if (typeof code !== 'string') throw new AppError('login_code_required', 400, 'send {"code": "<the login link\'s code>"}');
    const now = new Date();
    const check = verifyLoginCode(code, signingKey(), now);
    const fresh = check.ok && usedCodes.use(check.nonce, check.expiresAt, now.getTime());
    if (!check.ok || !fresh) {
      const why = check.ok ? 'This login link has already been used.' : check.reason === 'expired' ? 'This login link has expired.' : 'This login link is not valid for this agent (a link ends when the agent restarts).';
      throw new AppError(check.ok ? 'login_code_used' : `login_code_${check.reason}`, 401, `${why} Run: ${cliCommand('admin-url')} (or open the window from the tray) for a new one.`);
    }
    const session = mintSession(signingKey(), now, sessionHours);
    options.onLogin?.();
    sendJson(res, 200, { session: session.value, expiresInMs: session.maxAgeMs });
  });

  router.use('/api', (req, res, next) => {
    const decision = checkCredentials({ authorization: req.headers.authorization, used: header(req, USED_HEADER) }, { token: currentToken(), signing: signingKey() }, new Date(), sessionHours);
    if (decision.ok) {
      // Sliding session: each use of the window by a person extends it to admin.sessionHours from now.
      if (decision.renew) res.setHeader(SESSION_RENEWED_HEADER, mintSession(signingKey(), new Date(), sessionHours).value);
      next();
      return;
    }
    sendJson(res, decision.status, { error: { id: decision.id, message: decision.message } });
  });

  router.use((req, _res, next) => {
    const bound = address();
    const decision = checkChange(
      {
        // Node always sets it on a server's request; '' would count as a change, so checked like one.
        method: req.method ?? '',
        csrfHeader: header(req, CSRF_HEADER),
        origin: header(req, 'origin'),
        secFetchSite: header(req, 'sec-fetch-site'),
      },
      ownOrigins(bound.port, bound.host),
      csrfTokenFor(currentToken()),
    );
    if (!decision.ok) refuse(decision);
    next();
  });
  return router;
}

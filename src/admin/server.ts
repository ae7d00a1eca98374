import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import Router from 'router';
import { AppError } from '../errors';
import { errorMiddleware, notFound, sendJson } from '../http/errors';
import { requestListener } from '../http/listener';
import { staticFiles } from '../http/static-files';
import { tokenReader, type AdminDeps } from './deps';
import { accessRoutes, hostGate } from './routes/access';
import { changesRoutes } from './routes/changes';
import { jsonBody, windowActor, windowActorForLog } from './routes/common';
import { auditRoutes } from './routes/audit';
import { audit } from '../store/audit';
import { eventsRoutes } from './routes/events';
import { metricsRoutes } from './routes/metrics';
import { panelsRoutes } from './routes/panels';
import { secretsRoutes } from './routes/secrets';
import { settingsRoutes } from './routes/settings';
import { staffRoutes } from './routes/staff';
import { statusRoutes } from './routes/status';
import { tillRoutes } from './routes/till';
import { updatesRoutes } from './routes/updates';
import { webhookTokenRoutes } from './routes/webhook-token';
import { freshLoopbackAddress, isLoopbackBindAddress, LOGIN_PARAM, mintLoginCode, newStartKey, signingKey } from './security';
import { sendText } from '../http/reply';
import { UsedLoginCodes } from './used-codes';

/** The renderer's build output; from src/admin (tsx) or dist/src/admin (compiled, also inside app.asar). */
export function defaultRendererDir(): string {
  const candidates = [path.resolve(__dirname, '..', '..', 'renderer', 'dist'), path.resolve(__dirname, '..', '..', '..', 'renderer', 'dist')];
  return candidates.find((c) => fs.existsSync(path.join(c, 'index.html'))) ?? candidates[0]!;
}

/**
 * The status window's server: static files from renderer/dist and a small JSON API, behind the Host
 * check, the token and (for changes) the CSRF check (routes/access.ts). Each area's routes are a
 * router of their own in routes/; this only puts them in order. `address()` is where the server
 * listens (known after listen).
 *
 * On `router` (express's own router) without express, which the agent's main thread need not load
 * (docs/performance.md): no X-Powered-By, no ETag; query strings are read flat (http/request.ts), so
 * `a[b]=c` is no nested object; bodies are read by http/body.ts, files served by http/static-files.ts.
 */
export function createAdminApp(
  deps: AdminDeps,
  address: () => WindowAddress,
): { app: (req: http.IncomingMessage, res: http.ServerResponse) => void; closeEvents: () => void; signingKey: () => string } {
  const { agent, log } = deps;
  const currentToken = tokenReader(deps.token);
  // Sessions and login codes die with this server (security.ts): its key is made here, kept nowhere else.
  const startKey = newStartKey();
  const currentSigningKey = (): string => signingKey(currentToken(), startKey);
  const app = Router();

  // The scraper's own credential, checked before (and instead of) the window's session.
  if (deps.metrics) app.use(metricsRoutes(deps.metrics, address));
  // A sign-in is audited (Activity); the person's name is asked by the window afterwards.
  const onLogin = (): void => {
    try {
      audit(agent.core.agentDb, windowActorForLog(), 'login');
    } catch (err) {
      log.error('audit of a sign-in:', err);
    }
  };
  app.use(accessRoutes({ address, token: currentToken, signingKey: currentSigningKey, sessionHours: agent.config.admin.sessionHours, usedCodesFile: UsedLoginCodes.fileIn(agent.config.dataDir), onLogin }));
  app.use(statusRoutes(deps, currentToken));
  app.use(tillRoutes(agent));
  app.use(updatesRoutes(deps));
  app.use(settingsRoutes(deps));
  app.use(webhookTokenRoutes(agent, log));
  app.use(panelsRoutes(deps));
  app.use('/api/staff', staffRoutes(agent, log));
  app.use('/api/changes', changesRoutes(agent));
  if (deps.secrets) app.use('/api/secrets', jsonBody, secretsRoutes(deps.secrets, log, windowActor, (who, action, details) => audit(agent.core.agentDb, who, action, details)));
  app.use(auditRoutes(agent));
  const events = eventsRoutes(deps);
  app.use(events.router);

  app.use('/api', notFound);

  // The window's files: index.html for `/`, no folder listing, no dotfiles (http/static-files.ts).
  app.use(staticFiles(deps.rendererDir, { headers: (res) => res.setHeader('Cache-Control', 'no-store') }));
  app.use(notFound);
  const fail = errorMiddleware(log);
  app.use(fail);
  return { app: requestListener(app, fail), closeEvents: events.close, signingKey: currentSigningKey };
}

/** Where the window's server listens: its host as a URL writes it (`127.0.0.1`, `[::1]`, `127.83.4.201`) and port. */
export interface WindowAddress {
  readonly host: string;
  readonly port: number;
}

/** How many fresh addresses are tried when one is taken, before the start fails as a busy port. */
const FRESH_ADDRESS_TRIES = 5;

/**
 * What listens at admin.host and admin.port (127.0.0.1) while the window has an address of its own
 * (admin.newAddressEachStart): GET /metrics for a scraper configured with the fixed address, and for
 * anything else a page without script saying how the window opens. Holding the address keeps another
 * program off it while the agent runs; every answer asks the browser to drop what it keeps for this
 * origin (`Clear-Site-Data`), where a page served while the agent was stopped may have left a
 * service worker or cached files. No session, login code or window API is served here.
 */
export function createFrontDoorApp(deps: Pick<AdminDeps, 'metrics' | 'log'>, address: () => WindowAddress): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  const app = Router();
  if (deps.metrics) app.use(metricsRoutes(deps.metrics, address));
  app.use((_req, res, next) => {
    res.setHeader('Clear-Site-Data', '"cache", "storage"');
    next();
  });
  app.use(hostGate(address));
  app.use((req, res) => {
    if ((req.method === 'GET' || req.method === 'HEAD') && (req.url === '/' || req.url?.startsWith('/?'))) {
      res.setHeader('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
      sendText(res, 200, 'text/html; charset=utf-8', FRONT_DOOR_PAGE);
      return;
    }
    sendJson(res, 404, { error: { id: 'not_found', message: 'the status window is not at this address: open it with a login link (pos-sync-agent admin-url)' } });
  });
  const fail = errorMiddleware(deps.log);
  app.use(fail);
  return requestListener(app, fail);
}

const FRONT_DOOR_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>POS Sync Agent</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40em; margin: 3em auto; line-height: 1.5">
<h1>The status window has moved to a new address</h1>
<p>The agent gives its status window a new address each time it starts. Open it from the desktop app or the tray, or with a one-time login link:</p>
<pre>pos-sync-agent admin-url</pre>
<p>Bookmarks of an earlier address, and tabs left open from before the agent last started, no longer reach it.</p>
</body></html>
`;

export interface RunningAdminServer {
  readonly server: http.Server;
  /** http://HOST:PORT/ — without the token; HOST is a fresh 127.x.y.z with admin.newAddressEachStart. */
  readonly url: string;
  /**
   * A new login link (a one-time code, valid admin.loginLinkMinutes) each time it is read: print it
   * or open it, never log it.
   */
  readonly loginUrl: string;
  /** The same as `loginUrl`, with the moment the link stops working. */
  loginLink(): { url: string; expiresAt: Date };
  close(): Promise<void>;
}

function sameListener(a: { host: string; port: number }, b: { host: string; port: number }): boolean {
  if (a.port !== b.port) return false;
  const wildcard = (h: string): boolean => h === '0.0.0.0' || h === '::' || h === '';
  return a.host === b.host || wildcard(a.host) || wildcard(b.host) || (a.host === 'localhost' && isLoopbackBindAddress(b.host)) || (b.host === 'localhost' && isLoopbackBindAddress(a.host));
}

/**
 * Starts the window's server on `listen`. With `fresh` (admin.newAddressEachStart, on 127.0.0.1) it
 * listens on a loopback address drawn afresh (freshLoopbackAddress), so the window's origin is a new
 * one at every start; where the system has no such address (EADDRNOTAVAIL) it says so and listens
 * on `listen.host` as configured.
 */
export async function startAdminServer(deps: AdminDeps, listen: { host: string; port: number; fresh?: boolean }): Promise<RunningAdminServer> {
  if (!isLoopbackBindAddress(listen.host)) {
    throw new AppError('admin_bind_refused', 500, `the admin server binds only to a loopback address (127.0.0.1 or ::1), not ${listen.host}`);
  }
  const webhook = deps.agent.config.webhook;
  const webhookPort = deps.agent.webhook ? Number(new URL(deps.agent.webhook.url).port) : webhook.port;
  if (listen.port !== 0 && sameListener(listen, { host: webhook.host, port: webhookPort })) {
    throw new AppError(
      'admin_port_conflict',
      500,
      `admin.port ${listen.port} is the webhook's port: the status window must never share the webhook's listener (a tunnel makes webhook traffic arrive from loopback)`,
    );
  }
  if (!fs.existsSync(path.join(deps.rendererDir, 'index.html'))) {
    throw new AppError('renderer_missing', 500, `the status window is not built (${deps.rendererDir}/index.html is missing): run npm run build:renderer`);
  }
  let bound: WindowAddress = { host: listen.host, port: 0 };
  const { app, closeEvents, signingKey: currentSigningKey } = createAdminApp(deps, () => bound);
  const { headersTimeoutMs, loginLinkMinutes } = deps.agent.config.admin;
  // Node enforces these timeouts only when it checks its connections (by default far less often than
  // the timeout), so a slow client stayed well past it: check at a quarter of the timeout, at most
  // every second.
  const server = http.createServer({ connectionsCheckingInterval: Math.max(100, Math.min(1_000, headersTimeoutMs / 4)) }, app);
  server.headersTimeout = headersTimeoutMs;
  server.requestTimeout = Math.max(120_000, headersTimeoutMs);
  server.maxHeadersCount = 100;
  const listenOn = (host: string, port: number): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  let frontDoor: http.Server | null = null;
  if (listen.fresh === true && listen.host === '127.0.0.1') {
    // The fixed address first (it fixes the port when admin.port is 0), then the window's own.
    let frontBound: WindowAddress = { host: listen.host, port: listen.port };
    frontDoor = http.createServer({ connectionsCheckingInterval: Math.max(100, Math.min(1_000, headersTimeoutMs / 4)) }, createFrontDoorApp(deps, () => frontBound));
    frontDoor.headersTimeout = headersTimeoutMs;
    frontDoor.requestTimeout = Math.max(120_000, headersTimeoutMs);
    frontDoor.maxHeadersCount = 100;
    const door = frontDoor;
    await new Promise<void>((resolve, reject) => {
      door.once('error', reject);
      door.listen(listen.port, listen.host, () => {
        door.off('error', reject);
        resolve();
      });
    });
    frontBound = { host: listen.host, port: (door.address() as AddressInfo).port };
    try {
      for (let tries = 1; ; tries++) {
        try {
          await listenOn(freshLoopbackAddress(), frontBound.port);
          break;
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code;
          if (code === 'EADDRNOTAVAIL') {
            // The fixed address is the window's after all: the front door gives it up.
            deps.log.warn(`this system has no loopback address but 127.0.0.1, so the status window keeps the same address at every start (admin.newAddressEachStart needs 127.0.0.0/8 on loopback)`);
            await new Promise<void>((resolve) => door.close(() => resolve()));
            frontDoor = null;
            await listenOn(listen.host, frontBound.port);
            break;
          }
          if (code !== 'EADDRINUSE' || tries >= FRESH_ADDRESS_TRIES) throw err;
        }
      }
    } catch (err) {
      door.close();
      throw err;
    }
  } else {
    await listenOn(listen.host, listen.port);
  }
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  bound = { host, port: address.port };
  const url = `http://${host}:${address.port}/`;
  const loginLink = (): { url: string; expiresAt: Date } => {
    const login = mintLoginCode(currentSigningKey(), new Date(), loginLinkMinutes);
    return { url: `${url}?${LOGIN_PARAM}=${login.code}`, expiresAt: login.expiresAt };
  };
  return {
    server,
    url,
    get loginUrl() {
      return loginLink().url;
    },
    loginLink,
    close: () =>
      new Promise<void>((resolve) => {
        closeEvents();
        frontDoor?.close();
        frontDoor?.closeAllConnections();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

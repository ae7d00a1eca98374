import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import Router from 'router';
import { AppError } from '../errors';
import { errorMiddleware, notFound } from '../http/errors';
import { requestListener } from '../http/listener';
import { staticFiles } from '../http/static-files';
import { tokenReader, type AdminDeps } from './deps';
import { accessRoutes } from './routes/access';
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
import { isLoopbackBindAddress, LOGIN_PARAM, mintLoginCode, newStartKey, signingKey } from './security';
import { UsedLoginCodes } from './used-codes';

/** The renderer's build output; from src/admin (tsx) or dist/src/admin (compiled, also inside app.asar). */
export function defaultRendererDir(): string {
  const candidates = [path.resolve(__dirname, '..', '..', 'renderer', 'dist'), path.resolve(__dirname, '..', '..', '..', 'renderer', 'dist')];
  return candidates.find((c) => fs.existsSync(path.join(c, 'index.html'))) ?? candidates[0]!;
}

/**
 * The status window's server: static files from renderer/dist and a small JSON API, behind the Host
 * check, the token and (for changes) the CSRF check (routes/access.ts). Each area's routes are a
 * router of their own in routes/; this only puts them in order. `port()` is the bound port (known
 * after listen).
 *
 * On `router` (express's own router) without express, which the agent's main thread need not load
 * (docs/performance.md): no X-Powered-By, no ETag; query strings are read flat (http/request.ts), so
 * `a[b]=c` is no nested object; bodies are read by http/body.ts, files served by http/static-files.ts.
 */
export function createAdminApp(
  deps: AdminDeps,
  port: () => number,
): { app: (req: http.IncomingMessage, res: http.ServerResponse) => void; closeEvents: () => void; signingKey: () => string } {
  const { agent, log } = deps;
  const currentToken = tokenReader(deps.token);
  // Sessions and login codes die with this server (security.ts): its key is made here, kept nowhere else.
  const startKey = newStartKey();
  const currentSigningKey = (): string => signingKey(currentToken(), startKey);
  const app = Router();

  // The scraper's own credential, checked before (and instead of) the window's session.
  if (deps.metrics) app.use(metricsRoutes(deps.metrics, port));
  // A sign-in is audited (Activity); the person's name is asked by the window afterwards.
  const onLogin = (): void => {
    try {
      audit(agent.core.agentDb, windowActorForLog(), 'login');
    } catch (err) {
      log.error('audit of a sign-in:', err);
    }
  };
  app.use(accessRoutes({ port, token: currentToken, signingKey: currentSigningKey, sessionHours: agent.config.admin.sessionHours, usedCodesFile: UsedLoginCodes.fileIn(agent.config.dataDir), onLogin }));
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

export interface RunningAdminServer {
  readonly server: http.Server;
  /** http://127.0.0.1:PORT/ — without the token. */
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

export async function startAdminServer(deps: AdminDeps, listen: { host: string; port: number }): Promise<RunningAdminServer> {
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
  let boundPort = 0;
  const { app, closeEvents, signingKey: currentSigningKey } = createAdminApp(deps, () => boundPort);
  const { headersTimeoutMs, loginLinkMinutes } = deps.agent.config.admin;
  // Node enforces these timeouts only when it checks its connections (by default far less often than
  // the timeout), so a slow client stayed well past it: check at a quarter of the timeout, at most
  // every second.
  const server = http.createServer({ connectionsCheckingInterval: Math.max(100, Math.min(1_000, headersTimeoutMs / 4)) }, app);
  server.headersTimeout = headersTimeoutMs;
  server.requestTimeout = Math.max(120_000, headersTimeoutMs);
  server.maxHeadersCount = 100;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  boundPort = address.port;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${boundPort}/`;
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
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

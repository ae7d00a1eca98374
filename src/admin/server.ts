import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import express, { type Response } from 'express';
import type { Agent } from '../agent';
import { operatorName } from '../core';
import { isIsoDate } from '../domain/dates';
import { AppError } from '../errors';
import { errorMiddleware, notFound } from '../http/errors';
import type { Logger } from '../log';
import { storedBody } from '../store/queries';
import { isAdminAlertProvider, isAdminPanelProvider, type OperationsAlert } from './extensions';
import {
  CSRF_HEADER,
  SECURITY_HEADERS,
  LOGIN_PARAM,
  checkChange,
  checkCredentials,
  checkHostHeader,
  cookieName,
  csrfTokenFor,
  isLoopbackBindAddress,
  mintLoginCode,
  mintSession,
  ownOrigins,
  verifyLoginCode,
  type Decision,
} from './security';
import type { UiSettings, UiSettingsStore } from './settings';
import { pausedByAt } from './summary';
import { changeFingerprint, dailyStats } from './stats';
import { staffRoutes } from './staff-routes';
import { changesRoutes } from './changes-routes';
import { secretsRoutes, type SecretsBridge } from './secrets-routes';
import { parseUpdateName, UPDATE_NAME_HELP } from '../domain/update-name';
import { resolveUpdateName } from '../store/update-names';
import { keepConflictBody, listConflicts } from '../store/conflicts';

/** The agent as the admin server uses it (an interface so tests and the Electron shell can see what is used). */
export type AdminAgent = Pick<Agent, 'core' | 'config' | 'isPaused' | 'setPaused' | 'webhook' | 'service' | 'importPayload' | 'forceApply' | 'acknowledgeWarnings' | 'refusals' | 'drainNow'>;

export interface AdminDeps {
  readonly agent: AdminAgent;
  /** The admin token, or where to get the current one (it can be rotated while the agent runs). */
  readonly token: string | (() => string);
  readonly settings: UiSettingsStore;
  readonly rendererDir: string;
  /** electron: the window runs inside the desktop app (start-at-login applies there). */
  readonly shell: 'browser' | 'electron';
  readonly log: Logger;
  /** Names of services that may add an Operations panel (see extensions.ts). */
  readonly panelServices: readonly string[];
  readonly onSettingsChanged?: (settings: UiSettings) => void;
  /** Desktop app only: secrets set from the window go to the shell's encrypted store (secrets-routes.ts). */
  readonly secrets?: SecretsBridge;
}

/** The renderer's build output; from src/admin (tsx) or dist/src/admin (compiled, also inside app.asar). */
export function defaultRendererDir(): string {
  const candidates = [path.resolve(__dirname, '..', '..', 'renderer', 'dist'), path.resolve(__dirname, '..', '..', '..', 'renderer', 'dist')];
  return candidates.find((c) => fs.existsSync(path.join(c, 'index.html'))) ?? candidates[0]!;
}

function refuse(decision: Decision): never {
  if (decision.ok) throw new Error('refuse() called with an accepting decision');
  throw new AppError(decision.id, decision.status, decision.message);
}

function positiveInt(value: unknown, name: string): number {
  if (typeof value !== 'string' || !/^\d{1,15}$/.test(value)) throw new AppError('invalid_parameter', 400, `${name} must be a whole number`);
  return Number(value);
}

function optionalPositiveInt(value: unknown, name: string): number | null {
  return value === undefined || value === '' ? null : positiveInt(value, name);
}

/**
 * The webhook URL to give head office: `admin.publicWebhookUrl` when IT set it, else the supervised
 * tunnel's public address with the webhook path, else the local listener's (with a warning).
 */
export function webhookUrlForHeadOffice(agent: Pick<AdminAgent, 'config' | 'webhook'>): { url: string | null; isPublic: boolean } {
  const configured = agent.config.admin.publicWebhookUrl;
  if (configured) return { url: configured, isPublic: true };
  const tunnel = agent.config.tunnel;
  if (tunnel) return { url: `${tunnel.publicUrl.replace(/\/+$/, '')}${agent.config.webhook.path}`, isPublic: true };
  return { url: agent.webhook?.url ?? null, isPublic: false };
}

/**
 * Banners from the operations services (tunnel, disk, clock, backups), in the order of
 * `panelServices`. A service that fails to say is itself reported, not allowed to break the status.
 */
export function collectAlerts(agent: Pick<AdminAgent, 'service'>, panelServices: readonly string[], log: Logger): OperationsAlert[] {
  const out: OperationsAlert[] = [];
  for (const name of panelServices) {
    const provider = agent.service(name);
    if (!isAdminAlertProvider(provider)) continue;
    try {
      out.push(...provider.adminAlerts());
    } catch (err) {
      log.error(`alerts of ${name}:`, err);
      out.push({ id: name, light: null, title: `The ${name} check could not be read.`, text: 'See the agent log.' });
    }
  }
  return out;
}

const MAX_EVENT_CLIENTS = 16;

/**
 * The status window's server: static files from renderer/dist and a small JSON API, behind the Host
 * check, the token and (for changes) the CSRF check. `port()` is the bound port (known after listen).
 */
export function createAdminApp(deps: AdminDeps, port: () => number): { app: express.Express; closeEvents: () => void } {
  const { agent, log } = deps;
  const core = agent.core;
  const currentToken = typeof deps.token === 'string' ? ((fixed: string) => () => fixed)(deps.token) : deps.token;
  const { sessionHours } = agent.config.admin;
  /** Login codes already traded for a session (each works once), until they expire anyway. */
  const usedCodes = new Map<string, number>();
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // We parse query strings ourselves as flat strings: no nested objects from `a[b]=c`.
  app.set('query parser', 'simple');

  app.use((req, res, next) => {
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
  app.use((req, res, next) => {
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
      res.status(401).type('text/plain').send(`${why} Run: pos-sync-agent admin-url (or open the window from the tray) for a new one.\n`);
      return;
    }
    usedCodes.set(check.nonce, check.expiresAt);
    setSession(res);
    res.redirect(303, req.path);
  });

  app.use((req, res, next) => {
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
      .send('The status window needs its access link. Open the login link the agent printed when it started (pos-sync-agent serve), or run: pos-sync-agent admin-url\n');
  });

  app.use((req, _res, next) => {
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

  const json = express.json({ limit: '16kb', strict: true });
  const actor = (): string => `${operatorName()} (status window)`;

  app.get('/api/session', (_req, res) => {
    res.json({ csrfToken: csrfTokenFor(currentToken()), csrfHeader: CSRF_HEADER, shell: deps.shell, version: process.env.npm_package_version ?? null });
  });

  app.get('/api/status', (_req, res) => {
    res.json({
      generatedAt: new Date().toISOString(),
      paused: agent.isPaused,
      ...pausedByAt(agent.core.pause()),
      refusals: agent.refusals.snapshot(),
      gapAlertMinutes: agent.config.admin.gapAlertMinutes,
      baselineSettleSeconds: agent.config.sync.baselineSettleSeconds,
      locations: core.status(),
      alerts: collectAlerts(agent, deps.panelServices, log),
    });
  });

  app.get('/api/deliveries', (req, res) => {
    const limit = Math.min(optionalPositiveInt(req.query.limit, 'limit') ?? 50, 500);
    const before = optionalPositiveInt(req.query.before, 'before');
    res.json({ deliveries: core.deliveries(limit, before) });
  });

  app.get('/api/payloads/:kind/:id', (req, res) => {
    const kind = req.params.kind;
    if (kind !== 'inbox' && kind !== 'quarantine') throw new AppError('not_found', 404, 'no such payload kind');
    const body = storedBody(core.agentDb, kind, positiveInt(req.params.id, 'id'));
    if (body === null) throw new AppError('not_found', 404, `no stored payload ${kind} #${req.params.id}`);
    // As bytes, typed as text: the window shows it with textContent; a browser opening it directly
    // must not run it (nosniff + CSP sandbox).
    res.setHeader('Content-Security-Policy', "sandbox; default-src 'none'");
    res.type('text/plain; charset=utf-8').send(body);
  });

  app.get('/api/stats/daily', (req, res) => {
    const days = Math.min(Math.max(optionalPositiveInt(req.query.days, 'days') ?? 14, 1), 90);
    res.json({ timeZone: agent.config.defaultTimezone, ...dailyStats(core.agentDb, days, agent.config.defaultTimezone) });
  });

  app.get('/api/lookup', (req, res) => {
    const plu = req.query.plu;
    if (typeof plu !== 'string' || plu.trim() === '' || plu.length > 64) throw new AppError('invalid_parameter', 400, 'enter a PLU');
    const date = req.query.date;
    if (date !== undefined && date !== '' && !isIsoDate(date)) throw new AppError('invalid_parameter', 400, 'date must be YYYY-MM-DD');
    const locationId = optionalPositiveInt(req.query.location, 'location');
    res.json(core.lookup(plu, { locationId, date: typeof date === 'string' && date !== '' ? date : null }));
  });

  app.post('/api/import', express.raw({ type: () => true, limit: agent.config.webhook.maxBodyBytes }), async (req, res) => {
    const raw: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    if (raw.length === 0) throw new AppError('empty_payload', 400, 'the file is empty');
    const { outcome, applied } = await agent.importPayload(raw, actor());
    log.info(`status window: payload imported (${raw.length} bytes): ${outcome.kind === 'stored' ? outcome.decision : `rejected ${outcome.errorId}`}`);
    if (outcome.kind === 'rejected') {
      res.status(422).json({ outcome: { kind: 'rejected', quarantineId: outcome.quarantineId, errorId: outcome.errorId, error: outcome.error }, applied });
      return;
    }
    res.json({ outcome, applied });
  });

  // :name is LOCATION:SEQUENCE as the window shows it (e.g. 118:1047), or #N / N for the inbox number.
  app.post('/api/updates/:name/force-apply', json, async (req, res) => {
    const name = parseUpdateName(req.params.name);
    if (!name) throw new AppError('invalid_update_name', 400, UPDATE_NAME_HELP);
    const inboxId = resolveUpdateName(agent.core.agentDb, name).inboxId;
    const reason = (req.body as { reason?: unknown } | undefined)?.reason;
    if (typeof reason !== 'string' || reason.trim().length < 3 || reason.length > 500) {
      throw new AppError('reason_required', 400, 'say why you force this update (3 to 500 characters); it goes to the audit log');
    }
    const result = await agent.forceApply(inboxId, actor(), reason.trim());
    log.warn(`status window: update #${inboxId} force-applied by ${actor()}`);
    res.json(result);
  });

  // Conflicting redeliveries (store/conflicts.ts): listed for the window, which fetches both bodies
  // through /api/payloads/inbox/:id; keeping one is audited and the kept body then waits its turn.
  app.get('/api/conflicts', (_req, res) => {
    res.json({ conflicts: listConflicts(core.agentDb) });
  });

  app.post('/api/conflicts/:name/keep', json, async (req, res) => {
    const name = parseUpdateName(req.params.name);
    if (!name) throw new AppError('invalid_update_name', 400, UPDATE_NAME_HELP);
    const body = req.body as { inboxId?: unknown; reason?: unknown } | undefined;
    const reason = body?.reason;
    if (typeof reason !== 'string' || reason.trim().length < 3 || reason.length > 500) {
      throw new AppError('reason_required', 400, 'say why you keep this body (3 to 500 characters); it goes to the audit log');
    }
    const keep = body?.inboxId;
    if (typeof keep !== 'number' || !Number.isSafeInteger(keep) || keep < 1) throw new AppError('invalid_parameter', 400, 'inboxId must be the number of one of the bodies');
    const target = resolveUpdateName(core.agentDb, name);
    const resolution = keepConflictBody(core.agentDb, core.tillDb, { locationId: target.locationId, changeSequence: target.changeSequence, keep, actor: actor(), reason: reason.trim() });
    log.warn(`status window: conflict of update ${resolution.name} resolved by ${actor()}: kept #${resolution.kept}`);
    const applied = resolution.keptState === 'pending' ? await agent.drainNow() : [];
    res.json({ resolution, applied });
  });

  app.post('/api/warnings/acknowledge', json, (req, res) => {
    const raw = (req.body as { locationId?: unknown } | undefined)?.locationId;
    if (raw !== null && raw !== undefined && (typeof raw !== 'number' || !Number.isInteger(raw))) throw new AppError('invalid_parameter', 400, 'locationId must be a number or null');
    res.json({ acknowledged: agent.acknowledgeWarnings(actor(), (raw as number | null | undefined) ?? null) });
  });

  app.put('/api/sync/paused', json, (req, res) => {
    const paused = (req.body as { paused?: unknown } | undefined)?.paused;
    if (typeof paused !== 'boolean') throw new AppError('invalid_parameter', 400, 'paused must be true or false');
    agent.setPaused(paused, actor());
    res.json({ paused: agent.isPaused });
  });

  app.get('/api/settings', (_req, res) => {
    const webhook = webhookUrlForHeadOffice(agent);
    res.json({
      settings: deps.settings.get(),
      settingsFile: deps.settings.file,
      shell: deps.shell,
      webhookUrl: webhook.url,
      webhookUrlIsPublic: webhook.isPublic,
      localWebhookUrl: agent.webhook?.url ?? null,
      dataDir: agent.config.dataDir,
      // What the window's retention settings override (docs/status-window.md: the window's value wins).
      retention: {
        enabled: agent.config.retention.enabled,
        configured: {
          rawPayloadDays: agent.config.retention.rawPayloadDays,
          quarantineDays: agent.config.retention.quarantineDays,
          rangeDays: agent.config.retention.rangeDays,
          deliveryDays: agent.config.retention.deliveryDays,
        },
      },
    });
  });

  app.put('/api/settings', json, (req, res) => {
    const next = deps.settings.update(req.body);
    log.info(`status window: settings changed to ${JSON.stringify(next)}`);
    deps.onSettingsChanged?.(next);
    res.json({ settings: next });
  });

  // Extension point: panels from other services (operations). Resolved per request, so a service
  // started after the admin server still appears.
  const panels = (): { name: string; provider: ReturnType<typeof agent.service> }[] =>
    deps.panelServices.map((name) => ({ name, provider: agent.service(name) })).filter((p) => isAdminPanelProvider(p.provider));
  app.get('/api/panels', async (_req, res) => {
    const out = [];
    for (const { name, provider } of panels()) {
      if (!isAdminPanelProvider(provider)) continue;
      try {
        out.push({ name, ...(await provider.adminPanel()) });
      } catch (err) {
        log.error(`panel ${name}:`, err);
        out.push({ name, title: name, items: [{ label: 'Error', value: 'this panel could not be loaded; see the agent log', level: 'error' }], actions: [] });
      }
    }
    res.json({ panels: out });
  });
  app.post('/api/panels/:name/actions/:id', async (req, res) => {
    const provider = panels().find((p) => p.name === req.params.name)?.provider;
    if (!isAdminPanelProvider(provider)) throw new AppError('not_found', 404, 'no such panel');
    const action = String(req.params.id);
    const result = await provider.runAdminAction(action, actor());
    // Operator actions are audited like force-apply (who, what, when); the message says what happened.
    core.agentDb
      .prepare('INSERT INTO audit_log (at, actor, action, details) VALUES (?, ?, ?, ?)')
      .run(new Date().toISOString(), actor(), `panel:${String(req.params.name)}:${action}`, JSON.stringify({ message: result.message }));
    log.info(`status window: ${String(req.params.name)} action ${action} by ${actor()}: ${result.message}`);
    res.json(result);
  });

  app.use('/api/staff', staffRoutes(agent, log));
  app.use('/api/changes', changesRoutes(agent));
  if (deps.secrets) app.use('/api/secrets', json, secretsRoutes(deps.secrets, log, actor));

  // Live view: one timer looks at the database; each open window gets a `change` event when what it
  // shows may have changed. Bounded so a runaway page cannot hold many sockets.
  const clients = new Set<Response>();
  let lastFingerprint = '';
  let timer: NodeJS.Timeout | null = null;
  const tick = (): void => {
    if (!core.isOpen) return;
    let fingerprint: string;
    try {
      // Operations alerts change without touching the database (a tunnel dying): part of the fingerprint.
      const alerts = collectAlerts(agent, deps.panelServices, log).map((a) => `${a.id}:${a.light}:${a.title}:${a.text}`);
      fingerprint = `${changeFingerprint(core.agentDb, core.tillDb)}|${agent.isPaused}|${alerts.join('|')}`;
    } catch (err) {
      log.error('status window live check:', err);
      return;
    }
    if (fingerprint === lastFingerprint) return;
    lastFingerprint = fingerprint;
    for (const c of clients) c.write(`event: change\ndata: ${JSON.stringify({ at: new Date().toISOString() })}\n\n`);
  };
  app.get('/api/events', (req, res) => {
    if (clients.size >= MAX_EVENT_CLIENTS) throw new AppError('too_many_windows', 503, 'too many status windows are open');
    res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', Connection: 'keep-alive' });
    res.write(`retry: 3000\nevent: hello\ndata: {}\n\n`);
    clients.add(res);
    if (!timer) {
      lastFingerprint = '';
      timer = setInterval(tick, agent.config.admin.liveCheckMs);
      timer.unref();
    }
    const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
    heartbeat.unref();
    req.on('close', () => {
      clearInterval(heartbeat);
      clients.delete(res);
      if (clients.size === 0 && timer) {
        clearInterval(timer);
        timer = null;
      }
    });
  });

  app.use('/api', notFound);

  app.use(
    express.static(deps.rendererDir, {
      index: 'index.html',
      dotfiles: 'ignore',
      redirect: false,
      setHeaders: (res) => res.setHeader('Cache-Control', 'no-store'),
    }),
  );
  app.use(notFound);
  app.use(errorMiddleware(log));
  return {
    app,
    closeEvents: () => {
      if (timer) clearInterval(timer);
      timer = null;
      for (const c of clients) c.end();
      clients.clear();
    },
  };
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
  const { app, closeEvents } = createAdminApp(deps, () => boundPort);
  const { headersTimeoutMs, loginLinkMinutes } = deps.agent.config.admin;
  // Node enforces these timeouts only when it checks its connections, every 30 s by default, so a
  // slow client got up to ~50 s instead of 20: check at a quarter of the timeout (at most 1 s).
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
  const token = typeof deps.token === 'string' ? ((fixed: string) => () => fixed)(deps.token) : deps.token;
  return {
    server,
    url,
    get loginUrl() {
      return `${url}?${LOGIN_PARAM}=${mintLoginCode(token(), new Date(), loginLinkMinutes).code}`;
    },
    close: () =>
      new Promise<void>((resolve) => {
        closeEvents();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

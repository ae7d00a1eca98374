import Router from 'router';
import { AppError } from '../../errors';
import { sendJson } from '../../http/errors';
import { sendText } from '../../http/reply';
import { query } from '../../http/request';
import { storedBody } from '../../store/queries';
import type { AdminDeps } from '../deps';
import { CSRF_HEADER, csrfTokenFor } from '../security';
import { dailyStats } from '../stats';
import { optionalPositiveInt, positiveInt } from './common';
import { buildStatusReply } from '../status-reply';

/** The Sync status and Deliveries tabs: the session, the status, deliveries, stored payloads, daily counts. */
export function statusRoutes(deps: Pick<AdminDeps, 'agent' | 'log' | 'panelServices' | 'shell'>, currentToken: () => string): Router.Router {
  const { agent, log } = deps;
  const core = agent.core;
  const router = Router();

  router.get('/api/session', (_req, res) => {
    sendJson(res, 200, { csrfToken: csrfTokenFor(currentToken()), csrfHeader: CSRF_HEADER, shell: deps.shell, version: process.env.npm_package_version ?? null });
  });

  router.get('/api/status', (_req, res) => {
    sendJson(res, 200, buildStatusReply(agent, deps.panelServices, log));
  });

  router.get('/api/deliveries', (req, res) => {
    const q = query(req);
    const limit = Math.min(optionalPositiveInt(q.limit, 'limit') ?? 50, 500);
    const before = optionalPositiveInt(q.before, 'before');
    sendJson(res, 200, { deliveries: core.deliveries(limit, before) });
  });

  router.get('/api/payloads/:kind/:id', (req, res) => {
    const kind = req.params.kind;
    if (kind !== 'inbox' && kind !== 'quarantine') throw new AppError('not_found', 404, 'no such payload kind');
    const body = storedBody(core.agentDb, kind, positiveInt(req.params.id, 'id'));
    if (body === null) throw new AppError('not_found', 404, `no stored payload ${kind} #${req.params.id}`);
    // As bytes, typed as text: the window shows it with textContent; a browser opening it directly
    // must not run it (nosniff + CSP sandbox).
    res.setHeader('Content-Security-Policy', "sandbox; default-src 'none'");
    sendText(res, 200, 'text/plain; charset=utf-8', body);
  });

  router.get('/api/stats/daily', (req, res) => {
    const days = Math.min(Math.max(optionalPositiveInt(query(req).days, 'days') ?? 14, 1), 90);
    sendJson(res, 200, { timeZone: agent.config.defaultTimezone, ...dailyStats(core.agentDb, days, agent.config.defaultTimezone) });
  });
  return router;
}


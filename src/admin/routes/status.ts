import { Router } from 'express';
import { AppError } from '../../errors';
import { storedBody } from '../../store/queries';
import type { AdminDeps } from '../deps';
import { CSRF_HEADER, csrfTokenFor } from '../security';
import { dailyStats } from '../stats';
import { optionalPositiveInt, positiveInt } from './common';
import { buildStatusReply } from '../status-reply';

/** The Sync status and Deliveries tabs: the session, the status, deliveries, stored payloads, daily counts. */
export function statusRoutes(deps: Pick<AdminDeps, 'agent' | 'log' | 'panelServices' | 'shell'>, currentToken: () => string): Router {
  const { agent, log } = deps;
  const core = agent.core;
  const router = Router();

  router.get('/api/session', (_req, res) => {
    res.json({ csrfToken: csrfTokenFor(currentToken()), csrfHeader: CSRF_HEADER, shell: deps.shell, version: process.env.npm_package_version ?? null });
  });

  router.get('/api/status', (_req, res) => {
    res.json(buildStatusReply(agent, deps.panelServices, log));
  });

  router.get('/api/deliveries', (req, res) => {
    const limit = Math.min(optionalPositiveInt(req.query.limit, 'limit') ?? 50, 500);
    const before = optionalPositiveInt(req.query.before, 'before');
    res.json({ deliveries: core.deliveries(limit, before) });
  });

  router.get('/api/payloads/:kind/:id', (req, res) => {
    const kind = req.params.kind;
    if (kind !== 'inbox' && kind !== 'quarantine') throw new AppError('not_found', 404, 'no such payload kind');
    const body = storedBody(core.agentDb, kind, positiveInt(req.params.id, 'id'));
    if (body === null) throw new AppError('not_found', 404, `no stored payload ${kind} #${req.params.id}`);
    // As bytes, typed as text: the window shows it with textContent; a browser opening it directly
    // must not run it (nosniff + CSP sandbox).
    res.setHeader('Content-Security-Policy', "sandbox; default-src 'none'");
    res.type('text/plain; charset=utf-8').send(body);
  });

  router.get('/api/stats/daily', (req, res) => {
    const days = Math.min(Math.max(optionalPositiveInt(req.query.days, 'days') ?? 14, 1), 90);
    res.json({ timeZone: agent.config.defaultTimezone, ...dailyStats(core.agentDb, days, agent.config.defaultTimezone) });
  });
  return router;
}


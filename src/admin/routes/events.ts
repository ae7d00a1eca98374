import type { ServerResponse } from 'node:http';
import Router from 'router';
import { AppError } from '../../errors';
import type { StaffService } from '../../employees/service';
import type { AdminDeps } from '../deps';
import { changeFingerprint } from '../stats';
import { collectAlerts } from './panels';

const MAX_EVENT_CLIENTS = 16;

/**
 * Live view (GET /api/events): one timer looks at the database; each open window gets a `change`
 * event when what it shows may have changed. Bounded so a runaway page cannot hold many sockets.
 */
export function eventsRoutes(deps: Pick<AdminDeps, 'agent' | 'log' | 'panelServices'>): { router: Router.Router; close: () => void } {
  const { agent, log } = deps;
  const core = agent.core;
  const router = Router();
  const clients = new Set<ServerResponse>();
  let lastFingerprint = '';
  let timer: NodeJS.Timeout | null = null;
  const tick = (): void => {
    if (!core.isOpen) return;
    let fingerprint: string;
    try {
      // Operations alerts change without touching the database (a tunnel dying): part of the fingerprint.
      const alerts = collectAlerts(agent, deps.panelServices, log).map((a) => `${a.id}:${a.light}:${a.title}:${a.text}`);
      // The employee service's state changes between a sync's attempts, before anything is stored.
      const staff = agent.service<StaffService>('staff');
      const link = staff ? `${staff.syncing}:${JSON.stringify(staff.link)}` : '';
      fingerprint = `${changeFingerprint(core.agentDb, core.tillDb)}|${agent.isPaused}|${alerts.join('|')}|${link}`;
    } catch (err) {
      log.error('status window live check:', err);
      return;
    }
    if (fingerprint === lastFingerprint) return;
    lastFingerprint = fingerprint;
    for (const c of clients) c.write(`event: change\ndata: ${JSON.stringify({ at: new Date().toISOString() })}\n\n`);
  };
  router.get('/api/events', (req, res) => {
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
  return {
    router,
    close: () => {
      if (timer) clearInterval(timer);
      timer = null;
      for (const c of clients) c.end();
      clients.clear();
    },
  };
}

import Router from 'router';
import { AppError } from '../../errors';
import { sendJson } from '../../http/errors';
import type { Logger } from '../../log';
import type { AdminAgent, AdminDeps } from '../deps';
import { isAdminAlertProvider, isAdminPanelProvider, type OperationsAlert } from '../extensions';
import { windowActor, windowActorForLog } from './common';

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

/**
 * Extension point: panels from other services (operations), under Settings → Operations, and their
 * actions (audited). Resolved per request, so a service started after the admin server still appears.
 */
export function panelsRoutes(deps: Pick<AdminDeps, 'agent' | 'log' | 'panelServices'>): Router.Router {
  const { agent, log } = deps;
  const core = agent.core;
  const router = Router();
  const panels = (): { name: string; provider: ReturnType<typeof agent.service> }[] =>
    deps.panelServices.map((name) => ({ name, provider: agent.service(name) })).filter((p) => isAdminPanelProvider(p.provider));
  router.get('/api/panels', async (_req, res) => {
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
    sendJson(res, 200, { panels: out });
  });
  router.post('/api/panels/:name/actions/:id', async (req, res) => {
    const provider = panels().find((p) => p.name === req.params.name)?.provider;
    if (!isAdminPanelProvider(provider)) throw new AppError('not_found', 404, 'no such panel');
    const action = String(req.params.id);
    const actor = windowActor(req);
    const result = await provider.runAdminAction(action, actor);
    // Operator actions are audited like force-apply (who, what, when); the message says what happened.
    core.agentDb
      .prepare('INSERT INTO audit_log (at, actor, action, details) VALUES (?, ?, ?, ?)')
      .run(new Date().toISOString(), actor, `panel:${String(req.params.name)}:${action}`, JSON.stringify({ message: result.message }));
    log.info(`status window: ${String(req.params.name)} action ${action} by ${windowActorForLog()}: ${result.message}`);
    sendJson(res, 200, result);
  });
  return router;
}

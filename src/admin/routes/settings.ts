import Router from 'router';
import { bodyOf } from '../../http/body';
import { sendJson } from '../../http/errors';
import type { AdminAgent, AdminDeps } from '../deps';
import { jsonBody as json } from './common';

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

/** The Settings tab: the window's own settings (ui-settings.json) and what the configuration says beside them. */
export function settingsRoutes(deps: Pick<AdminDeps, 'agent' | 'log' | 'settings' | 'shell' | 'onSettingsChanged'>): Router.Router {
  const { agent, log } = deps;
  const router = Router();
  router.get('/api/settings', (_req, res) => {
    const webhook = webhookUrlForHeadOffice(agent);
    sendJson(res, 200, {
      settings: deps.settings.get(),
      settingsFile: deps.settings.file,
      shell: deps.shell,
      webhookUrl: webhook.url,
      webhookUrlIsPublic: webhook.isPublic,
      localWebhookUrl: agent.webhook?.url ?? null,
      // Whether there is a token to reveal (POST /api/webhook-token/reveal); never the value here.
      webhookToken: agent.config.webhook.bearerToken !== null ? 'set' : agent.config.webhook.allowUnauthenticated ? 'not-required' : 'not-set',
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

  router.put('/api/settings', json, (req, res) => {
    const next = deps.settings.update(bodyOf(req));
    log.info(`status window: settings changed to ${JSON.stringify(next)}`);
    deps.onSettingsChanged?.(next);
    sendJson(res, 200, { settings: next });
  });
  return router;
}

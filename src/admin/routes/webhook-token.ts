import Router from 'router';
import { sendJson } from '../../http/errors';
import type { Logger } from '../../log';
import { SECRET_SHOWN_ACTION, WEBHOOK_TOKEN_NAME, webhookTokenReply } from '../webhook-token-schema';
import { audit } from '../../store/audit';
import type { AdminAgent } from '../deps';
import { windowActor, windowActorForLog } from './common';

/**
 * The webhook token for head office's registration, revealed in Settings (both set-ups). A POST, so it
 * passes the checks every change passes (routes/access.ts): the window's session header, the CSRF
 * header and the window's own origin; a page on another port or site gets nothing. Each reveal is in
 * the audit log with the person's name (the Activity view, `pos-sync-agent audit`); the agent's log
 * says only that it was shown, by which account. The reply is never cached (`Cache-Control: no-store`,
 * as every admin reply) and the value is registered with the log redactor at start-up like every
 * resolved secret. Only this secret: there is no route that reveals any other.
 */
export function webhookTokenRoutes(agent: Pick<AdminAgent, 'config' | 'core'>, log: Logger): Router.Router {
  const router = Router();
  router.post('/api/webhook-token/reveal', (req, res) => {
    const reply = webhookTokenReply(agent.config);
    if (reply.value !== null) {
      audit(agent.core.agentDb, windowActor(req), SECRET_SHOWN_ACTION, { name: WEBHOOK_TOKEN_NAME });
      log.info(`status window: ${WEBHOOK_TOKEN_NAME} shown to ${windowActorForLog()}`);
    }
    res.setHeader('Cache-Control', 'no-store');
    sendJson(res, 200, reply);
  });
  return router;
}

import type { IncomingMessage } from 'node:http';
import Router from 'router';
import type { Agent } from '../agent';
import { sendJson } from '../http/errors';
import type { Logger } from '../log';
import { audit } from '../store/audit';
import { SECRET_SHOWN_ACTION, WEBHOOK_TOKEN_NAME, webhookTokenReply } from '../admin/webhook-token-schema';

/**
 * The control channel's one secret route: `secrets show webhook.bearerToken` asks it when the token is
 * kept in the desktop app's encrypted store, which only the app can decrypt (Electron's safeStorage:
 * DPAPI on Windows). The agent process holds the token main decrypted and handed it at start
 * (electron/channel.ts), so it answers from its configuration, as `serve` would. Only the owner of
 * the data folder can connect (control-protocol.ts); each answer is in the audit log with the
 * command line's account, and the agent's log says only that it was shown.
 */
export function controlSecretRoutes(agent: Pick<Agent, 'config' | 'core'>, log: Logger, actorOf: (req: IncomingMessage) => string): Router.Router {
  const router = Router();
  router.post('/webhook-token/reveal', (req, res) => {
    const reply = webhookTokenReply(agent.config);
    if (reply.value !== null) {
      const actor = actorOf(req);
      audit(agent.core.agentDb, actor, SECRET_SHOWN_ACTION, { name: WEBHOOK_TOKEN_NAME });
      log.info(`command line: ${WEBHOOK_TOKEN_NAME} shown to ${actor}`);
    }
    sendJson(res, 200, reply);
  });
  return router;
}

import { AppError } from '../errors';
import { desktopEncryptionWords, desktopStoredNames, safeStorageSecretsFile } from '../ops/desktop-secrets-file';
import { WebhookTokenReplySchema, type WebhookTokenReply } from '../admin/webhook-token-schema';
import { reachAgent } from './control-client';

/**
 * `secrets show webhook.bearerToken` on a data folder whose secrets the desktop app keeps encrypted
 * (secrets.safe.json). Only the app's main process can decrypt them (safeStorage, DPAPI on Windows),
 * and it hands them to its agent process at start; so the command asks that running agent over the
 * owner-only control channel (ops/control-secrets.ts), and without one says where the token is kept
 * and how to see it.
 */

/** Whether the desktop app keeps this data folder's webhook token. */
export function desktopKeepsWebhookToken(dataDir: string): boolean {
  return desktopStoredNames(safeStorageSecretsFile(dataDir)).includes('webhook.bearerToken');
}

/** How long to wait for an agent that holds the folder to open its control channel (it is starting). */
const WAIT_FOR_STARTING_AGENT_MS = 15_000;

/** The token from the agent running on `dataDir`, or the one-line error that says how to see it. */
export async function webhookTokenFromDesktop(dataDir: string, actor: string, platform: NodeJS.Platform = process.platform): Promise<WebhookTokenReply & { value: string }> {
  const agent = await reachAgent(dataDir, actor, WAIT_FOR_STARTING_AGENT_MS);
  if (agent === null) {
    throw new AppError(
      'secret_in_desktop_store',
      409,
      `webhook.bearerToken is kept by the desktop app in ${safeStorageSecretsFile(dataDir)} (${desktopEncryptionWords(platform)}), which only the running app can read: ` +
        'start POS Sync Agent and, in its window, open Settings → Token → Show (or Copy); or run this command again while the app runs.',
    );
  }
  const reply = await agent.client.request(WebhookTokenReplySchema, { method: 'POST', route: '/webhook-token/reveal', body: {} });
  if (reply.value === null) {
    throw new AppError('secret_not_in_use', 409, `the agent running on ${dataDir} (pid ${agent.pid}) checks no webhook token (webhook.allowUnauthenticated is on)`);
  }
  return { ...reply, value: reply.value };
}

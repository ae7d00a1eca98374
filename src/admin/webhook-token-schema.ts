import { z } from 'zod';

/**
 * The answer to "what token must head office send?": the webhook bearer token the running agent
 * checks now. Two boundaries answer it with this one schema: the status window's
 * POST /api/webhook-token/reveal (admin/routes/webhook-token.ts; the renderer reads the same type)
 * and the control channel's POST /webhook-token/reveal, which `secrets show` asks when the token is
 * in the desktop app's encrypted store (ops/control-secrets.ts). Only this secret is ever revealed:
 * the others are the site's credentials for other services, and head office never needs them.
 *
 * The value comes from the agent's resolved configuration, in both set-ups the process that runs the
 * agent: `serve` resolves its secrets itself; the desktop app's main process decrypts them and hands
 * them to the agent process at start (electron/channel.ts). So it is the token in effect: a token
 * stored since (the window's Secrets card) is used, and shown, after the restart that card offers.
 */

export const WEBHOOK_TOKEN_NAME = 'webhook.bearerToken';

export const WebhookTokenReplySchema = z.strictObject({
  name: z.literal(WEBHOOK_TOKEN_NAME),
  /** null: the webhook checks no token (webhook.allowUnauthenticated, shown red in the window). */
  value: z.string().min(1).nullable(),
  allowUnauthenticated: z.boolean(),
});

export type WebhookTokenReply = z.infer<typeof WebhookTokenReplySchema>;

/** From the agent's configuration (Config's webhook section; only these two keys are read). */
export function webhookTokenReply(config: { readonly webhook: { readonly bearerToken: string | null; readonly allowUnauthenticated: boolean } }): WebhookTokenReply {
  return WebhookTokenReplySchema.parse({ name: WEBHOOK_TOKEN_NAME, value: config.webhook.bearerToken, allowUnauthenticated: config.webhook.allowUnauthenticated });
}

/** The audit log's action for a shown secret (its name in the details, never its value). */
export const SECRET_SHOWN_ACTION = 'secret-shown';

import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { ConfigProblem } from '../errors';
import type { SecretStore } from '../config/secret-names';
import { dataDirFor, rawConfigInput } from './secrets';
import type { LoadOptions } from '../config/load';
import { isLoopbackHost } from '../http/loopback';
import { shellWord } from '../config/site';

/**
 * The webhook takes no update without a bearer token unless the site says so
 * (`webhook.allowUnauthenticated`). Loopback alone is no protection: every account and program on the
 * PC can reach 127.0.0.1, and a tunnel set up outside the agent forwards the whole internet to it. So
 * at the first start of an untouched install (`serve`, the desktop app) the agent makes a token of its
 * own and keeps it with the other secrets (the owner-only secrets file, or the desktop app's encrypted
 * store); `pos-sync-agent secrets show webhook.bearerToken` prints it for head office's registration
 * and for the dev publisher.
 *
 * A data folder an earlier version used without a token is not given one silently: head office is
 * already sending to it without one, and a token it does not know would turn every delivery into a
 * 401 that nobody at the site sees. Start-up stops instead, naming the two ways on (docs/operations.md,
 * "Webhook token").
 */

export type WebhookTokenDecision =
  /** A token is configured or stored (or must be, for a webhook reachable from outside): nothing to do here. */
  | { readonly kind: 'present' }
  | { readonly kind: 'allowed-without' }
  /** An untouched install: a token was made and stored. */
  | { readonly kind: 'generated' }
  /** An earlier version's data folder with no token: the site must choose. */
  | { readonly kind: 'choose'; readonly problem: ConfigProblem };

/**
 * Whether head office may already be sending to this folder without a token. The default, for a
 * process that must not load SQLite (the desktop app's main process): the folder holds data files.
 * `serve` passes the precise check (webhook-deliveries.ts): webhook deliveries in agent.db's inbox,
 * so a folder only support's `import` filled still gets a token.
 */
export function holdsDataFiles(dataDir: string): boolean {
  return ['agent.db', 'pos-sync.db'].some((f) => fs.existsSync(path.join(dataDir, f)));
}

function reachableFromOutside(raw: Record<string, unknown>): boolean {
  const webhook = (raw.webhook ?? {}) as { host?: unknown; tls?: unknown };
  const host = typeof webhook.host === 'string' ? webhook.host : '127.0.0.1';
  return (raw.tunnel !== undefined && raw.tunnel !== null) || (webhook.tls !== undefined && webhook.tls !== null) || !isLoopbackHost(host);
}

function configured(raw: Record<string, unknown>): { token: boolean; allowWithout: boolean } {
  const webhook = (raw.webhook ?? {}) as { bearerToken?: unknown; allowUnauthenticated?: unknown };
  return { token: typeof webhook.bearerToken === 'string' && webhook.bearerToken.length > 0, allowWithout: webhook.allowUnauthenticated === true };
}

export function noTokenProblem(dataDir: string, configFile: string | null | undefined): ConfigProblem {
  // Absolute and quoted for this PC's shell, so the commands run as printed from any folder.
  const config = configFile ? ` --config ${shellWord(path.resolve(configFile))}` : '';
  return {
    field: 'webhook.bearerToken',
    message:
      `the webhook has no bearer token, and this data folder (${dataDir}) has taken updates from head office without one before. ` +
      'Without a token any account or program on this PC (and anyone, through a tunnel) can change your prices, so the agent no longer starts that way by default. Either ' +
      `make a token (\`pos-sync-agent secrets generate webhook.bearerToken${config}\`), give it to head office for this site's registration (\`pos-sync-agent secrets show webhook.bearerToken${config}\`) and start again; ` +
      'or, until head office sends one, set webhook.allowUnauthenticated to true in the configuration (the status window then shows it red)',
  };
}

/** Makes the local token on an untouched install, or says what the site must choose (see above). */
export function ensureWebhookToken(options: LoadOptions, store: SecretStore, takenWithoutToken: (dataDir: string) => boolean = holdsDataFiles): WebhookTokenDecision {
  const { raw } = rawConfigInput(options);
  const wanted = configured(raw);
  if (wanted.token || store.get('webhook.bearerToken') !== null) return { kind: 'present' };
  if (wanted.allowWithout) return { kind: 'allowed-without' };
  // Reachable from outside (tunnel, TLS, another address): the token must be the one registered with
  // head office, set by the site; start-up says so (webhook/exposure.ts).
  if (reachableFromOutside(raw)) return { kind: 'present' };
  const dataDir = dataDirFor(options);
  if (takenWithoutToken(dataDir)) return { kind: 'choose', problem: noTokenProblem(dataDir, options.file) };
  store.set('webhook.bearerToken', crypto.randomBytes(32).toString('base64url'));
  return { kind: 'generated' };
}

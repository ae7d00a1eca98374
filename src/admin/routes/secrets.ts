import type { IncomingMessage } from 'node:http';
import Router from 'router';
import { AppError } from '../../errors';
import { bodyOf } from '../../http/body';
import { sendJson } from '../../http/errors';
import type { Logger } from '../../log';
import { assertSecretName, secretEnvName, SECRET_NAMES, type SecretName } from '../../config/secret-names';

/**
 * Secrets in the desktop app's status window (Settings). The agent process cannot encrypt (only the
 * shell's main process has safeStorage), so the bridge forwards each change to main and waits for its
 * answer. Values only ever travel towards the store: the API lists names and where each comes from,
 * never a value. Headless agents have no bridge and no such routes: there `pos-sync-agent secrets set`
 * writes the owner-only file.
 */

export type SecretSource = 'environment' | 'store' | null;

export interface SecretsBridge {
  /** Where each secret comes from now. */
  sources(): Partial<Record<SecretName, SecretSource>>;
  /** Stores (value) or removes (null) a secret in the shell's store; resolves with the sources after. */
  set(name: SecretName, value: string | null): Promise<Partial<Record<SecretName, SecretSource>>>;
  /** Starts a fresh agent with the secrets as stored now. */
  restart(): void;
}

/** Longer than any token or password a vendor issues; bounds what a page can make main encrypt. */
const MAX_SECRET_LENGTH = 10_000;

function listing(sources: Partial<Record<SecretName, SecretSource>>, changedSinceStart: boolean): unknown {
  return {
    secrets: SECRET_NAMES.map((name) => ({ name, source: sources[name] ?? null, environmentVariable: secretEnvName(name) })),
    restartNeeded: changedSinceStart,
  };
}

export function secretsRoutes(bridge: SecretsBridge, log: Logger, actor: (req: IncomingMessage) => string, audit: (actor: string, action: string, details: Record<string, unknown>) => void = () => undefined): Router.Router {
  const router = Router();
  let changedSinceStart = false;

  router.get('/', (_req, res) => {
    sendJson(res, 200, listing(bridge.sources(), changedSinceStart));
  });

  const change = async (name: SecretName, value: string | null, who: string): Promise<unknown> => {
    if (bridge.sources()[name] === 'environment') {
      throw new AppError('secret_from_environment', 409, `${name} comes from ${secretEnvName(name)}, which wins over the stored value; change it where the app is started`);
    }
    const sources = await bridge.set(name, value);
    changedSinceStart = true;
    // The name and who, never the value.
    log.info(`status window: secret ${name} ${value === null ? 'removed' : 'stored'}`);
    audit(who, value === null ? 'secret-removed' : 'secret-set', { name });
    return listing(sources, changedSinceStart);
  };

  /** `{"value": "..."}` stores, `{"value": null}` removes. */
  router.put('/:name', async (req, res) => {
    const name = assertSecretName(String(req.params.name));
    const value = (bodyOf(req) as { value?: unknown } | undefined)?.value;
    if (value === null) {
      sendJson(res, 200, await change(name, null, actor(req)));
      return;
    }
    if (typeof value !== 'string' || value.length === 0) throw new AppError('secret_empty', 400, 'value must be a non-empty string (or null to remove the secret)');
    if (value.length > MAX_SECRET_LENGTH) throw new AppError('secret_too_long', 400, `value is longer than ${MAX_SECRET_LENGTH} characters`);
    if (value.trim() !== value) throw new AppError('secret_whitespace', 400, 'value starts or ends with a space or line break; paste it again without them');
    sendJson(res, 200, await change(name, value, actor(req)));
  });

  /** Applies stored secrets: the shell starts a fresh agent; the window reloads when it is back. */
  router.post('/restart', (req, res) => {
    log.info('status window: agent restart asked to use changed secrets');
    audit(actor(req), 'restart', { why: 'use changed secrets' });
    res.on('finish', () => bridge.restart());
    sendJson(res, 202, { restarting: true });
  });

  return router;
}

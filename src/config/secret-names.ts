import { AppError } from '../errors';

/**
 * The names of the agent's secrets (the config paths they fill) and the store they are kept in, shared
 * by the loader (ops/secrets.ts), the status window's secrets routes and the desktop app. Where the
 * values live and how they are resolved into the configuration is ops/secrets.ts.
 */

/** Every secret the agent knows, by the config path it fills. */
export const SECRET_NAMES = [
  'webhook.bearerToken',
  'webhook.tls.passphrase',
  'employees.auth.token',
  'employees.auth.password',
  'employees.auth.value',
  'tunnel.token',
  'metrics.bearerToken',
] as const;

export type SecretName = (typeof SECRET_NAMES)[number];

export function isSecretName(name: string): name is SecretName {
  return (SECRET_NAMES as readonly string[]).includes(name);
}

export function assertSecretName(name: string): SecretName {
  if (!isSecretName(name)) throw new AppError('unknown_secret', 400, `unknown secret ${JSON.stringify(name)}; known: ${SECRET_NAMES.join(', ')}`);
  return name;
}

export interface SecretStore {
  /** Where the secrets are kept, for messages (never the values). */
  readonly description: string;
  get(name: SecretName): string | null;
  set(name: SecretName, value: string): void;
  /** True when it was there. */
  delete(name: SecretName): boolean;
  names(): SecretName[];
}

/** `webhook.bearerToken` -> `POS_SYNC_SECRET_WEBHOOK_BEARERTOKEN`. */
export function secretEnvName(name: SecretName): string {
  return `POS_SYNC_SECRET_${name.replace(/[^A-Za-z0-9]+/g, '_').toUpperCase()}`;
}

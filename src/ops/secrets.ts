import fs from 'node:fs';
import path from 'node:path';
import { deepMerge, defaultDataDir, environmentOverrides, loadConfig, readConfigFile, secretsOf, type LoadOptions } from '../config/load';
import type { Config } from '../config/schema';
import { jsonErrorWhere } from '../domain/json-where';
import { AppError } from '../errors';
import { redactor } from '../log';
import { isSecretName, SECRET_NAMES, secretEnvName, type SecretName, type SecretStore } from '../config/secret-names';
import { writeFileExclusive } from '../files/exclusive-write';

/**
 * Secrets (the webhook bearer token, employee-interface credentials, the tunnel's token) live outside
 * the config file: in Electron's safeStorage (src/electron/safe-storage-secrets.ts), or headless in
 * environment variables and an owner-only JSON file. They are resolved into the configuration at load
 * time, by name, wherever the configuration leaves the value unset (null or absent).
 */

/** Secrets from environment variables (read-only): for services whose manager injects them. */
export class EnvSecretStore implements SecretStore {
  readonly description = 'environment variables POS_SYNC_SECRET_*';
  constructor(private readonly env: NodeJS.ProcessEnv = process.env) {}
  get(name: SecretName): string | null {
    const value = this.env[secretEnvName(name)];
    return value !== undefined && value.length > 0 ? value : null;
  }
  set(): void {
    throw new AppError('secret_store_read_only', 400, 'secrets from environment variables are set where the agent is started, not here');
  }
  delete(): boolean {
    return false;
  }
  names(): SecretName[] {
    return SECRET_NAMES.filter((n) => this.get(n) !== null);
  }
}

interface SecretFileContent {
  version: 1;
  secrets: Record<string, string>;
}

/**
 * Headless secret file: JSON, mode 0600, in the data folder. On POSIX a file that group or others may
 * read (or that another user owns) is refused rather than used, because then the secret has already
 * leaked. On Windows file modes mean nothing: the file sits in the user's profile, which only that user
 * (and administrators) can read; use the status window (DPAPI) where that is not enough.
 */
export class FileSecretStore implements SecretStore {
  constructor(
    readonly file: string,
    private readonly platform: NodeJS.Platform = process.platform,
  ) {}

  get description(): string {
    return `file ${this.file} (readable only by its owner)`;
  }

  private read(): SecretFileContent {
    let stat: fs.Stats;
    try {
      stat = fs.statSync(this.file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, secrets: {} };
      throw err;
    }
    if (this.platform !== 'win32') {
      if ((stat.mode & 0o077) !== 0) {
        throw new AppError(
          'secrets_file_insecure',
          500,
          `refusing to read ${this.file}: group or others may read it (mode ${(stat.mode & 0o777).toString(8)}); ` +
            `run: chmod 600 '${this.file}' — and change the secrets in it, since they may have been read`,
        );
      }
      const uid = process.getuid?.();
      if (uid !== undefined && stat.uid !== uid) {
        throw new AppError('secrets_file_insecure', 500, `refusing to read ${this.file}: it belongs to user id ${stat.uid}, not to the agent's user (${uid})`);
      }
    }
    let parsed: unknown;
    const text = fs.readFileSync(this.file, 'utf8');
    try {
      parsed = JSON.parse(text);
    } catch {
      // Never the parser's own message: it quotes the secrets around the error.
      throw new AppError('secrets_file_invalid', 500, `${this.file} is not valid JSON: ${jsonErrorWhere(text)}`);
    }
    const secrets = (parsed as { secrets?: unknown }).secrets;
    if (typeof secrets !== 'object' || secrets === null || Array.isArray(secrets)) {
      throw new AppError('secrets_file_invalid', 500, `${this.file} must hold {"version": 1, "secrets": {"name": "value"}}`);
    }
    return { version: 1, secrets: Object.fromEntries(Object.entries(secrets).filter(([, v]) => typeof v === 'string')) as Record<string, string> };
  }

  private write(content: SecretFileContent): void {
    // Created owner-only from the start (the value never sits in a readable file, even briefly), as
    // a new file under a name nobody can guess or plant a link at (secrets.file may name a folder
    // others can write), then renamed over the old.
    writeFileExclusive(this.file, `${JSON.stringify(content, null, 2)}\n`, 0o600);
  }

  get(name: SecretName): string | null {
    return this.read().secrets[name] ?? null;
  }

  set(name: SecretName, value: string): void {
    if (value.length === 0) throw new AppError('secret_empty', 400, `the value for ${name} is empty`);
    const content = this.read();
    content.secrets[name] = value;
    this.write(content);
  }

  delete(name: SecretName): boolean {
    const content = this.read();
    if (!(name in content.secrets)) return false;
    delete content.secrets[name];
    this.write(content);
    return true;
  }

  names(): SecretName[] {
    return Object.keys(this.read().secrets).filter(isSecretName);
  }
}

/** Environment variables first (the service manager's word wins), then the store that can be written. */
export class LayeredSecretStore implements SecretStore {
  constructor(
    readonly env: EnvSecretStore,
    readonly base: SecretStore,
  ) {}
  get description(): string {
    return `${this.env.description}, then ${this.base.description}`;
  }
  get(name: SecretName): string | null {
    return this.env.get(name) ?? this.base.get(name);
  }
  set(name: SecretName, value: string): void {
    this.base.set(name, value);
  }
  delete(name: SecretName): boolean {
    return this.base.delete(name);
  }
  names(): SecretName[] {
    const all = new Set([...this.env.names(), ...this.base.names()]);
    return SECRET_NAMES.filter((n) => all.has(n));
  }
  /** Where a secret currently comes from (for `secrets list`), or null when unset. */
  sourceOf(name: SecretName): 'environment' | 'store' | null {
    if (this.env.get(name) !== null) return 'environment';
    return this.base.get(name) !== null ? 'store' : null;
  }
}

export function headlessSecretStore(file: string, env: NodeJS.ProcessEnv = process.env): LayeredSecretStore {
  return new LayeredSecretStore(new EnvSecretStore(env), new FileSecretStore(file));
}

function getPath(root: unknown, keys: readonly string[]): unknown {
  let node = root;
  for (const key of keys) {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** Whether the (unvalidated) configuration has a place for this secret that it leaves unset. */
function wants(raw: unknown, name: SecretName): boolean {
  const keys = name.split('.');
  const current = getPath(raw, keys);
  if (current !== undefined && current !== null) return false;
  const parent = getPath(raw, keys.slice(0, -1));
  switch (name) {
    case 'webhook.bearerToken':
    case 'metrics.bearerToken':
      return true;
    case 'webhook.tls.passphrase':
      return typeof parent === 'object' && parent !== null && 'pfxFile' in parent;
    case 'employees.auth.token':
      return (parent as { type?: unknown } | undefined)?.type === 'bearer';
    case 'employees.auth.password':
      return (parent as { type?: unknown } | undefined)?.type === 'basic';
    case 'employees.auth.value':
      return (parent as { type?: unknown } | undefined)?.type === 'header';
    case 'tunnel.token':
      return typeof parent === 'object' && parent !== null;
  }
}

/** The overrides that fill each secret the configuration leaves unset from the store (pure apart from the store). */
export function secretOverrides(raw: unknown, store: Pick<SecretStore, 'get'>): { overrides: Record<string, unknown>; resolved: SecretName[] } {
  const overrides: Record<string, unknown> = {};
  const resolved: SecretName[] = [];
  for (const name of SECRET_NAMES) {
    if (!wants(raw, name)) continue;
    const value = store.get(name);
    if (value === null) continue;
    const keys = name.split('.');
    let node = overrides;
    for (const key of keys.slice(0, -1)) node = (node[key] ??= {}) as Record<string, unknown>;
    node[keys[keys.length - 1]!] = value;
    resolved.push(name);
  }
  return { overrides, resolved };
}

/**
 * The configuration as loadConfig would merge it, before validation: enough to find the data folder
 * and the secrets file even when the configuration is not yet valid (a required secret still unset).
 */
export function rawConfigInput(options: LoadOptions = {}): { raw: Record<string, unknown>; relativeTo: string } {
  const env = options.env ?? process.env;
  const fromFile = options.file ? readConfigFile(options.file) : {};
  const raw = deepMerge(deepMerge(deepMerge({ dataDir: options.defaultDataDir ?? defaultDataDir(env) }, fromFile), environmentOverrides(env)), options.overrides ?? {});
  return { raw: (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>, relativeTo: options.file ? path.dirname(path.resolve(options.file)) : process.cwd() };
}

/** The data folder the (possibly not yet valid) configuration points at (Electron puts its secrets file there). */
export function dataDirFor(options: LoadOptions = {}): string {
  const { raw, relativeTo } = rawConfigInput(options);
  return path.resolve(relativeTo, typeof raw.dataDir === 'string' ? raw.dataDir : (options.defaultDataDir ?? defaultDataDir(options.env ?? process.env)));
}

/** The secrets file the (possibly not yet valid) configuration points at. */
export function secretsFileFor(options: LoadOptions = {}): string {
  const { raw } = rawConfigInput(options);
  const dataDir = dataDirFor(options);
  const file = (raw.secrets as { file?: unknown } | undefined)?.file;
  return typeof file === 'string' && file.length > 0 ? path.resolve(dataDir, file) : path.join(dataDir, 'secrets.json');
}

export interface SecretLoadOptions extends LoadOptions {
  /** The store to read (Electron passes its safeStorage one); default: environment, then the secrets file. */
  store?: SecretStore;
}

/**
 * loadConfig plus secrets: what the CLI and the Electron shell call instead of loadConfig. Every secret
 * in the result (resolved or written in the file) is registered with the log redactor.
 */
export function loadConfigWithSecrets(options: SecretLoadOptions = {}): { config: Readonly<Config>; resolved: SecretName[]; store: SecretStore } {
  const store = options.store ?? headlessSecretStore(secretsFileFor(options), options.env ?? process.env);
  const { raw } = rawConfigInput(options);
  const { overrides, resolved } = secretOverrides(raw, store);
  for (const name of resolved) redactor.add(store.get(name));
  const config = loadConfig({ ...options, overrides: deepMerge(options.overrides ?? {}, overrides) as Record<string, unknown> });
  redactor.add(...secretsOf(config));
  return { config, resolved, store };
}

import fs from 'node:fs';
import path from 'node:path';
import { AppError } from '../errors';
import { EnvSecretStore, FileSecretStore, LayeredSecretStore, dataDirFor, rawConfigInput, secretOverrides, secretsFileFor } from '../ops/secrets';
import type { LoadOptions } from '../config/load';
import type { SecretSources } from './channel';
import { safeStorageSecretsFile } from '../ops/desktop-secrets-file';
import { SECRET_NAMES, isSecretName, type SecretName, type SecretStore } from '../config/secret-names';

/**
 * The desktop app's one secret store: secrets encrypted with Electron's safeStorage (DPAPI on Windows,
 * the Keychain on macOS, libsecret/kwallet on Linux), kept as base64 blobs in the owner-only file
 * <dataDir>/secrets.safe.json. Only the same OS user on the same machine can decrypt them. Only the
 * main process has safeStorage, so main resolves secrets and hands them to the agent process
 * (channel.ts). Environment variables POS_SYNC_SECRET_* still win over the file.
 *
 * No `electron` import here: main passes its safeStorage in, the tests a stand-in with the same three
 * methods. The app must be ready (`app.whenReady()`) before the first call.
 */

/** The part of Electron's safeStorage this store uses. */
export interface SafeStorageLike {
  isEncryptionAvailable(): boolean;
  encryptString(plainText: string): Buffer;
  decryptString(encrypted: Buffer): string;
  /** Linux only in Electron; absent elsewhere. */
  getSelectedStorageBackend?(): string;
}

/** Where the desktop app keeps its encrypted secrets (the command line reads the names there too). */
export { safeStorageSecretsFile };

export class SafeStorageSecretStore implements SecretStore {
  constructor(
    readonly file: string,
    private readonly safeStorage: SafeStorageLike,
    private readonly platform: NodeJS.Platform = process.platform,
  ) {}

  private backend(): string | null {
    return this.platform === 'linux' ? (this.safeStorage.getSelectedStorageBackend?.() ?? null) : null;
  }

  get description(): string {
    const backend = this.backend();
    return `${this.file}, encrypted with the system's credential store${backend ? ` (${backend})` : ''}`;
  }

  /** Whether secrets can be encrypted here (a keyring on Linux). */
  get available(): boolean {
    // On Linux without a keyring Electron falls back to a hard-coded key: that is obfuscation, not protection.
    return this.safeStorage.isEncryptionAvailable() && this.backend() !== 'basic_text';
  }

  private ensureAvailable(): void {
    if (!this.safeStorage.isEncryptionAvailable()) {
      throw new AppError('secret_store_unavailable', 500, 'the system credential store is not available (on Linux: no keyring); use POS_SYNC_SECRET_* environment variables');
    }
    if (this.backend() === 'basic_text') {
      throw new AppError('secret_store_unavailable', 500, 'no keyring is running, so secrets cannot be encrypted; use POS_SYNC_SECRET_* environment variables');
    }
  }

  private read(): Record<string, string> {
    let text: string;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw err;
    }
    let parsed: { secrets?: Record<string, unknown>; encryption?: unknown };
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      throw new AppError('secrets_file_invalid', 500, `${this.file} is not valid JSON; delete it and set the secrets again`);
    }
    if (parsed.encryption !== 'electron-safeStorage') {
      // A plain secrets file copied here would otherwise fail later as "cannot be decrypted".
      throw new AppError('secrets_file_invalid', 500, `${this.file} was not written by the desktop app; put plain secrets in secrets.json instead (the app moves them in at its next start)`);
    }
    const out: Record<string, string> = {};
    for (const [name, blob] of Object.entries(parsed.secrets ?? {})) if (typeof blob === 'string') out[name] = blob;
    return out;
  }

  private write(blobs: Record<string, string>): void {
    fs.mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
    const temp = `${this.file}.${process.pid}.tmp`;
    // Owner-only from creation, flushed before the rename so a crash leaves the old file or the new one.
    const fd = fs.openSync(temp, 'w', 0o600);
    try {
      fs.writeSync(fd, `${JSON.stringify({ version: 1, encryption: 'electron-safeStorage', secrets: blobs }, null, 2)}\n`);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.chmodSync(temp, 0o600);
    fs.renameSync(temp, this.file);
  }

  get(name: SecretName): string | null {
    const blob = this.read()[name];
    if (blob === undefined) return null;
    this.ensureAvailable();
    try {
      return this.safeStorage.decryptString(Buffer.from(blob, 'base64'));
    } catch {
      throw new AppError('secret_unreadable', 500, `the stored ${name} cannot be decrypted (was it saved by another user or machine?): set it again`);
    }
  }

  set(name: SecretName, value: string): void {
    if (value.length === 0) throw new AppError('secret_empty', 400, `the value for ${name} is empty`);
    this.ensureAvailable();
    const blobs = this.read();
    blobs[name] = this.safeStorage.encryptString(value).toString('base64');
    this.write(blobs);
  }

  delete(name: SecretName): boolean {
    const blobs = this.read();
    if (!(name in blobs)) return false;
    delete blobs[name];
    this.write(blobs);
    return true;
  }

  names(): SecretName[] {
    const stored = Object.keys(this.read());
    return SECRET_NAMES.filter((n) => stored.includes(n) && isSecretName(n));
  }
}

/** The desktop app's store: environment variables first, then secrets.safe.json in the data folder. */
export function desktopSecretStore(options: LoadOptions, safeStorage: SafeStorageLike, env: NodeJS.ProcessEnv = process.env): LayeredSecretStore {
  return new LayeredSecretStore(new EnvSecretStore(env), new SafeStorageSecretStore(safeStorageSecretsFile(dataDirFor(options)), safeStorage));
}

/**
 * Moves the secrets the CLI wrote (`secrets set`, plain secrets.json) into safeStorage, then removes the
 * plain file. Runs at every desktop start and does something only when that file exists, so it also
 * picks up a secret set with the CLI later. A value from the plain file replaces the stored one: it is
 * the newer word. Each value is read back decrypted before the plain file goes; a crash half-way leaves
 * the plain file, and the next start finishes the move.
 */
export function movePlainSecrets(plainFile: string, safe: SafeStorageSecretStore): SecretName[] {
  if (!fs.existsSync(plainFile)) return [];
  const plain = new FileSecretStore(plainFile);
  const names = plain.names();
  if (names.length > 0 && !safe.available) {
    throw new AppError(
      'secret_store_unavailable',
      500,
      `${plainFile} holds ${names.length} secret(s) but the system credential store is not available to encrypt them ` +
        '(on Linux: start a keyring such as gnome-keyring); or give them as POS_SYNC_SECRET_* environment variables and delete the file',
    );
  }
  for (const name of names) {
    const value = plain.get(name)!;
    safe.set(name, value);
    if (safe.get(name) !== value) throw new AppError('secret_move_failed', 500, `${name} did not read back from ${safe.file}; ${plainFile} is kept`);
  }
  fs.rmSync(plainFile);
  return names;
}

/**
 * What main hands the agent process at each start: the secrets its configuration asks for (decrypted;
 * an unreadable one fails here, with its name) and where each secret comes from, for the window.
 */
export function resolveDesktopSecrets(options: LoadOptions, store: LayeredSecretStore): { secrets: Partial<Record<SecretName, string>>; sources: SecretSources } {
  const { raw } = rawConfigInput(options);
  const { resolved } = secretOverrides(raw, store);
  const secrets: Partial<Record<SecretName, string>> = {};
  for (const name of resolved) secrets[name] = store.get(name)!;
  return { secrets, sources: secretSources(store) };
}

/** Where each secret is set, without decrypting any (so one unreadable value does not hide the others). */
export function secretSources(store: LayeredSecretStore): SecretSources {
  const fromEnv = new Set(store.env.names());
  const stored = new Set(store.base.names());
  const out: SecretSources = {};
  for (const name of SECRET_NAMES) out[name] = fromEnv.has(name) ? 'environment' : stored.has(name) ? 'store' : null;
  return out;
}

/** The plain file the CLI writes for this configuration (secrets.json or `secrets.file`). */
export function plainSecretsFile(options: LoadOptions): string {
  return secretsFileFor(options);
}

import fs from 'node:fs';
import path from 'node:path';
import { safeStorage } from 'electron';
import { AppError } from '../errors';
import { isSecretName, SECRET_NAMES, type SecretName, type SecretStore } from '../ops/secrets';

/**
 * Secrets for the status window's agent, encrypted with Electron's safeStorage (DPAPI on Windows, the
 * Keychain on macOS, libsecret/kwallet on Linux) and kept as base64 blobs in an owner-only JSON file.
 * Only the same OS user on the same machine can decrypt them. Needs the app to be ready
 * (`app.whenReady()`) before the first call. Use it layered under environment variables:
 * `new LayeredSecretStore(new EnvSecretStore(), new SafeStorageSecretStore(file))`, passed to
 * loadConfigWithSecrets({ store }).
 */
/** Where the status window keeps its encrypted secrets. */
export function safeStorageSecretsFile(dataDir: string): string {
  return path.join(dataDir, 'secrets.safe.json');
}

export class SafeStorageSecretStore implements SecretStore {
  constructor(readonly file: string) {}

  get description(): string {
    const backend = process.platform === 'linux' ? ` (${safeStorage.getSelectedStorageBackend()})` : '';
    return `${this.file}, encrypted with the system's credential store${backend}`;
  }

  private ensureAvailable(): void {
    if (!safeStorage.isEncryptionAvailable()) {
      throw new AppError('secret_store_unavailable', 500, 'the system credential store is not available (on Linux: no keyring); use POS_SYNC_SECRET_* environment variables');
    }
    // On Linux without a keyring Electron falls back to a hard-coded key: that is obfuscation, not protection.
    if (process.platform === 'linux' && safeStorage.getSelectedStorageBackend() === 'basic_text') {
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
    const parsed = JSON.parse(text) as { secrets?: Record<string, unknown> };
    const out: Record<string, string> = {};
    for (const [name, blob] of Object.entries(parsed.secrets ?? {})) if (typeof blob === 'string') out[name] = blob;
    return out;
  }

  private write(blobs: Record<string, string>): void {
    fs.mkdirSync(path.dirname(this.file), { recursive: true });
    const temp = `${this.file}.${process.pid}.tmp`;
    fs.writeFileSync(temp, `${JSON.stringify({ version: 1, encryption: 'electron-safeStorage', secrets: blobs }, null, 2)}\n`, { mode: 0o600 });
    fs.renameSync(temp, this.file);
  }

  get(name: SecretName): string | null {
    const blob = this.read()[name];
    if (blob === undefined) return null;
    this.ensureAvailable();
    try {
      return safeStorage.decryptString(Buffer.from(blob, 'base64'));
    } catch {
      throw new AppError('secret_unreadable', 500, `the stored ${name} cannot be decrypted (was it saved by another user or machine?): set it again`);
    }
  }

  set(name: SecretName, value: string): void {
    if (value.length === 0) throw new AppError('secret_empty', 400, `the value for ${name} is empty`);
    this.ensureAvailable();
    const blobs = this.read();
    blobs[name] = safeStorage.encryptString(value).toString('base64');
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

import fs from 'node:fs';
import path from 'node:path';
import { SECRET_NAMES, type SecretName } from '../config/secret-names';

/**
 * Where the desktop app keeps its secrets (encrypted with Electron's safeStorage by its main process,
 * electron/safe-storage-secrets.ts), and what any process of the same account can learn from the file
 * without decrypting: which names it holds. The command line uses this to tell a secret the app keeps
 * (`secrets show` then asks the running app's agent) from one that is not set. No Electron and no
 * SQLite here: the desktop's main process loads this file too.
 */

export function safeStorageSecretsFile(dataDir: string): string {
  return path.join(dataDir, 'secrets.safe.json');
}

/** The names stored in the desktop app's file; none when there is no such file or it cannot be read. */
export function desktopStoredNames(file: string): SecretName[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return [];
  }
  const { encryption, secrets } = (parsed ?? {}) as { encryption?: unknown; secrets?: unknown };
  if (encryption !== 'electron-safeStorage' || typeof secrets !== 'object' || secrets === null) return [];
  return SECRET_NAMES.filter((name) => typeof (secrets as Record<string, unknown>)[name] === 'string');
}

/** How that file's values are protected, in the words of the platform (for a person at the site). */
export function desktopEncryptionWords(platform: NodeJS.Platform = process.platform): string {
  if (platform === 'win32') return 'encrypted for this Windows account';
  if (platform === 'darwin') return "encrypted with this user's Keychain";
  return "encrypted with this user's keyring";
}

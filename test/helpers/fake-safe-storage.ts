import crypto from 'node:crypto';
import type { SafeStorageLike } from '../../src/electron/safe-storage-secrets';

/**
 * A stand-in for Electron's safeStorage (which needs a running Electron): real AES-256-GCM under a key
 * that belongs to this "machine", so a blob from another key fails to decrypt as it would for another
 * OS user, and the file never holds the plain value.
 */
export class FakeSafeStorage implements SafeStorageLike {
  readonly key: Buffer;
  available = true;
  backend: string | undefined = undefined;
  encryptions = 0;
  /** Throws on the n-th encryptString (1-based), to stop a move half-way. */
  failOnEncryption: number | null = null;

  constructor(seed = 'this machine') {
    this.key = crypto.createHash('sha256').update(seed).digest();
  }

  isEncryptionAvailable(): boolean {
    return this.available;
  }

  getSelectedStorageBackend(): string {
    return this.backend ?? 'gnome_libsecret';
  }

  encryptString(plainText: string): Buffer {
    this.encryptions++;
    if (this.failOnEncryption === this.encryptions) throw new Error('keyring went away');
    const iv = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plainText, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]);
  }

  decryptString(encrypted: Buffer): string {
    const decipher = crypto.createDecipheriv('aes-256-gcm', this.key, encrypted.subarray(0, 12));
    decipher.setAuthTag(encrypted.subarray(12, 28));
    return Buffer.concat([decipher.update(encrypted.subarray(28)), decipher.final()]).toString('utf8');
  }
}

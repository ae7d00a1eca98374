import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import {
  SafeStorageSecretStore,
  desktopSecretStore,
  movePlainSecrets,
  plainSecretsFile,
  resolveDesktopSecrets,
  safeStorageSecretsFile,
  secretSources,
} from '../../../src/electron/safe-storage-secrets';
import { headlessSecretStore, loadConfigWithSecrets } from '../../../src/ops/secrets';
import { FakeSafeStorage } from '../../helpers/fake-safe-storage';

let dir: string;
let configFile: string;
const TOKEN = 'bearer-token-from-the-readme-0123456789';

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'safe-secrets-'));
  fs.chmodSync(dir, 0o700);
  configFile = path.join(dir, 'config.json');
  fs.writeFileSync(configFile, JSON.stringify({ dataDir: dir, tunnel: { command: 'cloudflared', args: [], publicUrl: 'https://tunnel.example' } }));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** What `pos-sync-agent secrets set NAME` does (src/cli/commands/ops.ts). */
function cliSecretsSet(name: 'webhook.bearerToken' | 'tunnel.token', value: string): void {
  headlessSecretStore(plainSecretsFile({ file: configFile }), {}).set(name, value);
}

describe('a desktop site that followed the README (secrets set with the CLI)', () => {
  it('starts with the secret: it is moved into secrets.safe.json (encrypted) and the plain file is removed', () => {
    cliSecretsSet('webhook.bearerToken', TOKEN);
    cliSecretsSet('tunnel.token', 'tunnel-token-abcdef');
    const plain = path.join(dir, 'secrets.json');
    assert.ok(fs.existsSync(plain));
    const safeStorage = new FakeSafeStorage();
    const store = desktopSecretStore({ file: configFile }, safeStorage, {});

    const moved = movePlainSecrets(plainSecretsFile({ file: configFile }), store.base as SafeStorageSecretStore);

    assert.deepEqual(moved.sort(), ['tunnel.token', 'webhook.bearerToken']);
    assert.equal(fs.existsSync(plain), false, 'the plain file is gone');
    const safeFile = safeStorageSecretsFile(dir);
    const text = fs.readFileSync(safeFile, 'utf8');
    assert.doesNotMatch(text, new RegExp(TOKEN), 'no plain value in secrets.safe.json');
    assert.equal(JSON.parse(text).encryption, 'electron-safeStorage');
    assert.equal(fs.statSync(safeFile).mode & 0o777, 0o600);
    // What main hands the agent process, and the configuration the agent builds from it.
    const { secrets, sources } = resolveDesktopSecrets({ file: configFile }, store);
    assert.equal(secrets['webhook.bearerToken'], TOKEN);
    assert.equal(secrets['tunnel.token'], 'tunnel-token-abcdef');
    assert.equal(sources['webhook.bearerToken'], 'store');
    assert.equal(sources['employees.auth.token'], null);
    const { config } = loadConfigWithSecrets({ file: configFile, env: {}, store: { description: 'handed', get: (n) => secrets[n] ?? null, set() {}, delete: () => false, names: () => [] } });
    assert.equal(config.webhook.bearerToken, TOKEN);
  });

  it('the CLI plain file is never read as if encrypted (the old failure, secret_unreadable at start)', () => {
    cliSecretsSet('webhook.bearerToken', TOKEN);
    const wrong = new SafeStorageSecretStore(path.join(dir, 'secrets.json'), new FakeSafeStorage());
    assert.throws(() => wrong.get('webhook.bearerToken'), (err: Error & { id?: string }) => err.id === 'secrets_file_invalid' && /secrets\.json/.test(err.message));
  });

  it('a later `secrets set` wins over the stored value at the next start, and a start without a plain file changes nothing', () => {
    const safeStorage = new FakeSafeStorage();
    const store = desktopSecretStore({ file: configFile }, safeStorage, {});
    store.set('webhook.bearerToken', 'set-in-the-window-1234');
    cliSecretsSet('webhook.bearerToken', TOKEN);
    movePlainSecrets(plainSecretsFile({ file: configFile }), store.base as SafeStorageSecretStore);
    assert.equal(store.get('webhook.bearerToken'), TOKEN);
    const before = fs.readFileSync(safeStorageSecretsFile(dir), 'utf8');
    assert.deepEqual(movePlainSecrets(plainSecretsFile({ file: configFile }), store.base as SafeStorageSecretStore), []);
    assert.equal(fs.readFileSync(safeStorageSecretsFile(dir), 'utf8'), before);
  });

  it('a move stopped half-way keeps the plain file; the next start finishes it', () => {
    cliSecretsSet('webhook.bearerToken', TOKEN);
    cliSecretsSet('tunnel.token', 'tunnel-token-abcdef');
    const safeStorage = new FakeSafeStorage();
    safeStorage.failOnEncryption = 2;
    const store = desktopSecretStore({ file: configFile }, safeStorage, {});
    assert.throws(() => movePlainSecrets(plainSecretsFile({ file: configFile }), store.base as SafeStorageSecretStore), /keyring went away/);
    assert.ok(fs.existsSync(path.join(dir, 'secrets.json')));
    safeStorage.failOnEncryption = null;
    assert.equal(movePlainSecrets(plainSecretsFile({ file: configFile }), store.base as SafeStorageSecretStore).length, 2);
    assert.equal(store.get('tunnel.token'), 'tunnel-token-abcdef');
    assert.equal(fs.existsSync(path.join(dir, 'secrets.json')), false);
  });

  it('without a credential store (or with Linux basic_text) nothing moves and the error says what to do', () => {
    cliSecretsSet('webhook.bearerToken', TOKEN);
    for (const setUp of [(s: FakeSafeStorage) => (s.available = false), (s: FakeSafeStorage) => (s.backend = 'basic_text')]) {
      const safeStorage = new FakeSafeStorage();
      setUp(safeStorage);
      const safe = new SafeStorageSecretStore(safeStorageSecretsFile(dir), safeStorage, 'linux');
      assert.throws(() => movePlainSecrets(plainSecretsFile({ file: configFile }), safe), (err: Error & { id?: string }) => err.id === 'secret_store_unavailable' && /POS_SYNC_SECRET_/.test(err.message));
      assert.ok(fs.existsSync(path.join(dir, 'secrets.json')), 'the plain file is kept');
      assert.equal(fs.existsSync(safeStorageSecretsFile(dir)), false);
    }
  });

  it('a plain file others may read is refused, not moved (the secret may have leaked: change it)', () => {
    cliSecretsSet('webhook.bearerToken', TOKEN);
    fs.chmodSync(path.join(dir, 'secrets.json'), 0o644);
    const safe = new SafeStorageSecretStore(safeStorageSecretsFile(dir), new FakeSafeStorage());
    assert.throws(() => movePlainSecrets(plainSecretsFile({ file: configFile }), safe), (err: Error & { id?: string }) => err.id === 'secrets_file_insecure');
    assert.equal(fs.existsSync(safeStorageSecretsFile(dir)), false);
  });
});

describe('resolving secrets for the agent process', () => {
  it('environment variables win over the stored value and show as such', () => {
    const store = desktopSecretStore({ file: configFile }, new FakeSafeStorage(), { POS_SYNC_SECRET_WEBHOOK_BEARERTOKEN: 'from-env-token-9876' });
    store.set('webhook.bearerToken', TOKEN);
    const { secrets, sources } = resolveDesktopSecrets({ file: configFile, env: {} }, store);
    assert.equal(secrets['webhook.bearerToken'], 'from-env-token-9876');
    assert.equal(sources['webhook.bearerToken'], 'environment');
  });

  it('hands over only what the configuration asks for', () => {
    const store = desktopSecretStore({ file: configFile }, new FakeSafeStorage(), {});
    store.set('employees.auth.password', 'not-asked-for-pw');
    const { secrets, sources } = resolveDesktopSecrets({ file: configFile, env: {} }, store);
    assert.equal(secrets['employees.auth.password'], undefined);
    assert.equal(sources['employees.auth.password'], 'store');
  });

  it('a value stored by another user or machine fails with its name, and the listing still works', () => {
    new SafeStorageSecretStore(safeStorageSecretsFile(dir), new FakeSafeStorage('another machine')).set('webhook.bearerToken', TOKEN);
    const store = desktopSecretStore({ file: configFile }, new FakeSafeStorage(), {});
    assert.throws(() => resolveDesktopSecrets({ file: configFile, env: {} }, store), (err: Error & { id?: string }) => err.id === 'secret_unreadable' && /webhook\.bearerToken/.test(err.message));
    assert.equal(secretSources(store)['webhook.bearerToken'], 'store');
  });
});

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { readUiSettingsFile, UiSettingsStore } from '../../../src/admin/settings';
import { loadOrCreateToken } from '../../../src/admin/token';
import { tempDir } from '../../helpers/fixtures';

describe('UiSettingsStore', () => {
  it('defaults, validates, persists', () => {
    const dir = tempDir();
    const store = new UiSettingsStore(dir);
    assert.deepEqual(store.get(), { startAtLogin: true, retention: {} });
    assert.throws(() => store.update({ startAtLogin: 'yes' }), /startAtLogin/);
    assert.throws(() => store.update({ retentionDays: 3 }), /unknown setting/);
    assert.deepEqual(store.update({ startAtLogin: false }), { startAtLogin: false, retention: {} });
    assert.deepEqual(new UiSettingsStore(dir).get(), { startAtLogin: false, retention: {} });
    assert.deepEqual(JSON.parse(fs.readFileSync(path.join(dir, 'ui-settings.json'), 'utf8')), { startAtLogin: false, retention: {} });
  });
  it('reads a file written before retention existed', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'ui-settings.json'), JSON.stringify({ startAtLogin: false }));
    assert.deepEqual(new UiSettingsStore(dir).get(), { startAtLogin: false, retention: {} });
  });
  it('merges retention periods key by key; null goes back to the configured value', () => {
    const dir = tempDir();
    const store = new UiSettingsStore(dir);
    assert.deepEqual(store.update({ retention: { rawPayloadDays: 14 } }).retention, { rawPayloadDays: 14 });
    assert.deepEqual(store.update({ retention: { deliveryDays: 90 } }).retention, { rawPayloadDays: 14, deliveryDays: 90 });
    assert.deepEqual(store.update({ startAtLogin: false }).retention, { rawPayloadDays: 14, deliveryDays: 90 }, 'other settings leave it alone');
    assert.deepEqual(store.update({ retention: { rawPayloadDays: null } }).retention, { deliveryDays: 90 });
    assert.deepEqual(readUiSettingsFile(path.join(dir, 'ui-settings.json')).retention, { deliveryDays: 90 });
    for (const bad of [0, -1, 1.5, 3651, '30']) assert.throws(() => store.update({ retention: { rangeDays: bad } }), /retention\.rangeDays/, String(bad));
    assert.throws(() => store.update({ retention: { batchSize: 10 } }), /unknown setting|batchSize/);
    assert.deepEqual(store.get().retention, { deliveryDays: 90 }, 'a refused change changes nothing');
  });
  it('refuses a corrupt file with its name', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'ui-settings.json'), '{nope');
    assert.throws(() => new UiSettingsStore(dir), /ui-settings\.json is not valid JSON/);
  });
});

describe('loadOrCreateToken', () => {
  it('creates once, reuses, tightens permissions, refuses junk', () => {
    const dir = tempDir();
    const file = path.join(dir, 'sub', 'admin-token');
    const a = loadOrCreateToken(file);
    assert.equal(loadOrCreateToken(file), a);
    if (process.platform !== 'win32') {
      fs.chmodSync(file, 0o644);
      loadOrCreateToken(file);
      assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    }
    fs.writeFileSync(file, 'short');
    assert.throws(() => loadOrCreateToken(file), /does not hold a valid admin token/);
  });
});

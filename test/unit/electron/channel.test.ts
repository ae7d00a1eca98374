import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseChildMessage, parseParentMessage } from '../../../src/electron/channel';

describe('agent process -> main messages', () => {
  it('accepts ready, status, fatal, secret-set and restart-request', () => {
    const good: unknown[] = [
      { type: 'ready', adminLoginUrl: 'http://127.0.0.1:8780/?token=abc', adminOrigin: 'http://127.0.0.1:8780' },
      { type: 'status', colour: 'amber', summary: 'POS Sync Agent — paused', paused: true, startAtLogin: false },
      { type: 'fatal', id: 'config_invalid', message: 'webhook.port: must be a number' },
      { type: 'secret-set', requestId: 3, name: 'webhook.bearerToken', value: 's3cret-token' },
      { type: 'secret-set', requestId: 4, name: 'tunnel.token', value: null },
      { type: 'restart-request' },
      { type: 'login-link', url: 'http://127.0.0.1:8780/?login=abc' },
    ];
    for (const message of good) {
      const parsed = parseChildMessage(message);
      assert.equal(parsed.ok, true, JSON.stringify(message));
      if (parsed.ok) assert.deepEqual(parsed.message, message);
    }
  });

  it('refuses unknown types, extra keys, bad colours, non-http URLs and unknown secret names', () => {
    const bad: unknown[] = [
      null,
      'ready',
      { type: 'hello' },
      { type: 'ready', adminLoginUrl: 'file:///etc/passwd', adminOrigin: 'http://127.0.0.1:1' },
      { type: 'ready', adminLoginUrl: 'http://127.0.0.1:1/', adminOrigin: 'http://127.0.0.1:1', extra: 1 },
      { type: 'status', colour: 'purple', summary: 'x', paused: false, startAtLogin: false },
      { type: 'status', colour: 'green', summary: 'x', paused: 'no', startAtLogin: false },
      { type: 'fatal', id: '', message: 'x' },
      { type: 'secret-set', requestId: 1, name: 'database.password', value: 'x' },
      { type: 'secret-set', requestId: -1, name: 'tunnel.token', value: 'x' },
      { type: 'secret-set', requestId: 1, name: 'tunnel.token', value: '' },
      { type: 'login-link', url: 'file:///etc/passwd' },
      { type: 'login-link' },
    ];
    for (const message of bad) assert.equal(parseChildMessage(message).ok, false, JSON.stringify(message));
  });

  it('names the field that is wrong, never the value (a malformed secret-set must not leak into the log)', () => {
    const parsed = parseChildMessage({ type: 'secret-set', requestId: 1, name: 'nope', value: 'hunter2-value' });
    assert.equal(parsed.ok, false);
    if (!parsed.ok) {
      assert.match(parsed.reason, /^name: /);
      assert.doesNotMatch(parsed.reason, /hunter2/);
    }
  });
});

describe('main -> agent process messages', () => {
  it('accepts start, stop, pause, start-at-login and secret-result', () => {
    const good: unknown[] = [
      { type: 'start', configFile: '/etc/pos/config.json', secrets: { 'webhook.bearerToken': 'abcd' }, sources: { 'webhook.bearerToken': 'store', 'tunnel.token': null } },
      { type: 'start', configFile: null, secrets: {}, sources: {} },
      { type: 'stop' },
      { type: 'pause', paused: false },
      { type: 'start-at-login', enabled: true },
      { type: 'login-link-request' },
      { type: 'secret-result', requestId: 2, sources: { 'tunnel.token': 'environment' }, error: null },
      { type: 'secret-result', requestId: 2, sources: {}, error: { id: 'secret_store_unavailable', message: 'no keyring' } },
    ];
    for (const message of good) {
      const parsed = parseParentMessage(message);
      assert.equal(parsed.ok, true, JSON.stringify(message));
      if (parsed.ok) assert.deepEqual(parsed.message, message);
    }
  });

  it('refuses malformed messages', () => {
    const bad: unknown[] = [
      undefined,
      { type: 'start', configFile: '', secrets: {}, sources: {} },
      { type: 'start', configFile: null, secrets: { 'not.a.secret': 'x' }, sources: {} },
      { type: 'start', configFile: null, secrets: { 'tunnel.token': '' }, sources: {} },
      { type: 'stop', now: true },
      { type: 'pause' },
      { type: 'secret-result', requestId: 1, sources: { 'tunnel.token': 'disk' }, error: null },
      { type: 'kill' },
      { type: 'login-link-request', url: 'http://127.0.0.1:1/' },
    ];
    for (const message of bad) assert.equal(parseParentMessage(message).ok, false, JSON.stringify(message));
  });
});

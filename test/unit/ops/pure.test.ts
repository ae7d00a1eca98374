import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { maskConfig, parseConfig, secretsOf } from '../../../src/config/load';
import { backupName, backupsToDelete } from '../../../src/ops/backup/files';
import { nextBackupDue } from '../../../src/ops/backup/service';
import { isClockWrong, skewFromDateHeader, timezoneMismatch, utcOffsetMinutes, ClockWatch } from '../../../src/clock';
import { clockState, siteTimezones } from '../../../src/ops/clock-service';
import { classifyDisk } from '../../../src/ops/disk';
import { retentionCutoffs } from '../../../src/ops/retention';
import { EnvSecretStore, FileSecretStore, LayeredSecretStore, secretOverrides } from '../../../src/ops/secrets';
import { backoffDelay, detectWake, substituteArgs } from '../../../src/ops/tunnel';
import { tempDir } from '../../helpers/fixtures';
import { secretEnvName, type SecretName } from '../../../src/config/secret-names';

const mapStore = (values: Partial<Record<SecretName, string>>) => ({ get: (n: SecretName) => values[n] ?? null });

describe('tunnel: back-off, wake detection, argument placeholders', () => {
  it('doubles the delay from the initial one and caps it', () => {
    assert.deepEqual([1, 2, 3, 4, 5, 6, 7].map((a) => backoffDelay(a, 1000, 30_000)), [1000, 2000, 4000, 8000, 16_000, 30_000, 30_000]);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 10, max: 10_000 }), fc.integer({ min: 10, max: 100_000 }), (attempt, initial, max) => {
        const d = backoffDelay(attempt, initial, max);
        return d <= max && d >= Math.min(initial, max) && backoffDelay(attempt + 1, initial, max) >= d;
      }),
    );
  });
  it('takes a wall-clock jump much longer than the tick for a wake-up, and nothing else', () => {
    assert.equal(detectWake(0, 10_000, 10_000, 30_000), false);
    assert.equal(detectWake(0, 39_999, 10_000, 30_000), false);
    assert.equal(detectWake(0, 40_001, 10_000, 30_000), true);
    assert.equal(detectWake(0, -5_000, 10_000, 30_000), false, 'a clock set back is not a wake-up');
  });
  it('fills {webhookPort} and {webhookUrl}', () => {
    assert.deepEqual(substituteArgs(['http', '{webhookPort}', '--url={webhookUrl}/x'], { webhookPort: 8787, webhookUrl: 'http://127.0.0.1:8787' }), [
      'http',
      '8787',
      '--url=http://127.0.0.1:8787/x',
    ]);
  });
});

describe('backup schedule and keep-N', () => {
  it('daily: the first configured time after the last backup; catch-up when missed', () => {
    const opts = { time: '03:00', intervalHours: null };
    const last = new Date(2026, 0, 10, 3, 0, 5);
    assert.deepEqual(nextBackupDue(last, opts, new Date(2026, 0, 10, 12)), new Date(2026, 0, 11, 3, 0, 0));
    const early = new Date(2026, 0, 10, 1, 0);
    assert.deepEqual(nextBackupDue(early, opts, new Date(2026, 0, 10, 2)), new Date(2026, 0, 10, 3, 0));
    const now = new Date(2026, 0, 20, 9);
    assert.equal(nextBackupDue(null, opts, now), now);
    // Machine off for a week: due long ago, i.e. now.
    assert.ok(nextBackupDue(last, opts, now).getTime() < now.getTime());
  });
  it('interval mode', () => {
    const last = new Date('2026-01-10T00:00:00Z');
    assert.deepEqual(nextBackupDue(last, { time: '03:00', intervalHours: 6 }, last), new Date('2026-01-10T06:00:00Z'));
  });
  it('keeps the newest N (at least one) and names sort by age', () => {
    const names = ['e', 'd', 'c', 'b', 'a'].map((name) => ({ name }));
    assert.deepEqual(backupsToDelete(names, 3).map((n) => n.name), ['b', 'a']);
    assert.deepEqual(backupsToDelete(names, 0).map((n) => n.name), ['d', 'c', 'b', 'a']);
    fc.assert(
      fc.property(fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }), fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }), (a, b) => {
        const [na, nb] = [backupName(a), backupName(b)];
        return Math.sign(a.getTime() - b.getTime()) === (na < nb ? -1 : na > nb ? 1 : 0);
      }),
    );
  });
});

describe('retention cutoffs and disk levels', () => {
  it('computes cutoffs per location in its own timezone', () => {
    const config = parseConfig({ dataDir: '/tmp/x', retention: { rawPayloadDays: 30, quarantineDays: 90, rangeDays: 10, deliveryDays: 365 } });
    // 23:30 UTC on 31 Dec is already 1 Jan in Auckland.
    const now = new Date('2025-12-31T23:30:00Z');
    const c = retentionCutoffs(config.retention, [
      { locationId: 1, timezone: 'Europe/London' },
      { locationId: 2, timezone: 'Pacific/Auckland' },
    ], now);
    assert.equal(c.rawPayloadBefore, '2025-12-01T23:30:00.000Z');
    assert.equal(c.quarantineBefore, '2025-10-02T23:30:00.000Z');
    assert.equal(c.rangesEndedBefore.get(1), '2025-12-21');
    assert.equal(c.rangesEndedBefore.get(2), '2025-12-22');
  });
  it('classifies free space by bytes and share', () => {
    const limits = { warnFreeBytes: 1000, warnFreePercent: 10, criticalFreeBytes: 100, checkIntervalMinutes: 5 };
    assert.equal(classifyDisk(50, 100_000, limits), 'critical');
    assert.equal(classifyDisk(500, 100_000, limits), 'low');
    assert.equal(classifyDisk(5_000, 100_000, limits), 'low', 'under 10 %');
    assert.equal(classifyDisk(20_000, 100_000, limits), 'ok');
  });
});

describe('clock and timezone', () => {
  it('estimates skew from a Date header around the round trip', () => {
    const sent = Date.parse('2026-03-01T10:00:00.000Z');
    const s = skewFromDateHeader('Sun, 01 Mar 2026 10:05:00 GMT', sent, sent + 200)!;
    assert.equal(s.skewMs, 300_000 + 500 - 100);
    assert.equal(s.uncertaintyMs, 600);
    assert.equal(isClockWrong(s, 120_000), true);
    assert.equal(isClockWrong(skewFromDateHeader('Sun, 01 Mar 2026 10:00:01 GMT', sent, sent + 200)!, 120_000), false);
    assert.equal(skewFromDateHeader('garbage', sent, sent), null);
    assert.equal(skewFromDateHeader(null, sent, sent), null);
  });
  it('finds a timezone that shows another local time now, and only now', () => {
    const now = new Date('2026-01-15T12:00:00Z');
    assert.equal(timezoneMismatch('Europe/London', 'Europe/London', now), null);
    assert.equal(timezoneMismatch('Europe/Dublin', 'Europe/London', now), null);
    assert.equal(timezoneMismatch('Europe/Paris', 'Europe/London', now)?.differsAt, now.toISOString());
    // UTC shows London's time in winter: no false alarm in November or January; in summer it differs.
    assert.equal(timezoneMismatch('UTC', 'Europe/London', now), null);
    assert.equal(timezoneMismatch('UTC', 'Europe/London', new Date('2026-11-25T16:00:00Z')), null);
    assert.equal(timezoneMismatch('UTC', 'Europe/London', new Date('2026-07-01T12:00:00Z'))?.locationOffsetMinutes, 60);
    assert.equal(utcOffsetMinutes('Asia/Kolkata', now), 330);
  });
  it('clock state warns for a wrong clock and a wrong timezone', () => {
    const config = parseConfig({ dataDir: '/tmp/x', defaultTimezone: 'Europe/London', locations: { '5': { timezone: 'Europe/Paris' } } });
    const watch = new ClockWatch();
    const t = Date.parse('2026-01-15T12:00:00Z');
    watch.observe('employee interface', new Date(t + 600_000).toUTCString(), t, t + 10);
    const state = clockState(config, 'Europe/London', watch.observations(), new Date(t), siteTimezones(config, []));
    assert.equal(state.wrongClock.length, 1);
    assert.equal(state.timezoneMismatches.map((m) => m.locationTimezone).join(), 'Europe/Paris');
    assert.match(state.warnings.join('\n'), /system clock is 600 s behind employee interface/);
    assert.match(state.warnings.join('\n'), /set this PC to Europe\/Paris/);
  });
});

describe('secrets', () => {
  it('fills only secrets the configuration leaves unset, where it has a place for them', () => {
    const store = mapStore({ 'webhook.bearerToken': 'b-token', 'employees.auth.token': 'e-token', 'employees.auth.password': 'pw', 'tunnel.token': 't-token' });
    assert.deepEqual(secretOverrides({ webhook: { bearerToken: 'from-file' } }, store).resolved, []);
    const r = secretOverrides({ employees: { auth: { type: 'bearer' } }, tunnel: { command: 'x' } }, store);
    assert.deepEqual(r.resolved, ['webhook.bearerToken', 'employees.auth.token', 'tunnel.token']);
    assert.deepEqual(r.overrides, { webhook: { bearerToken: 'b-token' }, employees: { auth: { token: 'e-token' } }, tunnel: { token: 't-token' } });
    assert.deepEqual(secretOverrides({ employees: { auth: { type: 'basic', username: 'u' } } }, store).resolved, ['webhook.bearerToken', 'employees.auth.password']);
    assert.deepEqual(secretOverrides({ webhook: { bearerToken: null } }, mapStore({})).resolved, []);
  });
  it('environment variables take precedence over the file', () => {
    const dir = tempDir();
    const file = new FileSecretStore(path.join(dir, 'secrets.json'));
    file.set('webhook.bearerToken', 'from-file');
    const layered = new LayeredSecretStore(new EnvSecretStore({ [secretEnvName('webhook.bearerToken')]: 'from-env' }), file);
    assert.equal(secretEnvName('employees.auth.password'), 'POS_SYNC_SECRET_EMPLOYEES_AUTH_PASSWORD');
    assert.equal(layered.get('webhook.bearerToken'), 'from-env');
    assert.equal(layered.sourceOf('webhook.bearerToken'), 'environment');
    assert.equal(new LayeredSecretStore(new EnvSecretStore({}), file).get('webhook.bearerToken'), 'from-file');
  });
  it('writes the file owner-only and refuses one others can read', () => {
    const file = path.join(tempDir(), 'sub', 'secrets.json');
    const store = new FileSecretStore(file);
    store.set('tunnel.token', 'abc123');
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(store.names(), ['tunnel.token']);
    fs.chmodSync(file, 0o640);
    assert.throws(() => store.get('tunnel.token'), /group or others may read it \(mode 640\)/);
    // Windows has no such modes: not refused there.
    assert.equal(new FileSecretStore(file, 'win32').get('tunnel.token'), 'abc123');
    fs.chmodSync(file, 0o600);
    assert.equal(store.delete('tunnel.token'), true);
    assert.equal(store.get('tunnel.token'), null);
  });
  it('masks and registers a token passed in the tunnel arguments', () => {
    const config = { tunnel: { args: ['tunnel', 'run', '--token', 'abcd1234', '--authtoken=efgh5678', '--url', 'http://x'], token: null } };
    assert.deepEqual((maskConfig(config) as typeof config).tunnel.args, ['tunnel', 'run', '--token', '********', '--authtoken=********', '--url', 'http://x']);
    assert.deepEqual(secretsOf(config), ['abcd1234', 'efgh5678']);
  });
});

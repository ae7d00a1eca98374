import { TODAY_STATEMENT } from '../../../src/domain/today';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  backupAlerts,
  backupPanel,
  clockAlerts,
  diskAlerts,
  diskPanel,
  pruneCountsText,
  retentionPanel,
  tunnelAlerts,
  tunnelPanel,
  tunnelStateText,
} from '../../../src/ops/panels';
import { effectiveRetention } from '../../../src/ops/retention';
import type { BackupState, ClockState, DiskState, RetentionState, TunnelState } from '../../../src/ops/states';
import { testConfig } from '../../helpers/fixtures';

const fmt = (iso: string): string => `<${iso.slice(11, 19)}>`;
const config = testConfig();

function tunnel(extra: Partial<TunnelState> = {}): TunnelState {
  return {
    phase: 'running',
    reason: null,
    publicUrl: 'https://pos-0042.example.com',
    pid: 4242,
    startedAt: '2027-01-04T09:00:00.000Z',
    restarts: 0,
    nextRestartAt: null,
    lastExit: null,
    lastCheck: { at: '2027-01-04T09:01:00.000Z', ok: true, status: 200, ms: 12, error: null },
    consecutiveFailedChecks: 0,
    lastWakeAt: null,
    output: ['INF Registered tunnel connection', 'ERR connection to edge lost'],
    updatedAt: '2027-01-04T09:01:00.000Z',
    agentPid: 1,
    ...extra,
  };
}

function disk(extra: Partial<DiskState> = {}): DiskState {
  return { level: 'ok', freeBytes: 50 * 2 ** 30, totalBytes: 100 * 2 ** 30, databaseBytes: 4 * 2 ** 20, walBytes: 0, message: null, checkedAt: '2027-01-04T09:00:00.000Z', ...extra };
}

describe('tunnel in the window', () => {
  it('has no banner while running or on its first start', () => {
    assert.deepEqual(tunnelAlerts(tunnel(), 3), []);
    assert.deepEqual(tunnelAlerts(tunnel({ phase: 'starting', reason: null }), 3), []);
    assert.deepEqual(tunnelAlerts(tunnel({ phase: 'starting', reason: 'connecting: no answer within 10 s' }), 3), [], 'still connecting after the first start');
  });
  it('says restarting (amber) with why, and the public address', () => {
    const [a] = tunnelAlerts(tunnel({ phase: 'restarting', reason: 'exited with code 3', restarts: 2 }), 3);
    assert.equal(a!.light, 'amber');
    assert.equal(a!.title, 'The tunnel is restarting — updates cannot arrive meanwhile.');
    assert.match(a!.text, /https:\/\/pos-0042\.example\.com/);
    assert.match(a!.text, /Why: exited with code 3\. .*\(2 restarts so far\)/);
    assert.deepEqual(a!.details, ['Tunnel output: INF Registered tunnel connection', 'Tunnel output: ERR connection to edge lost']);
    const [again] = tunnelAlerts(tunnel({ phase: 'starting', reason: 'restarted: exited with code 3', restarts: 1 }), 3);
    assert.equal(again!.light, 'amber');
    assert.match(again!.text, /It was restarted \(exited with code 3\)/);
  });
  it('says unreachable from outside (red) with the failed check', () => {
    const state = tunnel({
      phase: 'unreachable',
      reason: 'https://pos-0042.example.com/healthz not reachable from outside: no answer within 10 s',
      consecutiveFailedChecks: 2,
      lastCheck: { at: '2027-01-04T09:02:00.000Z', ok: false, status: null, ms: 10_000, error: 'no answer within 10 s' },
    });
    const [a] = tunnelAlerts(state, 3);
    assert.equal(a!.light, 'red');
    assert.equal(a!.title, 'Head office cannot reach this PC: the tunnel does not answer from outside.');
    assert.match(a!.text, /The last 2 checks through that address failed \(no answer within 10 s\)\. The agent restarts the tunnel after 3 failed checks in a row\./);
    assert.doesNotMatch(tunnelAlerts(state, 0)[0]!.text, /restarts the tunnel after/);
    assert.equal(tunnelAlerts(tunnel({ phase: 'stopped', reason: 'the agent stopped' }), 3)[0]!.light, 'red');
  });
  it('panel: state, public and webhook address, last check, output only when not running', () => {
    const running = tunnelPanel(tunnel(), '/webhook/menu-cycles', fmt);
    const byLabel = new Map(running.items.map((i) => [i.label, i]));
    assert.equal(byLabel.get('State')!.value, 'running');
    assert.equal(byLabel.get('State')!.level, 'ok');
    assert.equal(byLabel.get('Public address')!.value, 'https://pos-0042.example.com');
    assert.equal(byLabel.get('Webhook address for head office')!.value, 'https://pos-0042.example.com/webhook/menu-cycles');
    assert.equal(byLabel.get('Last check from outside')!.value, 'answered in 12 ms at <09:01:00>');
    assert.equal(byLabel.has('Last output'), false);
    assert.equal(byLabel.has('Why'), false);
    assert.deepEqual(running.actions.map((a) => a.id), ['restart']);
    const down = tunnelPanel(tunnel({ phase: 'restarting', reason: 'exited with code 3', nextRestartAt: '2027-01-04T09:03:00.000Z' }), '/w', fmt);
    const downBy = new Map(down.items.map((i) => [i.label, i]));
    assert.equal(downBy.get('State')!.value, 'restarting');
    assert.equal(downBy.get('Why')!.value, 'exited with code 3');
    assert.equal(downBy.get('State')!.level, 'warn');
    assert.equal(downBy.get('Next start')!.value, '<09:03:00>');
    assert.equal(downBy.get('Last output')!.value, 'INF Registered tunnel connection\nERR connection to edge lost');
    assert.equal(tunnelStateText(tunnel({ phase: 'unreachable', reason: 'x' })), 'unreachable from outside (x)');
  });
});

describe('disk in the window', () => {
  it('banner: low amber, critical red, ok none, unknown shown without a light', () => {
    assert.deepEqual(diskAlerts(disk()), []);
    const [low] = diskAlerts(disk({ level: 'low', freeBytes: 2 ** 30 }));
    assert.equal(low!.light, 'amber');
    assert.match(low!.text, /^1\.0 GiB free of 100\.0 GiB/);
    const [critical] = diskAlerts(disk({ level: 'critical', freeBytes: 100 * 2 ** 20 }));
    assert.equal(critical!.light, 'red');
    assert.equal(critical!.title, 'The disk is almost full — updates will be refused when it is.');
    assert.match(critical!.text, /Only 100\.0 MiB free/);
    assert.equal(diskAlerts(disk({ level: 'unknown', freeBytes: null, totalBytes: null, message: 'cannot read' }))[0]!.light, null);
  });
  it('panel', () => {
    const p = diskPanel(disk({ level: 'critical', freeBytes: 2 ** 20, walBytes: 2 ** 20 }), config.disk, fmt);
    assert.equal(p.items[0]!.value, '1.0 MiB free of 100.0 GiB — almost full');
    assert.equal(p.items[0]!.level, 'error');
    assert.equal(p.items[1]!.value, '4.0 MiB (+ 1.0 MiB write-ahead log)');
    assert.equal(p.items[2]!.value, 'below 2.0 GiB or 5 % free; critical below 256.0 MiB');
  });
});

describe('clock in the window', () => {
  it('a wrong clock is amber (the views follow it); another timezone is a note; both say what "today" is', () => {
    const state: ClockState = { machineTimezone: 'UTC', timezoneMismatches: [], observations: [], wrongClock: [], warnings: [] };
    assert.deepEqual(clockAlerts(state), []);
    const skew = { source: 'employee interface', skewMs: 600_000, uncertaintyMs: 600, at: '2027-01-04T10:00:00Z' };
    const [clock] = clockAlerts({ ...state, observations: [skew], wrongClock: [skew], warnings: ['x'] });
    assert.equal(clock!.id, 'clock');
    assert.equal(clock!.light, 'amber');
    assert.match(clock!.title, /^This PC's clock is wrong — the till's "today" depends on it\.$/);
    assert.ok(clock!.text.startsWith(TODAY_STATEMENT));
    assert.match(clock!.details![0]!, /600 s behind employee interface/);
    const mismatch = { locationTimezone: 'Europe/Paris', machineTimezone: 'UTC', differsAt: '2027-01-04T10:00:00Z', locationOffsetMinutes: 60, machineOffsetMinutes: 0 };
    const [zone] = clockAlerts({ ...state, timezoneMismatches: [mismatch], warnings: ['x'] });
    assert.equal(zone!.id, 'timezone');
    assert.equal(zone!.light, null);
    assert.equal(zone!.text, TODAY_STATEMENT);
    assert.match(zone!.details![0]!, /if yours does, set this PC to Europe\/Paris$/);
  });
});

describe('backups in the window', () => {
  const now = new Date('2027-01-04T10:00:00Z');
  const state = (extra: Partial<BackupState> = {}): BackupState => ({
    dir: '/data/backups',
    lastBackup: { file: '/data/backups/backup-20270104T030000000Z', name: 'backup-20270104T030000000Z', bytes: 2048, takenAt: '2027-01-04T03:00:00.000Z', kind: 'set' },
    nextDueAt: '2027-01-05T03:00:00.000Z',
    lastError: null,
    running: false,
    ...extra,
  });
  it('panel: last backup, next, folder, kept; Back up now', () => {
    const p = backupPanel(state(), 7, now, fmt);
    assert.deepEqual(
      p.items.map((i) => [i.label, i.value]),
      [
        ['Last backup', '<03:00:00> (2.0 KiB) — backup-20270104T030000000Z'],
        ['Next scheduled', '<03:00:00>'],
        ['Folder', '/data/backups'],
        ['Kept', 'the newest 7'],
      ],
    );
    assert.deepEqual(p.actions.map((a) => [a.id, a.label]), [['backup-now', 'Back up now']]);
    assert.equal(backupPanel(state({ lastBackup: null }), 7, now, fmt).items[0]!.value, 'none yet');
  });
  it('banner when a backup failed or is old, without a light', () => {
    assert.deepEqual(backupAlerts(state(), now), []);
    assert.equal(backupAlerts(state({ lastError: 'SQLITE_FULL' }), now)[0]!.title, 'The last backup failed.');
    const old = backupAlerts(state(), new Date('2027-01-07T10:00:00Z'));
    assert.equal(old[0]!.light, null);
    assert.match(old[0]!.title, /more than two days old/);
  });
});

describe('retention in the window', () => {
  it('a period set in the window wins over the configuration; the rest follow it', () => {
    const e = effectiveRetention(config.retention, { rawPayloadDays: 14 });
    assert.deepEqual(e.days, { rawPayloadDays: 14, quarantineDays: 90, rangeDays: 365, deliveryDays: 365 });
    assert.deepEqual(e.source, { rawPayloadDays: 'window', quarantineDays: 'config', rangeDays: 'config', deliveryDays: 'config' });
    assert.deepEqual(effectiveRetention(config.retention, {}).days, { rawPayloadDays: 30, quarantineDays: 90, rangeDays: 365, deliveryDays: 365 });
  });
  it('panel says where each period comes from, and what the last prune did', () => {
    const state: RetentionState = {
      enabled: true,
      effective: effectiveRetention(config.retention, { deliveryDays: 1 }),
      settingsError: null,
      lastRunAt: '2027-01-04T09:30:00.000Z',
      lastReport: { counts: { rawBodies: 3, conflictBodies: 0, quarantine: 0, deliveries: 1, priceRanges: 0, availabilityRanges: 0, updates: 0, appliedRecords: 0, warnings: 0, audit: 0 }, batches: 7, longestBatchMs: 1, totalMs: 2, heldBodyFiles: 0 },
      lastError: null,
      running: false,
    };
    const p = retentionPanel(state, config.retention, fmt);
    assert.deepEqual(
      p.items.map((i) => i.value),
      [
        '30 days (configured)',
        '90 days (configured)',
        '365 days (configured)',
        '1 day (set in this window; configured: 365)',
        '365 days (configured)',
        '90 days (configured)',
        '1095 days (configured)',
        '<09:30:00>: 3 update bodies, 1 delivery row',
      ],
    );
    assert.equal(p.actions[0]!.id, 'prune-now');
    assert.ok(p.actions[0]!.confirm);
    assert.equal(pruneCountsText({ rawBodies: 0, conflictBodies: 0, quarantine: 0, deliveries: 0, priceRanges: 0, availabilityRanges: 0, updates: 0, appliedRecords: 0, warnings: 0, audit: 0 }), 'nothing was old enough');
    assert.equal(pruneCountsText({ rawBodies: 0, conflictBodies: 0, quarantine: 0, deliveries: 0, priceRanges: 0, availabilityRanges: 0, updates: 2, appliedRecords: 1, warnings: 1, audit: 3 }), '2 finished updates, 1 applied-update record, 1 acknowledged warning, 3 audit entries');
    const broken = retentionPanel({ ...state, settingsError: 'ui-settings.json is not valid JSON' }, config.retention, fmt);
    assert.ok(broken.items.some((i) => i.level === 'error' && /configured periods are used/.test(i.value)));
  });
});

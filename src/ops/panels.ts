import type { OperationsAlert, PanelItem, PanelView } from '../admin/extensions';
import { RETENTION_DAY_KEYS, type RetentionDayKey } from '../admin/settings';
import type { Config } from '../config/schema';
import type { BackupState, ClockState, DiskState, PruneCounts, RetentionState, TunnelState } from './states';
import { describeMismatch, describeSkew } from '../clock';
import { pad2 } from '../domain/local-time';
import { TODAY_STATEMENT } from '../domain/today';

/**
 * What the status window shows of the operations services: the panels under Settings → Operations
 * and the banners on the Sync status tab. Pure (state in, text out), so every wording is tested
 * without timers or processes; the services call these from adminPanel()/adminAlerts().
 */

/** How a time is shown to the manager (the services pass the PC's local time; tests a fixed form). */
export type FormatTime = (iso: string) => string;

export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let n = bytes;
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i += 1;
  }
  return `${n.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sept', 'Oct', 'Nov', 'Dec'];

/**
 * A stored time on the machine's clock as en-GB writes it: `26 Nov 2026, 07:05:03` (September is
 * `Sept`, as CLDR has it). From Date's local fields rather than `toLocaleString`, which in the agent's
 * process would page in ICU's date formatting for good.
 */
export const localTime: FormatTime = (iso) => {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.getDate()} ${MONTHS[d.getMonth()]!} ${d.getFullYear()}, ${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`;
};

// ---- Tunnel ----

const TUNNEL_PHASE_TEXT: Record<TunnelState['phase'], string> = {
  starting: 'starting',
  running: 'running',
  unreachable: 'unreachable from outside',
  restarting: 'restarting',
  stopped: 'stopped',
};

/** "running", "restarting (exited with code 3)", "unreachable from outside (… no answer within 10 s)". */
export function tunnelStateText(state: TunnelState): string {
  return `${TUNNEL_PHASE_TEXT[state.phase]}${state.reason ? ` (${state.reason})` : ''}`;
}

function tunnelLevel(state: TunnelState): PanelItem['level'] {
  if (state.phase === 'running') return 'ok';
  if (state.phase === 'unreachable' || state.phase === 'stopped') return 'error';
  return 'warn';
}

/** The tunnel's banner, or none while it runs (or is on its first start, still connecting). */
export function tunnelAlerts(state: TunnelState, restartAfterFailedChecks: number): OperationsAlert[] {
  const tail = state.output.slice(-3).map((line) => `Tunnel output: ${line}`);
  const address = `Head office sends updates to ${state.publicUrl}, which the tunnel forwards to this PC.`;
  switch (state.phase) {
    case 'running':
      return [];
    case 'starting':
      // The first start connects for a few seconds; only a restart is worth a banner.
      if (state.restarts === 0) return [];
      return [
        {
          id: 'tunnel',
          light: 'amber',
          title: 'The tunnel is restarting — updates cannot arrive meanwhile.',
          text: `${address} It was restarted${state.reason ? ` (${state.reason.replace(/^restarted: /, '')})` : ''} and is connecting again.`,
          details: tail,
        },
      ];
    case 'restarting':
      return [
        {
          id: 'tunnel',
          light: 'amber',
          title: 'The tunnel is restarting — updates cannot arrive meanwhile.',
          text: `${address} Why: ${state.reason ?? 'unknown'}. The agent restarts it automatically${state.restarts > 0 ? ` (${state.restarts} restart${state.restarts === 1 ? '' : 's'} so far)` : ''}; if this lasts more than a few minutes, contact support.`,
          details: tail,
        },
      ];
    case 'unreachable': {
      const failed = state.consecutiveFailedChecks;
      const restartNote =
        restartAfterFailedChecks > 0 ? ` The agent restarts the tunnel after ${restartAfterFailedChecks} failed checks in a row.` : '';
      return [
        {
          id: 'tunnel',
          light: 'red',
          title: 'Head office cannot reach this PC: the tunnel does not answer from outside.',
          text: `${address} The last ${failed === 1 ? 'check' : `${failed} checks`} through that address failed (${state.lastCheck?.error ?? 'no answer'}).${restartNote} Check this PC's internet connection; if it lasts, contact support.`,
          details: tail,
        },
      ];
    }
    case 'stopped':
      return [
        {
          id: 'tunnel',
          light: 'red',
          title: 'The tunnel is stopped — updates from head office cannot arrive.',
          text: `${address} ${state.reason ?? ''}`.trim(),
          details: tail,
        },
      ];
  }
}

export function tunnelPanel(state: TunnelState, webhookPath: string, fmt: FormatTime): PanelView {
  const items: PanelItem[] = [
    { label: 'State', value: TUNNEL_PHASE_TEXT[state.phase], level: tunnelLevel(state) },
    ...(state.reason ? [{ label: 'Why', value: state.reason, level: tunnelLevel(state) }] : []),
    { label: 'Public address', value: state.publicUrl },
    { label: 'Webhook address for head office', value: `${state.publicUrl.replace(/\/+$/, '')}${webhookPath}` },
  ];
  if (state.lastCheck) {
    items.push({
      label: 'Last check from outside',
      value: state.lastCheck.ok ? `answered in ${state.lastCheck.ms} ms at ${fmt(state.lastCheck.at)}` : `failed at ${fmt(state.lastCheck.at)}: ${state.lastCheck.error ?? 'no answer'}`,
      level: state.lastCheck.ok ? 'ok' : 'error',
    });
  } else {
    items.push({ label: 'Last check from outside', value: 'not yet' });
  }
  if (state.pid !== null) {
    items.push({ label: 'Process', value: `pid ${state.pid}, started ${state.startedAt ? fmt(state.startedAt) : '—'}, ${state.restarts} restart${state.restarts === 1 ? '' : 's'}` });
  }
  if (state.nextRestartAt) items.push({ label: 'Next start', value: fmt(state.nextRestartAt), level: 'warn' });
  if (state.lastWakeAt) items.push({ label: 'PC last woke from sleep', value: fmt(state.lastWakeAt) });
  if (state.phase !== 'running' && state.output.length > 0) items.push({ label: 'Last output', value: state.output.slice(-3).join('\n') });
  return {
    title: 'Tunnel',
    items,
    actions: [{ id: 'restart', label: 'Restart tunnel', confirm: 'Restart the tunnel now? Updates from head office cannot arrive for the few seconds it takes to reconnect.' }],
  };
}

// ---- Disk ----

export function diskAlerts(state: DiskState): OperationsAlert[] {
  if (state.level === 'critical') {
    return [
      {
        id: 'disk',
        light: 'red',
        title: 'The disk is almost full — updates will be refused when it is.',
        text: `Only ${formatBytes(state.freeBytes ?? 0)} free${state.totalBytes ? ` of ${formatBytes(state.totalBytes)}` : ''} on the disk that holds the agent's data. When it is full, updates from head office are refused (head office resends them later) and backups fail. Free some space now, or ask IT.`,
      },
    ];
  }
  if (state.level === 'low') {
    return [
      {
        id: 'disk',
        light: 'amber',
        title: 'Disk space is low.',
        text: `${formatBytes(state.freeBytes ?? 0)} free${state.totalBytes ? ` of ${formatBytes(state.totalBytes)}` : ''} on the disk that holds the agent's data. Free some space before it fills up: a full disk stops updates from head office.`,
      },
    ];
  }
  if (state.level === 'unknown') {
    return [{ id: 'disk', light: null, title: 'Free disk space cannot be checked.', text: state.message ?? 'The agent could not read the free space of its data folder.' }];
  }
  return [];
}

export function diskPanel(state: DiskState, limits: Config['disk'], fmt: FormatTime): PanelView {
  const level: PanelItem['level'] = state.level === 'critical' ? 'error' : state.level === 'ok' ? 'ok' : 'warn';
  const free =
    state.freeBytes === null
      ? (state.message ?? 'unknown')
      : `${formatBytes(state.freeBytes)} free of ${formatBytes(state.totalBytes ?? 0)}${state.level === 'ok' ? '' : ` — ${state.level === 'critical' ? 'almost full' : 'low'}`}`;
  return {
    title: 'Disk space',
    items: [
      { label: 'Free space', value: free, level },
      { label: 'Data files (till, agent, staff)', value: `${formatBytes(state.databaseBytes)}${state.walBytes > 0 ? ` (+ ${formatBytes(state.walBytes)} write-ahead log)` : ''}` },
      { label: 'Warns when', value: `below ${formatBytes(limits.warnFreeBytes)} or ${limits.warnFreePercent} % free; critical below ${formatBytes(limits.criticalFreeBytes)}` },
      { label: 'Checked', value: fmt(state.checkedAt) },
    ],
    actions: [{ id: 'check', label: 'Check now', confirm: null }],
  };
}

// ---- Clock ----

export function clockAlerts(state: ClockState): OperationsAlert[] {
  const alerts: OperationsAlert[] = [];
  if (state.wrongClock.length > 0) {
    alerts.push({
      id: 'clock',
      // The views' date follows this clock: wrong by minutes, the till changes prices at the wrong time.
      light: 'amber',
      title: "This PC's clock is wrong — the till's \"today\" depends on it.",
      text: `${TODAY_STATEMENT} Ask IT to correct the clock (Windows: Settings > Time > Sync now).`,
      details: state.wrongClock.map(describeSkew),
    });
  }
  if (state.timezoneMismatches.length > 0) {
    alerts.push({
      id: 'timezone',
      // Not the views' date: a note for a till or report that reads the PC's own date.
      light: null,
      title: "This PC's timezone shows another local time than the site's.",
      text: TODAY_STATEMENT,
      details: state.timezoneMismatches.map(describeMismatch),
    });
  }
  return alerts;
}

export function clockPanel(state: ClockState, expected: readonly string[]): PanelView {
  const worstSkew = state.observations.reduce<number | null>((acc, o) => (acc === null || Math.abs(o.skewMs) > Math.abs(acc) ? o.skewMs : acc), null);
  const items: PanelItem[] = [
    { label: "This PC's timezone", value: state.machineTimezone, level: state.timezoneMismatches.length > 0 ? 'warn' : 'ok' },
    { label: 'Locations use', value: expected.join(', ') },
    {
      label: 'Clock compared with servers',
      value:
        worstSkew === null
          ? 'not yet (compared on each tunnel check and employee-service call)'
          : `${state.observations.length} comparison${state.observations.length === 1 ? '' : 's'}, largest difference ${(Math.abs(worstSkew) / 1000).toFixed(1)} s`,
      level: state.wrongClock.length > 0 ? 'warn' : worstSkew === null ? undefined : 'ok',
    },
  ];
  for (const warning of state.warnings) items.push({ label: 'Warning', value: warning, level: 'warn' });
  return { title: 'Clock and timezone', items: items.map((i) => (i.level === undefined ? { label: i.label, value: i.value } : i)), actions: [] };
}

// ---- Backups ----

/** A backup older than this is worth a warning (the daily one was missed twice). */
const STALE_BACKUP_HOURS = 48;

export function backupAlerts(state: BackupState, now: Date): OperationsAlert[] {
  if (state.lastError) {
    return [{ id: 'backup', light: null, title: 'The last backup failed.', text: `${state.lastError}. Updates still arrive; try "Back up now" under Settings → Operations, or contact support.` }];
  }
  const last = state.lastBackup;
  if (last && now.getTime() - Date.parse(last.takenAt) > STALE_BACKUP_HOURS * 3_600_000) {
    return [{ id: 'backup', light: null, title: 'The last backup is more than two days old.', text: 'Use "Back up now" under Settings → Operations; if it fails, contact support.' }];
  }
  return [];
}

export function backupPanel(state: BackupState, keep: number, now: Date, fmt: FormatTime): PanelView {
  const last = state.lastBackup;
  const stale = last !== null && now.getTime() - Date.parse(last.takenAt) > STALE_BACKUP_HOURS * 3_600_000;
  const items: PanelItem[] = [
    last
      ? { label: 'Last backup', value: `${fmt(last.takenAt)} (${formatBytes(last.bytes)}) — ${last.name}${stale ? ' — more than two days old' : ''}`, level: stale ? 'warn' : 'ok' }
      : { label: 'Last backup', value: 'none yet', level: 'warn' },
    { label: 'Next scheduled', value: state.running ? 'running now' : state.nextDueAt ? fmt(state.nextDueAt) : '—' },
    { label: 'Folder', value: state.dir },
    { label: 'Kept', value: `the newest ${keep}` },
  ];
  if (state.lastError) items.push({ label: 'Last error', value: state.lastError, level: 'error' });
  return { title: 'Backups', items, actions: [{ id: 'backup-now', label: 'Back up now', confirm: null }] };
}

// ---- Retention ----

const RETENTION_LABEL: Record<RetentionDayKey, string> = {
  rawPayloadDays: 'Update bodies (after applying)',
  quarantineDays: 'Refused and conflicting bodies',
  rangeDays: 'Ended prices and availability',
  deliveryDays: 'Delivery history',
};

export function retentionDaysText(state: RetentionState, key: RetentionDayKey, configured: number): string {
  const days = state.effective.days[key];
  const unit = `${days} day${days === 1 ? '' : 's'}`;
  return state.effective.source[key] === 'window' ? `${unit} (set in this window; configured: ${configured})` : `${unit} (configured)`;
}

const COUNT_LABEL: Record<keyof PruneCounts, readonly [string, string]> = {
  rawBodies: ['update body', 'update bodies'],
  conflictBodies: ['conflicting body', 'conflicting bodies'],
  quarantine: ['refused body', 'refused bodies'],
  deliveries: ['delivery row', 'delivery rows'],
  priceRanges: ['price range', 'price ranges'],
  availabilityRanges: ['availability range', 'availability ranges'],
  updates: ['finished update', 'finished updates'],
  appliedRecords: ['applied-update record', 'applied-update records'],
  warnings: ['acknowledged warning', 'acknowledged warnings'],
  audit: ['audit entry', 'audit entries'],
};

/** "12 update bodies, 1 delivery row" or "nothing was old enough". */
export function pruneCountsText(counts: PruneCounts): string {
  const parts = (Object.keys(COUNT_LABEL) as (keyof PruneCounts)[])
    .filter((k) => counts[k] > 0)
    .map((k) => `${counts[k]} ${COUNT_LABEL[k][counts[k] === 1 ? 0 : 1]}`);
  return parts.length === 0 ? 'nothing was old enough' : parts.join(', ');
}

export function retentionPanel(state: RetentionState, configured: Config['retention'], fmt: FormatTime): PanelView {
  const items: PanelItem[] = RETENTION_DAY_KEYS.map((key) => ({ label: RETENTION_LABEL[key], value: retentionDaysText(state, key, configured[key]) }));
  // Set in the configuration only (docs/operations.md, "Retention").
  for (const [label, days] of [
    ['Finished updates', configured.updateDays],
    ['Acknowledged warnings', configured.warningDays],
    ['Audit log', configured.auditDays],
  ] as const) items.push({ label, value: `${days} day${days === 1 ? '' : 's'} (configured)` });
  if (state.settingsError) items.push({ label: 'Window settings', value: `cannot be read (${state.settingsError}); the configured periods are used`, level: 'error' });
  items.push({
    label: 'Last prune',
    value: state.running ? 'running now' : state.lastRunAt ? `${fmt(state.lastRunAt)}: ${state.lastReport ? pruneCountsText(state.lastReport.counts) : 'failed'}` : `not yet (every ${configured.pruneIntervalMinutes} minutes)`,
  });
  if (state.lastError) items.push({ label: 'Last error', value: state.lastError, level: 'error' });
  return {
    title: 'Retention',
    items,
    actions: [{ id: 'prune-now', label: 'Prune now', confirm: 'Delete now what is older than the periods shown? Updates still waiting to be applied are never deleted.' }],
  };
}

import type { Config } from '../config/schema';
import { cliCommand } from '../config/invocation';
import { listBackups } from './backup/files';
import { interruptedRestore } from './backup/restore';
import { clockState, siteTimezonesOnDisk } from './clock-service';
import { clockWatch, machineTimezone } from '../clock';
import { checkDisk } from './disk';
import { runningAgent } from './instance';
import { backupDir } from './paths';
import { describeTunnel, readTunnelState } from './tunnel';
import { timeWithZone } from '../domain/local-time';
import type { OperationsAlert } from '../domain/severity';
import { TODAY_STATEMENT } from '../domain/today';
import { clockAlerts, diskAlerts, formatBytes, tunnelAlerts } from './panels';

/**
 * The operations part of `pos-sync-agent status`, readable from another process than the agent's:
 * tunnel (from the state file the supervisor writes), disk, last backup, timezone.
 */
export function opsStatus(config: Readonly<Config>, now: Date = new Date()): { lines: string[]; json: Record<string, unknown>; alerts: OperationsAlert[]; agent: { pid: number; startedAt: string } | null } {
  // The clock advice follows the timezones of the locations this site has (agent.db), not the default alone.
  const agent = runningAgent(config.dataDir);
  const tunnel = config.tunnel ? readTunnelState(config.dataDir) : null;
  const disk = checkDisk(config, now);
  const lastBackup = listBackups(backupDir(config))[0] ?? null;
  const clock = clockState(config, machineTimezone(), clockWatch.observations(), now, siteTimezonesOnDisk(config));
  const lines: string[] = [agent ? `Agent running (pid ${agent.pid}, since ${timeWithZone(agent.startedAt)})` : 'Agent not running'];
  if (config.tunnel) lines.push(...describeTunnel(tunnel, agent !== null));
  lines.push(
    disk.freeBytes === null
      ? `Disk: ${disk.message}`
      : `Disk: ${formatBytes(disk.freeBytes)} free${disk.level === 'ok' ? '' : ` — ${disk.level.toUpperCase()}: ${disk.message}`}; data files ${formatBytes(disk.databaseBytes)}${disk.walBytes > 0 ? ` + ${formatBytes(disk.walBytes)} write-ahead logs` : ''}`,
  );
  const backupAgeHours = lastBackup ? (now.getTime() - Date.parse(lastBackup.takenAt)) / 3_600_000 : null;
  lines.push(
    lastBackup
      ? `Last backup: ${timeWithZone(lastBackup.takenAt)} (${formatBytes(lastBackup.bytes)})${backupAgeHours !== null && backupAgeHours > 48 ? ' — more than two days old' : ''}`
      : config.backup.enabled
        ? 'Last backup: none yet'
        : 'Backups: disabled',
  );
  for (const warning of clock.warnings) lines.push(`Clock: ${warning}`);
  if (clock.warnings.length > 0) lines.push(`Today: ${TODAY_STATEMENT}`);
  const restore = interruptedRestore(config.dataDir);
  if (restore) lines.unshift(`RESTORE INTERRUPTED: the restore from ${restore.from} (started ${restore.startedAt}) did not finish; run \`${cliCommand(`restore ${restore.from}`)}\` again before starting the agent`);
  // The same alerts the running agent's services raise (what counts towards the light is theirs).
  const alerts: OperationsAlert[] = [...(config.tunnel && tunnel && agent ? tunnelAlerts(tunnel, config.tunnel.restartAfterFailedChecks) : []), ...diskAlerts(disk), ...clockAlerts(clock)];
  if (restore) alerts.unshift({ id: 'restore', light: 'red', title: 'A restore was interrupted.', text: `Run \`${cliCommand(`restore ${restore.from}`)}\` again before starting the agent.` });
  return { lines, json: { agentRunning: agent !== null, tunnel, disk, lastBackup, clock, today: TODAY_STATEMENT, interruptedRestore: restore }, alerts, agent: agent ? { pid: agent.pid, startedAt: agent.startedAt } : null };
}

import { ExposureService } from './exposure';
import type { AgentService } from '../agent';
import type { Config } from '../config/schema';
import type { Logger } from '../log';
import { BackupService } from './backup/service';
import { ClockService } from './clock-service';
import { ControlService } from './control';
import { DiskService } from './disk';
import { InstanceService } from './instance';
import { RetentionService } from './retention';
import { SupportService } from './support';
import { TunnelSupervisor } from './tunnel';

/**
 * The operations services `serve` (and the status window) run: the pid file, disk and clock checks,
 * backups, retention and (when configured) the tunnel. Each exposes `state()`; with the 'ops' support
 * service (diagnostics) they are the status window's Operations panels and status-tab banners.
 */
export function opsServices(config: Readonly<Config>, log: Logger): AgentService[] {
  const services: AgentService[] = [new InstanceService(), new DiskService(config, log), new ClockService(config, log), new SupportService(config, log), new ExposureService(config, log), new ControlService(log)];
  if (config.backup.enabled) services.push(new BackupService(config, log));
  if (config.retention.enabled) services.push(new RetentionService(config, log));
  if (config.tunnel) services.push(new TunnelSupervisor(config, log));
  return services;
}

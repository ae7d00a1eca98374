import { AdminService } from '../admin/service';
import type { AgentService } from '../agent';
import type { Config } from '../config/schema';
import { StaffService } from '../employees/service';
import type { Logger } from '../log';
import { opsServices } from '../ops/services';
import { writeOut } from './output';

/**
 * The optional services `serve` runs beside the core (admin UI, staff sync, tunnel, backups...),
 * chosen from the configuration. Each lives in its own module; this is the one list of them.
 */
export function agentServices(config: Readonly<Config>, log: Logger): AgentService[] {
  const services: AgentService[] = [];
  // Staff lookups and their scheduled sync; first, so the status window finds it started.
  if (config.employees) services.push(new StaffService(config, log));
  // The status window; `serve` prints its login address (with the token) once, on the console only.
  if (config.admin.enabled) services.push(new AdminService(log, { announce: (url) => writeOut(`Status window: ${url}\n`) }));
  // Pid file, disk and clock checks, backups, retention, tunnel (docs/operations.md).
  services.push(...opsServices(config, log));
  return services;
}

import type { AgentService } from '../agent';
import type { Config } from '../config/schema';
import type { Logger } from '../log';

/**
 * The optional services `serve` runs beside the core (admin UI, staff sync, tunnel, backups...),
 * chosen from the configuration. Each lives in its own module; this is the one list of them.
 */
export function agentServices(_config: Readonly<Config>, _log: Logger): AgentService[] {
  return [];
}

import { AdminService } from '../admin/service';
import type { AgentService } from '../agent';
import type { Config } from '../config/schema';
import { StaffService } from '../employees/service';
import type { Logger } from '../log';
import { opsServices } from '../ops/services';
import { cliCommand } from '../config/invocation';
import { writeOut } from './output';

/**
 * The optional services `serve` runs beside the core (admin UI, staff sync, tunnel, backups...),
 * chosen from the configuration. Each lives in its own module; this is the one list of them.
 */
/**
 * Whether `serve` may print a live login link: only to a person at a terminal. Under a service manager
 * (systemd sets INVOCATION_ID and JOURNAL_STREAM; a service has no terminal) the output is kept in a
 * journal or log file that others may read later, where a link that still works does not belong.
 */
export function mayPrintLoginLink(env: NodeJS.ProcessEnv, stdoutIsTerminal: boolean, refused: boolean): boolean {
  return !refused && stdoutIsTerminal && !env.INVOCATION_ID && !env.JOURNAL_STREAM;
}

export interface ServeOutput {
  /** Print the one-time login link (a person at a terminal) or only how to get one. */
  readonly liveLoginLink: boolean;
}

function announceLogin(config: Readonly<Config>, output: ServeOutput): (loginUrl: string) => void {
  return (loginUrl) => {
    if (output.liveLoginLink) {
      writeOut(`Status window: ${loginUrl}\n`);
      return;
    }
    const url = new URL(loginUrl);
    const how =
      config.admin.port === 0
        ? `set a fixed admin.port to get login links with ${cliCommand('admin-url')}`
        : // With the --config this site needs, absolute and quoted for this PC's shell (config/invocation.ts).
          `get a one-time login link with: ${cliCommand('admin-url')}`;
    writeOut(`Status window: ${url.origin}/ (${how})\n`);
  };
}

export function agentServices(config: Readonly<Config>, log: Logger, output: ServeOutput = { liveLoginLink: true }): AgentService[] {
  const services: AgentService[] = [];
  // Staff lookups and their scheduled sync; first, so the status window finds it started.
  if (config.employees) services.push(new StaffService(config, log));
  // The status window; `serve` prints its login link once, on a terminal only (mayPrintLoginLink).
  if (config.admin.enabled) services.push(new AdminService(log, { announce: announceLogin(config, output) }));
  // Pid file, disk and clock checks, backups, retention, tunnel (docs/operations.md).
  services.push(...opsServices(config, log));
  return services;
}

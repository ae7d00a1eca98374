import { execFileSync } from 'node:child_process';
import path from 'node:path';

/**
 * Whether this PC has the agent's Windows service (packaging/windows/pos-sync-agent-service.cmd
 * registers it as `pos-sync-agent`). Registering a service takes an administrator, so its registry key
 * is something another account cannot fake, where the machine-wide configuration's folder under
 * %ProgramData% can be made by any account before the installer runs. The machine-wide file is trusted
 * on Windows only while the service is registered (config/site.ts).
 */

export const WINDOWS_SERVICE_NAME = 'pos-sync-agent';

/** The service's registry key, readable by every account. */
export const WINDOWS_SERVICE_KEY = `HKLM\\SYSTEM\\CurrentControlSet\\Services\\${WINDOWS_SERVICE_NAME}`;

/** How long reg.exe may take before the answer counts as "not registered". */
const REG_QUERY_TIMEOUT_MS = 5_000;

/** Asks the registry (reg.exe, in System32) whether the service is registered. False on any failure. */
export function windowsServiceRegistered(env: NodeJS.ProcessEnv = process.env): boolean {
  const systemRoot = env.SystemRoot;
  const reg = path.win32.join(systemRoot && path.win32.isAbsolute(systemRoot) ? systemRoot : 'C:\\Windows', 'System32', 'reg.exe');
  try {
    execFileSync(reg, ['query', WINDOWS_SERVICE_KEY, '/v', 'ImagePath'], { windowsHide: true, timeout: REG_QUERY_TIMEOUT_MS, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

let registered: boolean | null = null;

/**
 * Whether the machine-wide configuration file may be used on this platform (see above). The registry
 * is asked once per process: a command resolves its site more than once (the site, and the --config
 * its hints need), and the desktop app decides its mode once, at its start.
 */
export function machineConfigTrusted(platform: NodeJS.Platform = process.platform): boolean {
  if (platform !== 'win32') return true;
  registered ??= windowsServiceRegistered();
  return registered;
}

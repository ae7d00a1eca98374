import { spawnSync, type ChildProcess } from 'node:child_process';

/**
 * What the tunnel program gets from the agent, and how it is stopped: pure decisions plus the two
 * platform-specific kills, kept apart from the supervisor's state machine (tunnel.ts).
 */

/**
 * Variables a tunnel program may need to run at all: where programs and its own files are, the
 * system's folders on Windows, locale and time zone, proxies and certificate stores. Nothing else of
 * the agent's environment passes (in particular no POS_SYNC_* secret); a site adds names it needs
 * with `tunnel.passEnv`.
 */
export const TUNNEL_BASE_ENV: readonly string[] = [
  'PATH',
  'Path',
  'PATHEXT',
  'HOME',
  'USER',
  'LOGNAME',
  'USERPROFILE',
  'APPDATA',
  'LOCALAPPDATA',
  'PROGRAMDATA',
  'ProgramData',
  'SystemRoot',
  'SYSTEMROOT',
  'windir',
  'WINDIR',
  'ComSpec',
  'COMSPEC',
  'TEMP',
  'TMP',
  'TMPDIR',
  'LANG',
  'LC_ALL',
  'TZ',
  'XDG_CONFIG_HOME',
  'XDG_RUNTIME_DIR',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
];

/** Secrets never pass, whatever `tunnel.passEnv` says. */
const NEVER_PASSED = /^POS_SYNC_/i;

/** The tunnel program's whole environment: the allow-list, the site's extra names, its own token. */
export function tunnelEnvironment(
  parent: Readonly<Record<string, string | undefined>>,
  tunnel: { readonly token: string | null; readonly tokenEnv: string; readonly passEnv?: readonly string[] },
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of [...TUNNEL_BASE_ENV, ...(tunnel.passEnv ?? [])]) {
    const value = parent[name];
    if (value !== undefined && !NEVER_PASSED.test(name)) env[name] = value;
  }
  if (tunnel.token) env[tunnel.tokenEnv] = tunnel.token;
  return env;
}

/**
 * Signals the tunnel program and everything it started. On POSIX it runs as the leader of its own
 * process group (spawned detached), so the signal goes to the group; on Windows `taskkill /T` ends
 * the tree (SIGTERM has no meaning there: both are a forced end).
 */
export function signalTree(child: ChildProcess, signal: 'SIGTERM' | 'SIGKILL', platform: NodeJS.Platform = process.platform): void {
  const pid = child.pid;
  if (pid === undefined) return;
  if (platform === 'win32') {
    spawnSync('taskkill', ['/PID', String(pid), '/T', '/F'], { windowsHide: true, stdio: 'ignore' });
    return;
  }
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is gone already; the leader alone may still be there.
    try {
      child.kill(signal);
    } catch {
      // Gone too.
    }
  }
}

/** Children still alive when this process exits (a crash, process.exit): ended synchronously. */
const live = new Set<ChildProcess>();
let exitHookInstalled = false;

export function trackForExit(child: ChildProcess): void {
  live.add(child);
  child.once('exit', () => live.delete(child));
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const c of live) signalTree(c, 'SIGKILL');
  });
}

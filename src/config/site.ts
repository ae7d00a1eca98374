import os from 'node:os';
import path from 'node:path';

/**
 * Which configuration file is the site's: the one rule every entry point follows (`serve`, every CLI
 * command, the systemd unit, the Windows service, the desktop app), so that a command typed without
 * `--config` acts on the same data folder as the agent that runs. First match wins:
 *
 *   1. `--config FILE` on the command line;
 *   2. the `POS_SYNC_CONFIG` environment variable;
 *   3. the machine-wide file, when it exists (written by whoever installs the agent as a service:
 *      /etc/pos-sync-agent/config.json, %ProgramData%\pos-sync-agent\config.json);
 *   4. the user's own file, when it exists (~/.config/pos-sync-agent/config.json,
 *      %APPDATA%\pos-sync-agent\config.json; also the 0.2 desktop app's place, see userConfigFiles);
 *   5. none: built-in defaults (plus POS_SYNC__* variables), data in the user's app-data folder.
 *
 * The machine-wide file comes before the user's because a PC runs one site: once a service agent is
 * installed, it is the site, and a user's leftover file from a desktop-only install must not send
 * commands to another data folder. A configuration that does not set `dataDir` keeps its data in the
 * folder of its mode: the machine-wide data folder for the machine-wide file, the user's otherwise.
 */

export type SiteSource = 'option' | 'environment' | 'machine' | 'user' | 'defaults';

export interface SiteConfig {
  /** The configuration file, or null for built-in defaults. */
  readonly file: string | null;
  readonly source: SiteSource;
  /** The data folder used when the configuration does not set `dataDir`. */
  readonly defaultDataDir: string;
  /** True when this is the machine-wide (service) configuration. */
  readonly machine: boolean;
  /**
   * The machine-wide file, when it exists but was not used: on Windows no `pos-sync-agent` service is
   * registered, so nothing says an administrator put it there (config/windows-service.ts).
   */
  readonly ignoredMachineFile?: string;
}

export const APP_NAME = 'pos-sync-agent';
export const CONFIG_ENV = 'POS_SYNC_CONFIG';

type Env = NodeJS.ProcessEnv;
type Platform = NodeJS.Platform;

function winPath(platform: Platform): typeof path.win32 | typeof path.posix {
  return platform === 'win32' ? path.win32 : path.posix;
}

/** The folder of the machine-wide configuration (and, on Windows, of the service's data). */
export function machineConfigDir(env: Env = process.env, platform: Platform = process.platform): string {
  if (platform === 'win32') return path.win32.join(env.ProgramData ?? env.PROGRAMDATA ?? 'C:\\ProgramData', APP_NAME);
  if (platform === 'darwin') return path.posix.join('/Library/Application Support', APP_NAME);
  return path.posix.join('/etc', APP_NAME);
}

export function machineConfigFile(env: Env = process.env, platform: Platform = process.platform): string {
  return winPath(platform).join(machineConfigDir(env, platform), 'config.json');
}

/** The service's data folder: systemd's StateDirectory on Linux, under %ProgramData% on Windows. */
export function machineDataDir(env: Env = process.env, platform: Platform = process.platform): string {
  if (platform === 'win32') return path.win32.join(machineConfigDir(env, platform), 'data');
  if (platform === 'darwin') return path.posix.join('/Library/Application Support', APP_NAME, 'data');
  return path.posix.join('/var/lib', APP_NAME);
}

/** The user's app-data folder: %APPDATA% on Windows, Application Support on macOS, XDG on Linux. */
export function userDataDir(env: Env = process.env, platform: Platform = process.platform, home: string = os.homedir()): string {
  if (platform === 'win32') return path.win32.join(env.APPDATA ?? path.win32.join(home, 'AppData', 'Roaming'), APP_NAME);
  if (platform === 'darwin') return path.posix.join(home, 'Library', 'Application Support', APP_NAME);
  return path.posix.join(env.XDG_DATA_HOME || path.posix.join(home, '.local', 'share'), APP_NAME);
}

/**
 * The user's own configuration files, in the order they are looked for. On Linux the XDG config
 * folder comes first; the data folder's config.json (where the 0.2 desktop app looked) still counts.
 * On Windows and macOS both are the same file.
 */
export function userConfigFiles(env: Env = process.env, platform: Platform = process.platform, home: string = os.homedir()): string[] {
  const inData = winPath(platform).join(userDataDir(env, platform, home), 'config.json');
  if (platform !== 'linux' && platform !== 'freebsd' && platform !== 'openbsd') return [inData];
  return [path.posix.join(env.XDG_CONFIG_HOME || path.posix.join(home, '.config'), APP_NAME, 'config.json'), inData];
}

export interface ResolveOptions {
  /** The `--config` value, if given. */
  readonly option?: string | null;
  readonly env?: Env;
  readonly platform?: Platform;
  readonly home?: string;
  readonly cwd?: string;
  readonly exists: (file: string) => boolean;
  /** Whether the machine-wide file, when it exists, may be used (machineConfigTrusted); default yes. */
  readonly machineTrusted?: () => boolean;
}

/** The site's configuration by the rule above (pure: the file system is asked only through `exists`). */
export function resolveSiteConfig(options: ResolveOptions): SiteConfig {
  const env = options.env ?? process.env;
  const platform = options.platform ?? process.platform;
  const p = winPath(platform);
  const machineFile = machineConfigFile(env, platform);
  const userDir = userDataDir(env, platform, options.home);
  const modeOf = (given: string, source: SiteSource): SiteConfig => {
    const file = p.resolve(options.cwd ?? process.cwd(), given);
    const machine = file === machineFile;
    return { file, source, machine, defaultDataDir: machine ? machineDataDir(env, platform) : userDir };
  };
  if (options.option) return modeOf(options.option, 'option');
  const fromEnv = env[CONFIG_ENV];
  if (fromEnv) return modeOf(fromEnv, 'environment');
  let ignored: { ignoredMachineFile: string } | Record<string, never> = {};
  if (options.exists(machineFile)) {
    if (options.machineTrusted?.() ?? true) return modeOf(machineFile, 'machine');
    ignored = { ignoredMachineFile: machineFile };
  }
  const user = userConfigFiles(env, platform, options.home).find((f) => options.exists(f));
  if (user) return { ...modeOf(user, 'user'), ...ignored };
  return { file: null, source: 'defaults', machine: false, defaultDataDir: userDir, ...ignored };
}

/** How the configuration was found, for the line a command prints before it acts. */
export function describeSite(site: SiteConfig): string {
  const found = describeSource(site);
  return site.ignoredMachineFile ? `${found}; ${site.ignoredMachineFile} ignored: no ${APP_NAME} service is registered on this PC` : found;
}

function describeSource(site: SiteConfig): string {
  switch (site.source) {
    case 'option':
      return `${site.file} (--config)`;
    case 'environment':
      return `${site.file} (${CONFIG_ENV})`;
    case 'machine':
      return `${site.file} (machine-wide)`;
    case 'user':
      return `${site.file} (this user's)`;
    default:
      return 'none: built-in defaults';
  }
}

/** A path as one shell word, quoted only when it needs it (cmd.exe's quotes on Windows, POSIX ones elsewhere). */
export function shellWord(word: string, platform: Platform = process.platform): string {
  if (/^[A-Za-z0-9_@%+=:,./\\-]+$/.test(word)) return word;
  return platform === 'win32' ? `"${word}"` : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * The ` --config FILE` a printed command needs to reach this site: none when a command typed in a
 * plain shell (no --config, no POS_SYNC_CONFIG) finds the same file by rules 3 to 5.
 */
export function configArgument(site: SiteConfig, options: Omit<ResolveOptions, 'option'>): string {
  if (site.file === null) return '';
  const env = { ...(options.env ?? process.env) };
  delete env[CONFIG_ENV];
  const plain = resolveSiteConfig({ ...options, env, option: null });
  return plain.file === site.file ? '' : ` --config ${shellWord(site.file, options.platform ?? process.platform)}`;
}

/** The site for a configuration file already chosen (null: built-in defaults), e.g. handed to a child process. */
export function siteForFile(file: string | null, env: Env = process.env, platform: Platform = process.platform): SiteConfig {
  if (file === null) return { file: null, source: 'defaults', machine: false, defaultDataDir: userDataDir(env, platform) };
  return resolveSiteConfig({ option: file, env, platform, exists: () => false });
}

import fs from 'node:fs';
import type { ParseArgsConfig } from 'node:util';
import type { Config } from '../config/schema';
import { machineConfigTrusted } from '../config/windows-service';
import { resolveSiteConfig, type SiteConfig } from '../config/site';
import { configureLogging, type Logger } from '../log';
import { loadConfigWithSecrets } from '../ops/secrets';
import path from 'node:path';
import { writeOut } from './output';

export const EXIT = {
  ok: 0,
  /** The command ran but failed (storage, network, refused operation). */
  failed: 1,
  /** Wrong arguments. */
  usage: 2,
  /** The configuration is invalid. */
  config: 3,
  /** The input (a payload or employees file) was refused; nothing was changed or sent. */
  invalidInput: 4,
  /** Stopped at once by a second Ctrl-C (128 + SIGINT, as shells report it). */
  interrupted: 130,
} as const;

export type OptionSpec = NonNullable<ParseArgsConfig['options']>;

export interface CommandContext {
  readonly args: readonly string[];
  readonly values: Record<string, string | boolean | string[] | boolean[] | undefined>;
  readonly json: boolean;
  /** The site's configuration file, by the one rule every entry point follows (config/site.ts). */
  site(): SiteConfig;
  /** Loads and validates the site's configuration (--config, POS_SYNC_CONFIG, the default files or defaults). */
  config(): Readonly<Config>;
  /** A logger writing to the agent's log folder (and stderr), with secrets redacted. */
  logger(config: Readonly<Config>, options?: { console?: boolean }): Logger;
  out(text: string): void;
  printJson(value: unknown): void;
}

/**
 * What a command does with the data folder: `read` only reads it (and never creates it), `change`
 * changes it (through the running agent, or directly when none runs), `replace` puts other files in
 * its place (restore: also into a new PC's empty folder, but never one only the built-in defaults
 * name), `none` does not act on the site's data (or, like serve, names what it creates itself).
 */
export type DataUse = 'read' | 'change' | 'replace' | 'none';

export interface Command {
  /** One or two words: `serve`, `staff search`. */
  readonly name: string;
  readonly summary: string;
  /** Shown by --help after the name, e.g. `FILE [--location L]`. */
  readonly usage: string;
  readonly options?: OptionSpec;
  /** What each option means and its default, for --help: `{ url: 'the webhook URL (required)' }`. */
  readonly optionHelp?: Readonly<Record<string, string>>;
  /** How many positional arguments after the name (min, max). */
  readonly positionals?: readonly [number, number];
  /**
   * Checks the arguments alone (UsageError), before the data folder is looked at: a mistyped
   * argument is named as such whatever the folder holds.
   */
  check?(ctx: CommandContext): void;
  run(ctx: CommandContext): Promise<number> | number;
}

export class UsageError extends Error {}

export function makeContext(args: string[], values: CommandContext['values']): CommandContext {
  let cached: Readonly<Config> | null = null;
  let site: SiteConfig | null = null;
  const siteConfig = (): SiteConfig => {
    site ??= resolveSiteConfig({ option: typeof values.config === 'string' ? values.config : null, exists: (file) => fs.existsSync(file), machineTrusted: () => machineConfigTrusted() });
    return site;
  };
  return {
    args,
    values,
    json: values.json === true,
    site: siteConfig,
    config() {
      if (!cached) {
        // Secrets left out of the config file come from POS_SYNC_SECRET_* or the owner-only secrets file.
        const { file, defaultDataDir } = siteConfig();
        cached = loadConfigWithSecrets({ file, defaultDataDir }).config;
      }
      return cached;
    },
    logger(config, options = {}) {
      return configureLogging({
        dir: config.log.dir ?? path.join(config.dataDir, 'logs'),
        level: config.log.level,
        maxFileBytes: config.log.maxFileBytes,
        console: options.console ?? true,
      });
    },
    out(text) {
      writeOut(text.endsWith('\n') ? text : `${text}\n`);
    },
    printJson(value) {
      writeOut(`${JSON.stringify(value, null, 2)}\n`);
    },
  };
}

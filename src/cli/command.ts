import type { ParseArgsConfig } from 'node:util';
import type { Config } from '../config/schema';
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
} as const;

export type OptionSpec = NonNullable<ParseArgsConfig['options']>;

export interface CommandContext {
  readonly args: readonly string[];
  readonly values: Record<string, string | boolean | string[] | boolean[] | undefined>;
  readonly json: boolean;
  /** Loads and validates the configuration named by --config (or defaults + environment). */
  config(): Readonly<Config>;
  /** A logger writing to the agent's log folder (and stderr), with secrets redacted. */
  logger(config: Readonly<Config>, options?: { console?: boolean }): Logger;
  out(text: string): void;
  printJson(value: unknown): void;
}

export interface Command {
  /** One or two words: `serve`, `staff search`. */
  readonly name: string;
  readonly summary: string;
  /** Shown by --help after the name, e.g. `FILE [--location L]`. */
  readonly usage: string;
  readonly options?: OptionSpec;
  /** How many positional arguments after the name (min, max). */
  readonly positionals?: readonly [number, number];
  run(ctx: CommandContext): Promise<number> | number;
}

export class UsageError extends Error {}

export function makeContext(args: string[], values: CommandContext['values']): CommandContext {
  let cached: Readonly<Config> | null = null;
  return {
    args,
    values,
    json: values.json === true,
    config() {
      if (!cached) {
        // Secrets left out of the config file come from POS_SYNC_SECRET_* or the owner-only secrets file.
        cached = loadConfigWithSecrets({ file: typeof values.config === 'string' ? values.config : null }).config;
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

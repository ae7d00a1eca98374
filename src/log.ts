import path from 'node:path';
import { inspect } from 'node:util';
import nodeLog from 'electron-log/node';
import { archiveLog, type RotatedLog } from './log-rotation';

/** What the agent needs from a logger; electron-log's node and main instances both satisfy it. */
export interface Logger {
  error(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  info(...args: unknown[]): void;
  verbose(...args: unknown[]): void;
  debug(...args: unknown[]): void;
}

type ElectronLogInstance = typeof nodeLog;

/**
 * Redacts secrets from text: every registered secret value wherever it appears, plus anything that
 * looks like a credential header, so a token pasted into an error message still never reaches a log.
 */
export class Redactor {
  private readonly secrets = new Set<string>();

  add(...values: (string | null | undefined)[]): void {
    for (const v of values) if (v && v.length >= 4) this.secrets.add(v);
  }

  redact(text: string): string {
    let out = text;
    for (const secret of this.secrets) out = out.split(secret).join('********');
    return out
      .replace(/(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi, '$1********')
      .replace(/(Basic\s+)[A-Za-z0-9+/=]{4,}/gi, '$1********')
      .replace(/("?(?:authorization|password|passphrase|token|bearerToken)"?\s*[:=]\s*"?)(?!(?:null|true|false|Bearer|Basic)\b)[^",\s}]{4,}/gi, '$1********');
  }
}

export const redactor = new Redactor();

function toText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value instanceof Error) return value.stack ?? `${value.name}: ${value.message}`;
  return inspect(value, { depth: 5, breakLength: Infinity });
}

export interface LogOptions {
  readonly dir: string;
  readonly level: 'error' | 'warn' | 'info' | 'verbose' | 'debug';
  readonly maxFileBytes: number;
  /** Echo to stderr (headless); the Electron shell turns this off. */
  readonly console?: boolean;
  readonly fileName?: string;
}

let configured = false;

/**
 * Configures electron-log (the node flavour headless, the main-process one under Electron) to write
 * rotated files in `dir`, with every line passed through the redactor.
 */
export function configureLogging(options: LogOptions, instance: ElectronLogInstance = nodeLog): Logger {
  const log = instance;
  log.transports.file.level = options.level;
  log.transports.file.maxSize = options.maxFileBytes;
  // agent.log → agent.old.log, also while a log viewer holds it open on Windows (src/log-rotation.ts).
  log.transports.file.archiveLogFn = (file) => void archiveLog(file as unknown as RotatedLog, options.maxFileBytes);
  log.transports.file.resolvePathFn = () => path.join(options.dir, options.fileName ?? 'agent.log');
  // Owner-only, whatever the umask: the log names locations, senders and operators.
  log.transports.file.writeOptions = { flag: 'a', mode: 0o600, encoding: 'utf8' };
  log.transports.console.level = options.console === false ? false : options.level;
  // Console output goes to stderr so `--json` output on stdout stays machine-readable.
  log.transports.console.writeFn = ({ message }) => {
    process.stderr.write(`${message.data.map(toText).join(' ')}\n`);
  };
  if (!configured) {
    log.hooks.push((message) => ({ ...message, data: message.data.map((d: unknown) => redactor.redact(toText(d))) }));
    configured = true;
  }
  return log;
}

/** A logger that drops everything (library use and tests that do not care). */
export const silentLogger: Logger = { error() {}, warn() {}, info() {}, verbose() {}, debug() {} };

/** The default logger before configureLogging: stderr only, redacted. */
export const stderrLogger: Logger = {
  error: (...a) => process.stderr.write(`[error] ${redactor.redact(a.map(toText).join(' '))}\n`),
  warn: (...a) => process.stderr.write(`[warn] ${redactor.redact(a.map(toText).join(' '))}\n`),
  info: (...a) => process.stderr.write(`[info] ${redactor.redact(a.map(toText).join(' '))}\n`),
  verbose: () => {},
  debug: () => {},
};

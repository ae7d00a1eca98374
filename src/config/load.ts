import fs from 'node:fs';
import { didYouMean } from '../domain/did-you-mean';
import { jsonErrorWhere } from '../domain/json-where';
import os from 'node:os';
import path from 'node:path';
import { ConfigError } from '../errors';
import { ConfigSchema, type Config } from './schema';
import { APP_NAME, userDataDir } from './site';

export { APP_NAME };
export const ENV_PREFIX = 'POS_SYNC__';

/** The per-user app-data folder: %APPDATA% on Windows, Application Support on macOS, XDG on Linux. */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  return userDataDir(env, platform, os.homedir());
}

/**
 * Environment overrides: `POS_SYNC__webhook__port=9000` sets `webhook.port`. A value that parses as
 * JSON is taken as JSON (numbers, booleans, null, objects), anything else as a string. This is also
 * how a headless site keeps secrets out of the config file (`POS_SYNC__webhook__bearerToken`).
 */
export function environmentOverrides(env: NodeJS.ProcessEnv): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(env)) {
    if (!name.startsWith(ENV_PREFIX) || raw === undefined) continue;
    const keys = name.slice(ENV_PREFIX.length).split('__').filter((k) => k.length > 0);
    if (keys.length === 0) continue;
    let value: unknown = raw;
    try {
      value = JSON.parse(raw);
    } catch {
      value = raw;
    }
    let node = out;
    keys.slice(0, -1).forEach((key) => {
      const next = node[key];
      if (typeof next !== 'object' || next === null || Array.isArray(next)) node[key] = {};
      node = node[key] as Record<string, unknown>;
    });
    node[keys[keys.length - 1] as string] = value;
  }
  return out;
}

export function deepMerge(base: unknown, over: unknown): unknown {
  if (typeof base !== 'object' || base === null || Array.isArray(base)) return over;
  if (typeof over !== 'object' || over === null || Array.isArray(over)) return over;
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [k, v] of Object.entries(over as Record<string, unknown>)) out[k] = deepMerge(out[k], v);
  return out;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  }
  return value;
}

export interface LoadOptions {
  file?: string | null;
  env?: NodeJS.ProcessEnv;
  /** Applied last; used by tests and the Electron shell. */
  overrides?: Record<string, unknown>;
  /** The data folder when the configuration sets none (config/site.ts: the machine-wide or the user's). */
  defaultDataDir?: string;
}

/** Why a configuration file cannot be read, in words a site integrator can act on. */
export function configFileUnreadable(file: string, err: unknown): ConfigError {
  const code = (err as NodeJS.ErrnoException).code;
  const why =
    code === 'ENOENT'
      ? `${file} does not exist; check the path given with --config (or POS_SYNC_CONFIG), relative to ${process.cwd()}`
      : code === 'EACCES' || code === 'EPERM'
        ? `${file} cannot be read by this user (${code}); run as the account that owns it, or fix its permissions`
        : code === 'EISDIR'
          ? `${file} is a folder; --config takes the configuration file (config.json) in it`
          : `${file} cannot be read: ${code ?? (err as Error).message}`;
  return new ConfigError('configuration file', why);
}

/** Object schemas inside wrappers (default, prefault, optional, nullable) and records' values. */
function unwrap(schema: unknown): unknown {
  let s = schema as { def?: { innerType?: unknown; type?: string } } | undefined;
  for (let i = 0; i < 10 && s?.def?.innerType !== undefined; i++) s = s.def.innerType as typeof s;
  return s;
}

function keysAt(path: readonly PropertyKey[]): string[] {
  let node: unknown = unwrap(ConfigSchema);
  for (const key of path) {
    const n = node as { shape?: Record<string, unknown>; def?: { type?: string; valueType?: unknown } };
    node = unwrap(n.shape ? n.shape[String(key)] : n.def?.type === 'record' ? n.def.valueType : undefined);
  }
  const shape = (node as { shape?: Record<string, unknown> } | undefined)?.shape;
  return shape ? Object.keys(shape) : [];
}

/** "unknown key webhok (did you mean webhook?)". */
function unknownKeysMessage(keys: readonly string[], path: readonly PropertyKey[]): string {
  const known = keysAt(path);
  return keys
    .map((k) => {
      const guess = didYouMean(k, known);
      return `unknown key ${k}${guess ? ` (did you mean ${guess}?)` : ''}`;
    })
    .join('; ');
}

/**
 * The configuration file's JSON object. A byte-order mark is skipped: Windows editors (Notepad saving
 * "UTF-8 with BOM", PowerShell's Out-File) write one, and JSON.parse refuses it. CRLF line ends are
 * whitespace to JSON and need nothing.
 */
export function readConfigFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw configFileUnreadable(file, err);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.startsWith('\uFEFF') ? text.slice(1) : text);
  } catch {
    // Never the parser's own message: it quotes the text, and this file may hold a secret.
    throw new ConfigError('configuration file', `${file} is not valid JSON: ${jsonErrorWhere(text.startsWith('\uFEFF') ? text.slice(1) : text)}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError('configuration file', `${file} must hold a JSON object ({ ... })`);
  }
  return parsed as Record<string, unknown>;
}

/** Reads, merges (defaults < file < environment < overrides), validates and freezes the configuration. */
export function loadConfig(options: LoadOptions = {}): Readonly<Config> {
  const env = options.env ?? process.env;
  const fromFile = options.file ? readConfigFile(options.file) : {};
  const merged = deepMerge(deepMerge(deepMerge({ dataDir: options.defaultDataDir ?? defaultDataDir(env) }, fromFile), environmentOverrides(env)), options.overrides ?? {});
  return parseConfig(merged, options.file ? path.dirname(path.resolve(options.file)) : process.cwd(), valueSources(env, options.file ?? null, fromFile));
}

/**
 * Where a configuration value came from, for the error that names it: the POS_SYNC__ variable that
 * set it (or a section around it), else the file. A value nobody can find in the file named is no help.
 */
export function valueSources(env: NodeJS.ProcessEnv, file: string | null, fileValues: Record<string, unknown> = {}): (keyPath: readonly PropertyKey[]) => string | null {
  const variables = Object.keys(env)
    .filter((name) => name.startsWith(ENV_PREFIX) && env[name] !== undefined)
    .map((name) => ({ name, keys: name.slice(ENV_PREFIX.length).split('__').filter((k) => k.length > 0) }))
    .filter((v) => v.keys.length > 0);
  return (keyPath) => {
    const keys = keyPath.map(String);
    const covers = (v: { keys: string[] }): boolean => {
      const n = Math.min(v.keys.length, keys.length);
      return v.keys.slice(0, n).every((k, i) => k === keys[i]);
    };
    const set = variables.filter(covers).map((v) => v.name);
    if (set.length > 0) return `set by the environment variable ${set.join(', ')}`;
    // A key missing from a section the file does not have: the variables that made the section.
    let level: unknown = fileValues;
    for (let depth = 0; depth < keys.length - 1; depth++) {
      const next = typeof level === 'object' && level !== null && !Array.isArray(level) ? (level as Record<string, unknown>)[keys[depth]!] : undefined;
      if (next === undefined) {
        const section = keys.slice(0, depth + 1);
        const made = variables.filter((v) => v.keys.length > section.length && section.every((k, i) => v.keys[i] === k)).map((v) => v.name);
        if (made.length > 0) return `in the "${section.join('.')}" section that the environment variable ${made.join(', ')} creates`;
        break;
      }
      level = next;
    }
    return file ? `in ${file}` : null;
  };
}

export function parseConfig(input: unknown, relativeTo: string = process.cwd(), sourceOf: (keyPath: readonly PropertyKey[]) => string | null = () => null): Readonly<Config> {
  const parsed = ConfigSchema.safeParse(input);
  if (!parsed.success) {
    const from = (keyPath: readonly PropertyKey[]): string => {
      const source = sourceOf(keyPath);
      return source ? ` (${source})` : '';
    };
    // Every mistake at once: a site fixing its file should not need one restart per typo.
    throw ConfigError.of(
      parsed.error.issues.map((issue) => ({
        field: issue.path.length > 0 ? issue.path.join('.') : '(root)',
        message:
          issue.code === 'unrecognized_keys'
            ? issue.keys.map((k) => `${unknownKeysMessage([k], issue.path)}${from([...issue.path, k])}`).join('; ')
            : `${issue.message}${from(issue.path)}`,
      })),
    );
  }
  const config = parsed.data;
  config.dataDir = path.resolve(relativeTo, config.dataDir);
  if (config.log.dir) config.log.dir = path.resolve(relativeTo, config.log.dir);
  const tls = config.webhook.tls;
  if (tls) {
    if ('certFile' in tls) {
      tls.certFile = path.resolve(relativeTo, tls.certFile);
      tls.keyFile = path.resolve(relativeTo, tls.keyFile);
    } else {
      tls.pfxFile = path.resolve(relativeTo, tls.pfxFile);
    }
  }
  return deepFreeze(config);
}

const SECRET_KEYS = new Set(['bearerToken', 'token', 'password', 'passphrase', 'value']);

/** A command-line flag whose value is a secret (`--token X`, `--authtoken=X`), e.g. in tunnel.args. */
const SECRET_FLAG = /^--?[A-Za-z-]*(token|secret|password|passphrase|credential|key)$/i;

/** The secret values in an argument list: what follows a secret flag, or is joined to it with `=`. */
function secretArgs(args: readonly unknown[]): Set<number> {
  const found = new Set<number>();
  args.forEach((arg, i) => {
    if (typeof arg !== 'string') return;
    if (SECRET_FLAG.test(arg) && typeof args[i + 1] === 'string') found.add(i + 1);
  });
  return found;
}

function maskArgs(args: readonly unknown[]): unknown[] {
  const secret = secretArgs(args);
  return args.map((arg, i) => {
    if (typeof arg !== 'string') return arg;
    if (secret.has(i)) return '********';
    const eq = arg.indexOf('=');
    return eq > 0 && SECRET_FLAG.test(arg.slice(0, eq)) ? `${arg.slice(0, eq)}=********` : arg;
  });
}

function argSecretValues(args: readonly unknown[]): string[] {
  const secret = secretArgs(args);
  return args.flatMap((arg, i) => {
    if (typeof arg !== 'string') return [];
    if (secret.has(i)) return [arg];
    const eq = arg.indexOf('=');
    return eq > 0 && SECRET_FLAG.test(arg.slice(0, eq)) ? [arg.slice(eq + 1)] : [];
  });
}

/** A copy safe to print or log: every secret replaced by a mask that shows only whether it is set. */
export function maskConfig(config: unknown): unknown {
  if (Array.isArray(config)) return config.map(maskConfig);
  if (typeof config !== 'object' || config === null) return config;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(config)) {
    out[k] =
      SECRET_KEYS.has(k) && typeof v === 'string' ? (v.length > 0 ? '********' : '') : k === 'args' && Array.isArray(v) ? maskArgs(v) : maskConfig(v);
  }
  return out;
}

/** Every secret string in a config, so the logger can redact it wherever it appears. */
export function secretsOf(config: unknown): string[] {
  const found: string[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (typeof node === 'object' && node !== null) {
      for (const [k, v] of Object.entries(node)) {
        if (SECRET_KEYS.has(k) && typeof v === 'string' && v.length >= 4) found.push(v);
        else if (k === 'args' && Array.isArray(v)) found.push(...argSecretValues(v).filter((a) => a.length >= 4));
        else walk(v);
      }
    }
  };
  walk(config);
  return found;
}

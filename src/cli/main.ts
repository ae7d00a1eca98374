import { parseArgs } from 'node:util';
import { ConfigError, AppError, describeError } from '../errors';
import { redactor, silentLogger } from '../log';
import { appVersion } from '../version';
import { EXIT, UsageError, makeContext, type Command } from './command';
import fs from 'node:fs';
import { COMMANDS, dataUseOf } from './commands';
import { checkSite } from './site-check';
import { setInvocationConfigArgument } from '../config/invocation';
import { configArgument } from '../config/site';
import { machineConfigTrusted } from '../config/windows-service';
import { guardOutputStreams, writeErr, writeOut } from './output';
import { leaveTillFileReadable, restrictUmask } from '../ops/private-files';
import { howToStopAgent, isInstanceLocked, runningAgent } from '../ops/instance';
import { olderDataError, olderStoreFiles } from '../store/upgrade';
import type { Config } from '../config/schema';
import { didYouMean } from '../domain/did-you-mean';

/** Options every command takes, wherever they stand on the line (before or after the command). */
const COMMON_OPTIONS = {
  config: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'V' },
} as const;

const EXIT_CODES_TEXT = 'Exit codes: 0 ok, 1 failed, 2 usage, 3 configuration, 4 input refused.';

/** The first word of a two-word command (`staff`, `secrets`...): typed alone, it lists its commands. */
function groupOf(word: string | undefined): Command[] {
  return word === undefined ? [] : COMMANDS.filter((c) => c.name.startsWith(`${word} `));
}

/**
 * Option names that take a value in every command that has them. Their value is skipped when finding
 * the command's words, so `--config site.json status` is `status`, not a command named `site.json`.
 * A name that is a flag somewhere is not skipped: parseArgs then checks the line in full.
 */
function valueOptions(): Map<string, boolean> {
  const takesValue = new Map<string, boolean>();
  const specs = [COMMON_OPTIONS, ...COMMANDS.map((c) => c.options ?? {})];
  for (const spec of specs) {
    for (const [name, option] of Object.entries(spec)) {
      const isString = option.type === 'string';
      takesValue.set(name, (takesValue.get(name) ?? true) && isString);
      if (option.short) takesValue.set(option.short, (takesValue.get(option.short) ?? true) && isString);
    }
  }
  return takesValue;
}

/** The words of the line that are not options or option values: the command name comes first. */
export function commandWords(argv: readonly string[]): string[] {
  const takesValue = valueOptions();
  const words: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      words.push(...argv.slice(i + 1));
      break;
    }
    if (arg.startsWith('-') && arg.length > 1) {
      const name = arg.replace(/^--?/, '');
      if (!name.includes('=') && takesValue.get(name) === true) i++;
      continue;
    }
    words.push(arg);
  }
  return words;
}

/**
 * parseArgs's messages, in this tool's words: "Unknown option '-c'. To specify a positional argument
 * starting with a '-', place it at the end of the command after '--', as in '-- "-c"." says nothing a
 * site integrator can use, and its quotes do not balance.
 */
function plainParseError(err: { code?: string; message: string }, command: Command): string {
  const names = ['--config', '--json', '--help', ...Object.entries(command.options ?? {}).map(([name, o]) => `--${name}${o.type === 'string' ? ' VALUE' : ''}`)];
  const known = `\`${command.name}\` takes: ${names.join(', ')}`;
  const unknown = /^Unknown option '([^']+)'/.exec(err.message);
  if (unknown) {
    const given = unknown[1]!;
    const longNames = ['config', 'json', 'help', 'version', ...Object.keys(command.options ?? {})];
    // `-c`: the one long option it could abbreviate; a longer typo: the nearest name.
    const initial = /^-(\w)$/.exec(given)?.[1];
    const byInitial = initial ? longNames.filter((n) => n.startsWith(initial)) : [];
    const guess = byInitial.length === 1 ? byInitial[0]! : initial ? null : didYouMean(given.replace(/^-+/, ''), longNames);
    return `unknown option ${given}${guess ? ` (did you mean --${guess}?)` : ''}; ${known}`;
  }
  const missing = /^Option '(?:-\w, )?(--[\w-]+) <value>' argument missing/.exec(err.message);
  if (missing) return `${missing[1]} needs a value: ${missing[1]} VALUE`;
  const notValue = /^Option '(?:-\w, )?(--[\w-]+)' does not take an argument/.exec(err.message);
  if (notValue) return `${notValue[1]} takes no value`;
  return err.message;
}

function findCommand(words: readonly string[]): Command | null {
  for (const take of [2, 1]) {
    if (words.length < take) continue;
    const name = words.slice(0, take).join(' ');
    const command = COMMANDS.find((c) => c.name === name);
    if (command) return command;
  }
  return null;
}

const HELP_COLUMN = 40;

function helpLine(c: Command): string {
  // Two columns; a command whose usage is too long for the first gets its summary on the next line.
  const usage = `${c.name} ${c.usage}`.trim();
  return usage.length < HELP_COLUMN ? `  ${usage.padEnd(HELP_COLUMN)}${c.summary}` : `  ${usage}\n  ${' '.repeat(HELP_COLUMN)}${c.summary}`;
}

function help(): string {
  return [
    'Usage: pos-sync-agent COMMAND [options] [--config FILE] [--json]',
    '',
    'Commands:',
    ...COMMANDS.map(helpLine),
    '',
    'Every command takes --config FILE (default: $POS_SYNC_CONFIG, else the machine-wide file, else your own;',
    'see docs/operations.md "Where the configuration lives"; plus POS_SYNC__* environment variables)',
    'and --json where it prints data; options may stand before or after the command.',
    '`pos-sync-agent COMMAND --help` shows one command; `--version` prints the version.',
    EXIT_CODES_TEXT,
  ].join('\n');
}

function commandHelp(command: Command): string {
  return [
    `Usage: pos-sync-agent ${`${command.name} ${command.usage}`.trim()} [--config FILE] [--json]`,
    '',
    `${command.summary.charAt(0).toUpperCase()}${command.summary.slice(1)}.`,
    '',
    ...Object.entries(command.optionHelp ?? {}).map(([name, text]) => {
      const flag = `--${name}${command.options?.[name]?.type === 'string' ? ' VALUE' : ''}`;
      return flag.length < 24 ? `  ${flag.padEnd(24)}${text}` : `  ${flag}\n  ${' '.repeat(24)}${text}`;
    }),
    '  --config FILE   the site configuration (default: $POS_SYNC_CONFIG, the machine-wide file, your own)',
    '  --json          print JSON (errors too: {"error":{"id","message"}} on stderr)',
    '  -h, --help      this help',
    '',
    EXIT_CODES_TEXT,
  ].join('\n');
}

function groupHelp(word: string, commands: readonly Command[]): string {
  return [`Usage: pos-sync-agent ${word} COMMAND [options]`, '', 'Commands:', ...commands.map(helpLine), '', EXIT_CODES_TEXT].join('\n');
}

/** A word safe to repeat in a message: a command-like word, never the rest of the line (it may hold a secret). */
function echoable(word: string | undefined): string | null {
  return word !== undefined && /^[a-z]+(-[a-z]+)*$/i.test(word) && word.length <= 24 ? word : null;
}

/** `--json` is honoured for errors even when the line does not parse. */
function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json');
}

interface Failure {
  readonly code: number;
  readonly id: string;
  readonly message: string;
  /** Extra JSON fields (a configuration error's problems). */
  readonly extra?: Readonly<Record<string, unknown>>;
  /** Printed after the message in text mode only. */
  readonly hint?: string;
}

/** Every error a command can end with, mapped to its exit code, stable id and a message without stack. */
function failureOf(err: unknown, command: Command | null): Failure {
  const usageHint = command ? `See: pos-sync-agent ${command.name} --help` : 'See: pos-sync-agent --help';
  if (err instanceof UsageError) return { code: EXIT.usage, id: 'usage', message: err.message, hint: usageHint };
  if ((err as { code?: string } | null)?.code?.startsWith('ERR_PARSE_ARGS')) {
    return { code: EXIT.usage, id: 'usage', message: command ? plainParseError(err as Error & { code?: string }, command) : (err as Error).message, hint: usageHint };
  }
  if (err instanceof ConfigError) return { code: EXIT.config, id: 'config_invalid', message: err.message, extra: { problems: err.problems } };
  if (err instanceof AppError) {
    return {
      code: err.status === 400 || err.status === 422 ? EXIT.invalidInput : EXIT.failed,
      id: err.id,
      message: redactor.redact(err.message),
    };
  }
  return { code: EXIT.failed, id: 'failed', message: redactor.redact(describeError(err)) };
}

function report(failure: Failure, json: boolean): number {
  if (json) writeErr(`${JSON.stringify({ error: { id: failure.id, message: failure.message, ...(failure.extra ?? {}) } })}\n`);
  else {
    const suffix = failure.id === 'usage' || failure.id === 'config_invalid' ? '' : ` [${failure.id}]`;
    writeErr(`${failure.message}${suffix}\n${failure.hint ? `${failure.hint}\n` : ''}`);
  }
  return failure.code;
}

export async function run(rawArgv: readonly string[]): Promise<number> {
  // `-v` is how many tools print their version; it means the same here (`-V`, `--version`).
  // `help` and `help COMMAND` are the same as `--help` and `COMMAND --help`.
  let argv = rawArgv.map((a) => (a === '-v' ? '--version' : a));
  const firstWord = commandWords(argv)[0];
  if (firstWord === 'help') {
    const at = argv.indexOf('help');
    argv = [...argv.slice(0, at), ...argv.slice(at + 1), '--help'];
  }
  const json = wantsJson(argv);
  const words = commandWords(argv);
  const command = findCommand(words);
  if (!command) {
    const asked = argv.includes('--help') || argv.includes('-h');
    if (argv.includes('--version') || argv.includes('-V')) {
      writeOut(json ? `${JSON.stringify({ version: appVersion() })}\n` : `pos-sync-agent ${appVersion()}\n`);
      return EXIT.ok;
    }
    const group = groupOf(words[0]);
    if (group.length > 0 && (words.length === 1 || asked)) {
      if (asked) {
        writeOut(`${groupHelp(words[0]!, group)}\n`);
        return EXIT.ok;
      }
      return report({ code: EXIT.usage, id: 'usage', message: `${words[0]} needs a command: ${group.map((c) => c.name).join(', ')}`, hint: `See: pos-sync-agent ${words[0]} --help` }, json);
    }
    if (words.length === 0) {
      // Asked for, help is the output; typed by mistake (no command), it is the usage error's text.
      if (asked) writeOut(`${help()}\n`);
      else if (json) report({ code: EXIT.usage, id: 'usage', message: 'no command given' }, json);
      else writeErr(`${help()}\n`);
      return asked ? EXIT.ok : EXIT.usage;
    }
    const known = group.length > 0 ? echoable(words[0]) : null;
    const typed = echoable(words[0]);
    // A typo gets the nearest command: `webhok` is not a command; nearest is... (one or two words).
    const guess = known
      ? didYouMean(words.slice(0, 2).join(' '), group.map((c) => c.name))
      : typed
        ? didYouMean(typed, [...new Set(COMMANDS.map((c) => c.name.split(' ')[0]!))])
        : null;
    const message = known
      ? `Unknown ${known} command; the ${known} commands are: ${group.map((c) => c.name).join(', ')}${guess ? ` (did you mean ${guess}?)` : ''}`
      : typed
        ? `Unknown command: ${typed}${guess ? ` (did you mean ${guess}?)` : ''}`
        : 'Unknown command';
    return report({ code: EXIT.usage, id: 'usage', message, hint: 'See: pos-sync-agent --help' }, json);
  }
  const nameWords = command.name.split(' ');
  try {
    const parsed = parseArgs({
      args: [...argv],
      options: { ...COMMON_OPTIONS, ...(command.options ?? {}) },
      allowPositionals: true,
      strict: true,
    });
    if (parsed.values.help) {
      writeOut(`${commandHelp(command)}\n`);
      return EXIT.ok;
    }
    if (parsed.values.version) {
      writeOut(json ? `${JSON.stringify({ version: appVersion() })}\n` : `pos-sync-agent ${appVersion()}\n`);
      return EXIT.ok;
    }
    // The command's words must be the first positionals: a flag placed before them cannot have taken one.
    if (nameWords.some((w, i) => parsed.positionals[i] !== w)) {
      throw new UsageError(`put the command first: pos-sync-agent ${command.name} ${command.usage}`.trim());
    }
    const positionals = parsed.positionals.slice(nameWords.length);
    const [min, max] = command.positionals ?? [0, 0];
    if (positionals.length < min || positionals.length > max) {
      throw new UsageError(`expected: pos-sync-agent ${`${command.name} ${command.usage}`.trim()}`);
    }
    const ctx = makeContext(positionals, parsed.values);
    // Hints this command prints (`Run: pos-sync-agent ...`) carry the --config it needs to reach this site.
    setInvocationConfigArgument(configArgument(ctx.site(), { exists: (file) => fs.existsSync(file), machineTrusted: () => machineConfigTrusted() }));
    command.check?.(ctx);
    const use = dataUseOf(command);
    checkSite(ctx, command.name, use);
    refuseOlderDataFolder(ctx.config(), command.name, use);
    try {
      return await command.run(ctx);
    } finally {
      if (use !== 'none') leaveTillReadableWhenStopped(ctx.config());
    }
  } catch (err) {
    return report(failureOf(err, command), json);
  }
}

export function main(argv: readonly string[]): void {
  // Every file any command writes (databases, backups, logs, zips, secrets) is owner-only.
  restrictUmask();
  guardOutputStreams();
  run(argv).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.exitCode = report(failureOf(err, null), wantsJson(argv));
    },
  );
}

/**
 * Commands that read or change the data folder but never upgrade it, and work on a folder an older
 * version left, leaving it as that version can use it: `backup` (read-only connections; a backup
 * before an upgrade is how support goes back), `backup list` and `tunnel status` (no database),
 * `ops status` (reads what it can, read-only), `compact` (VACUUM keeps every file's schema). `restore`
 * (`replace`) rebuilds the folder and upgrades it, as the agent's start does.
 */
const WORKS_ON_OLDER_DATA: ReadonlySet<string> = new Set(['backup', 'backup list', 'tunnel status', 'ops status', 'compact']);

/**
 * Before any other command that reads or changes the data folder: one an older version left (its
 * agent perhaps still running on it) is refused as it is (`site_not_upgraded`), read without changing
 * a byte. Only the agent's start upgrades it (docs/operations.md, "Upgrade"); a command that did would
 * lock the older version out of the folder, its `restore` included.
 */
function refuseOlderDataFolder(config: Readonly<Config>, name: string, use: ReturnType<typeof dataUseOf>): void {
  if (use === 'none' || use === 'replace' || WORKS_ON_OLDER_DATA.has(name) || !fs.existsSync(config.dataDir)) return;
  const older = olderStoreFiles(config.dataDir);
  if (older.length === 0) return;
  const agent = runningAgent(config.dataDir);
  const note =
    agent && agent.pid !== 0
      ? `An agent (pid ${agent.pid}) runs on it and has not upgraded it: an older version, or one still starting. To upgrade, stop it (${howToStopAgent()}), then start this version.`
      : '';
  throw olderDataError(config.dataDir, older, note);
}

/**
 * After a command that used the data folder, with no agent running on it: the till's file as a stopped
 * agent leaves it for a till reading as another account (till.readerGroup). After a crash the file is
 * still in WAL mode, and the command's connection, the last to close, removed its -wal and -shm, which
 * that till cannot create again (src/ops/private-files.ts, leaveTillFileReadable).
 */
function leaveTillReadableWhenStopped(config: Readonly<Config>): void {
  if (config.till.readerGroup === null || !fs.existsSync(config.dataDir) || isInstanceLocked(config.dataDir)) return;
  leaveTillFileReadable(config, silentLogger);
}

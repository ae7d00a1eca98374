import { parseArgs } from 'node:util';
import { ConfigError, AppError, describeError } from '../errors';
import { redactor } from '../log';
import { EXIT, UsageError, makeContext, type Command } from './command';
import { COMMANDS } from './commands';
import { restrictUmask } from '../ops/private-files';

const COMMON_OPTIONS = {
  config: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

function findCommand(words: readonly string[]): { command: Command; rest: string[] } | null {
  for (const take of [2, 1]) {
    const name = words.slice(0, take).join(' ');
    const command = COMMANDS.find((c) => c.name === name);
    if (command) return { command, rest: words.slice(take) };
  }
  return null;
}

const HELP_COLUMN = 40;

function help(): string {
  // Two columns; a command whose usage is too long for the first gets its summary on the next line.
  const line = (c: Command): string => {
    const usage = `${c.name} ${c.usage}`.trim();
    return usage.length < HELP_COLUMN ? `  ${usage.padEnd(HELP_COLUMN)}${c.summary}` : `  ${usage}\n  ${' '.repeat(HELP_COLUMN)}${c.summary}`;
  };
  return [
    'Usage: pos-sync-agent COMMAND [options] [--config FILE] [--json]',
    '',
    'Commands:',
    ...COMMANDS.map(line),
    '',
    'Every command takes --config FILE (default: built-in defaults plus POS_SYNC__* environment variables)',
    'and --json where it prints data. Exit codes: 0 ok, 1 failed, 2 usage, 3 configuration, 4 input refused.',
  ].join('\n');
}

export async function run(argv: readonly string[]): Promise<number> {
  const words = argv.filter((a) => !a.startsWith('-'));
  const found = findCommand(words.slice(0, 2));
  if (!found) {
    if (argv.includes('--help') || argv.includes('-h') || argv.length === 0) {
      process.stdout.write(`${help()}\n`);
      return argv.length === 0 ? EXIT.usage : EXIT.ok;
    }
    process.stderr.write(`Unknown command: ${words.slice(0, 2).join(' ') || '(none)'}\n\n${help()}\n`);
    return EXIT.usage;
  }
  const { command } = found;
  const nameWords = command.name.split(' ').length;
  try {
    const parsed = parseArgs({
      args: [...argv],
      options: { ...COMMON_OPTIONS, ...(command.options ?? {}) },
      allowPositionals: true,
      strict: true,
    });
    if (parsed.values.help) {
      process.stdout.write(`Usage: pos-sync-agent ${command.name} ${command.usage}\n${command.summary}\n`);
      return EXIT.ok;
    }
    const positionals = parsed.positionals.slice(nameWords);
    const [min, max] = command.positionals ?? [0, 0];
    if (positionals.length < min || positionals.length > max) {
      throw new UsageError(`expected: pos-sync-agent ${command.name} ${command.usage}`);
    }
    return await command.run(makeContext(positionals, parsed.values));
  } catch (err) {
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`${(err as Error).message}\nSee: pos-sync-agent ${command.name} --help\n`);
      return EXIT.usage;
    }
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      return EXIT.config;
    }
    if (err instanceof AppError) {
      process.stderr.write(`${redactor.redact(err.message)} [${err.id}]\n`);
      return err.status === 400 || err.status === 422 ? EXIT.invalidInput : EXIT.failed;
    }
    process.stderr.write(`${redactor.redact(describeError(err))}\n`);
    return EXIT.failed;
  }
}

export function main(argv: readonly string[]): void {
  // Every file any command writes (databases, backups, logs, zips, secrets) is owner-only.
  restrictUmask();
  run(argv).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`${redactor.redact(describeError(err))}\n`);
      process.exitCode = EXIT.failed;
    },
  );
}

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { COMMANDS } from '../../../src/cli/commands';
import { docFiles } from '../../helpers/doc-blocks';

/**
 * Every `pos-sync-agent …` the docs mention, in any code block or inline code span, names a command
 * the CLI has, with options that command takes. The docs test (test/integration/install/
 * docs-commands.test.ts) runs the shell blocks; this holds the rest to the CLI too: the synopses, the
 * tables of commands and the commands quoted in prose, which a reader types as they read them.
 */

const ROOT = path.resolve(__dirname, '..', '..', '..');
const COMMON = new Set(['config', 'json', 'help', 'version']);

/** Where a command starts: a line's start, after a prompt, `sudo -u ACCOUNT`, `&&`, `;` or a pipe (not `journalctl -u pos-sync-agent`). */
const COMMAND_START = /(?:^\s*|\$\s+|sudo -u \S+\s+|&&\s*|;\s*|\|\s*)(pos-sync-agent\s.*)$/;

interface Mention {
  readonly where: string;
  readonly text: string;
}

/** Code spans and code block lines that start a `pos-sync-agent` command, with where they are. */
export function mentions(file: string, markdown: string): Mention[] {
  const out: Mention[] = [];
  const lines = markdown.split('\n');
  let fence: string | null = null;
  lines.forEach((line, i) => {
    const where = `${path.relative(ROOT, file)}:${i + 1}`;
    const open = /^\s*(`{3,}|~{3,})/.exec(line);
    if (open) {
      fence = fence === null ? open[1]! : line.trim().startsWith(fence) ? null : fence;
      return;
    }
    if (fence !== null) {
      const m = COMMAND_START.exec(line);
      if (m && !line.trimStart().startsWith('#')) out.push({ where, text: m[1]!.replace(/\s+#.*$/, '').replace(/\\$/, '').trim() });
      return;
    }
    for (const span of line.matchAll(/`([^`]+)`/g)) {
      const m = COMMAND_START.exec(span[1]!);
      if (m) out.push({ where, text: m[1]!.trim() });
    }
  });
  return out;
}

/** The command a mention names (longest name first: `staff search` before a one-word one), and its flags. */
function check(text: string): string | null {
  const words = text.split(/\s+/).slice(1);
  // Options go before or after the command: leave out --config's value wherever it is.
  const rest = words.filter((w, i) => !w.startsWith('-') && words[i - 1] !== '--config');
  const command = [...COMMANDS].sort((a, b) => b.name.length - a.name.length).find((c) => c.name.split(' ').every((w, i) => rest[i] === w));
  if (!command) {
    // `pos-sync-agent --help`, `--version`, or a group's help (`pos-sync-agent staff --help`).
    if (words.every((w) => w.startsWith('-') && COMMON.has(w.replace(/^-+/, '').split('=')[0]!))) return null;
    if (words.length === 2 && words[1] === '--help' && COMMANDS.some((c) => c.name.startsWith(`${words[0]} `))) return null;
    return `no command ${rest.slice(0, 2).join(' ') || '(none)'}`;
  }
  const options = new Set([...COMMON, ...Object.keys(command.options ?? {})]);
  for (const word of words) {
    const flag = /^--([a-z][a-z0-9-]*)/.exec(word.replace(/^\[/, ''))?.[1];
    if (flag !== undefined && !options.has(flag)) return `${command.name} takes no --${flag}`;
  }
  // A shell reads an unquoted # after a space as the start of a comment.
  if (/\s#[\w.]/.test(text)) return 'an unquoted # (a shell drops the rest of the line): quote it';
  return null;
}

describe('the CLI commands the docs mention', () => {
  const all = docFiles(ROOT).flatMap((file) => mentions(file, fs.readFileSync(file, 'utf8')));

  it('finds them in blocks and in prose (the check below has something to check)', () => {
    assert.ok(all.length > 50, `only ${all.length} mentions`);
    assert.ok(all.some((m) => m.where.startsWith('docs/staff.md')), 'the staff synopsis block');
  });

  it('catches a command that does not exist, an option it does not take, and an unquoted #', () => {
    assert.match(check('pos-sync-agent stauts')!, /no command stauts/);
    assert.match(check('pos-sync-agent restore BACKUP --force')!, /restore takes no --force/);
    assert.match(check('pos-sync-agent resolve-conflict 3021:1043 --keep #2 --reason x')!, /unquoted #/);
    assert.equal(check("pos-sync-agent resolve-conflict 3021:1043 --keep '#2' --reason x"), null);
    assert.equal(check('pos-sync-agent staff search QUERY [--limit N]'), null);
    assert.equal(check('pos-sync-agent --version'), null);
  });

  for (const m of all) {
    it(`${m.where}: ${m.text}`, () => {
      assert.equal(check(m.text), null);
    });
  }
});

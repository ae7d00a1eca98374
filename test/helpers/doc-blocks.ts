import fs from 'node:fs';
import path from 'node:path';

/**
 * Shell commands in the docs (README.md and docs/*.md), as the docs test runs them. The convention,
 * for anyone writing docs:
 *
 * - A ```sh (or ```bash, ```shell) block holds commands that run as printed, one command per line
 *   (a line ending in `\` continues on the next). The test runs each line against a scratch site.
 * - `# prints: TEXT` on its own line: the command above prints TEXT (`…` stands for any text).
 * - `# not run here: REASON` as a block's first line: the whole block is only checked for syntax
 *   (`bash -n`); at the end of a command line: that line only. Use it for what this machine cannot
 *   run (systemctl, an installer, a Windows path) or must not (npm ci in a checkout).
 * - Windows commands go in ```powershell or ```bat / ```cmd blocks: listed, never run here.
 * - Any other block (```json, ```sql, unlabelled) is not a command.
 */

export const SHELL_LANGS = new Set(['sh', 'bash', 'shell']);
export const WINDOWS_LANGS = new Set(['powershell', 'ps1', 'pwsh', 'bat', 'cmd', 'batch']);
export const NOT_RUN = /#\s*not run here:\s*(\S.*)$/;
export const PRINTS = /^#\s*prints:\s*(.*)$/;

export interface DocCommand {
  /** The command line as printed (continuations joined). */
  readonly text: string;
  /** Why it is not run here, or null when it runs. */
  readonly notRun: string | null;
  /** What it must print (`…` for any text), from `# prints:` lines after it. */
  readonly prints: string[];
}

export interface DocBlock {
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  readonly lang: string;
  readonly text: string;
  /** The reason from a first-line `# not run here:` marker, or null. */
  readonly notRun: string | null;
  readonly commands: DocCommand[];
}

export function docFiles(root: string): string[] {
  const docs = path.join(root, 'docs');
  return [path.join(root, 'README.md'), ...fs.readdirSync(docs).filter((f) => f.endsWith('.md')).sort().map((f) => path.join(docs, f))];
}

/** Every fenced block of a Markdown text with its language (empty when unlabelled). */
export function fencedBlocks(file: string, markdown: string): { line: number; lang: string; text: string }[] {
  const out: { line: number; lang: string; text: string }[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w+-]*)/.exec(lines[i]!);
    if (!open) continue;
    const fence = open[2]!;
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !lines[j]!.trim().startsWith(fence)) body.push(lines[j++]!);
    if (j >= lines.length) throw new Error(`${file}:${i + 1}: a code block is not closed`);
    out.push({ line: i + 1, lang: open[3]!.toLowerCase(), text: body.join('\n') });
    i = j;
  }
  return out;
}

/** The commands of one shell block, by the convention above. */
export function commandsOf(text: string): { notRun: string | null; commands: DocCommand[] } {
  const lines = text.split('\n');
  const firstNonEmpty = lines.find((l) => l.trim() !== '') ?? '';
  const blockMarker = /^\s*#/.test(firstNonEmpty) ? NOT_RUN.exec(firstNonEmpty) : null;
  const commands: { text: string; notRun: string | null; prints: string[] }[] = [];
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!.trim();
    if (line === '') continue;
    const prints = PRINTS.exec(line);
    if (prints) {
      const last = commands[commands.length - 1];
      if (!last) throw new Error(`"# prints:" before any command: ${line}`);
      last.prints.push(prints[1]!.trim());
      continue;
    }
    if (line.startsWith('#')) continue;
    while (line.endsWith('\\') && i + 1 < lines.length) line = `${line.slice(0, -1)} ${lines[++i]!.trim()}`;
    const marker = NOT_RUN.exec(line);
    commands.push({ text: line, notRun: blockMarker?.[1] ?? marker?.[1] ?? null, prints: [] });
  }
  return { notRun: blockMarker?.[1] ?? null, commands };
}

export function docBlocks(root: string): DocBlock[] {
  return docFiles(root).flatMap((file) =>
    fencedBlocks(file, fs.readFileSync(file, 'utf8'))
      .filter((b) => SHELL_LANGS.has(b.lang) || WINDOWS_LANGS.has(b.lang))
      .map((b) => {
        const rel = path.relative(root, file);
        if (WINDOWS_LANGS.has(b.lang)) return { file: rel, line: b.line, lang: b.lang, text: b.text, notRun: 'Windows only', commands: [] };
        return { file: rel, line: b.line, lang: b.lang, text: b.text, ...commandsOf(b.text) };
      }),
  );
}

/** `prints` text with `…` as a wildcard, as a pattern over the command's output. */
export function printsPattern(expected: string): RegExp {
  return new RegExp(expected.split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('[^\\n]*'));
}

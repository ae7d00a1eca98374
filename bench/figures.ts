/**
 * The docs' current-figures tables, rendered from the latest result of each bench (bench/results.ts).
 * A table sits in a doc between `<!-- figures:NAME -->` and `<!-- /figures:NAME -->`;
 * `npm run docs:figures` rewrites every such block, and test/unit/docs/figures.test.ts fails when a
 * block differs from its rendering. Add a table here, then its markers where a reader needs it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { FIGURE_TABLES } from './figure-tables';
import { latestResult, RESULTS_DIR } from './results';

export { FIGURE_TABLES } from './figure-tables';

/** A block: its opening marker, its content (empty in a block not rendered yet) and its closing marker. */
const BLOCK = /(<!-- figures:([a-z0-9-]+) -->)\n([\s\S]*?)\n?(<!-- \/figures:\2 -->)/g;

/** Each figures block of a text: its table name and its current content. */
export function figureBlocks(text: string): { name: string; content: string }[] {
  return [...text.matchAll(BLOCK)].map((m) => ({ name: m[2]!, content: m[3]! }));
}

/** The rendering of a named table from the latest result of its bench. */
export function renderTable(name: string, resultsDir: string = RESULTS_DIR): string {
  const table = FIGURE_TABLES[name];
  if (!table) throw new Error(`no figures table named ${name} (bench/figures.ts)`);
  const latest = latestResult(table.bench, resultsDir);
  if (!latest) throw new Error(`no result of bench ${table.bench} in ${resultsDir}: run it first`);
  return table.render(latest);
}

/** The text with every figures block rendered anew. */
export function renderBlocks(text: string, resultsDir: string = RESULTS_DIR): string {
  return text.replace(BLOCK, (_all, open: string, name: string, _content: string, close: string) => `${open}\n${renderTable(name, resultsDir)}\n${close}`);
}

/** The docs that may hold figures blocks. */
export function docFiles(root: string = path.join(__dirname, '..')): string[] {
  const docs = path.join(root, 'docs');
  return [path.join(root, 'README.md'), ...fs.readdirSync(docs).filter((f) => f.endsWith('.md')).map((f) => path.join(docs, f))];
}

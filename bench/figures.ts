/**
 * The docs' current-figures tables, rendered from the latest result of each bench (bench/results.ts).
 * A table sits in a doc between `<!-- figures:NAME -->` and `<!-- /figures:NAME -->`;
 * `npm run docs:figures` rewrites every such block, and test/unit/docs/figures.test.ts fails when a
 * block differs from its rendering. Add a table here, then its markers where a reader needs it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { latestResult, RESULTS_DIR, type BenchRecord } from './results';

interface ParseFigures {
  items: number;
  bytes: number;
  rounds: number;
  parseExactMs: { median: number; min: number; max: number };
  jsonParseMs: { median: number; min: number; max: number };
  ratio: number;
}

interface LookupFigures {
  plus: number;
  results: { variant: string; lookups: number; p50Ms: number; p90Ms: number; p99Ms: number }[];
}

const ms = (n: number, digits: number): string => `${n.toFixed(digits)} ms`;
interface RunFigures {
  results: {
    size: string;
    items: number;
    payloadBytes: number;
    rowsWritten: number;
    ackMs: number;
    applyMs: number;
    applySamplesMs: number[];
    peakRssBytes: number;
    ratios: { ackVsParsePlusBodyInsert: number; applyVsRawRowsInsert: number; peakRssVsPayload: number };
    tillLookup?: { reader: string; lookups: number; p50Ms: number; p99Ms: number };
    duringApply?: {
      eventLoopDelay: { p99Ms: number };
      tillLookupDuringApply: { reader: string; lookups: number; p50Ms: number; p99Ms: number };
      ratios: { longestSmallAckVsIdleP99: number };
    };
  }[];
}

/** A row against a target: the measured value and whether it meets the target. */
const vs = (what: string, value: number, shown: string, target: string, met: (v: number) => boolean): string => `| ${what} | ${shown} | ${target} (${met(value) ? 'met' : 'not met'}) |`;


const COMMANDS: Record<string, string> = { parse: 'npm run bench:parse', lookup: 'npm run bench:lookup', 'run-L': 'npm run bench -- --sizes L' };

/** One line under each table: where and when its figures were measured. */
export function provenance(r: BenchRecord): string {
  const gib = (r.machine.memoryBytes / 2 ** 30).toFixed(0);
  return (
    `Measured ${r.date.slice(0, 10)} by \`${COMMANDS[r.bench] ?? r.bench}\` at ` +
    `${r.commit.slice(0, 7)}${r.dirty ? ' (with uncommitted changes)' : ''}: ${r.machine.cpus} × ${r.machine.cpuModel}, ${gib} GiB, ` +
    `Node ${r.node}, SQLite ${r.sqlite.betterSqlite3} (better-sqlite3)${r.sqlite.nodeSqlite ? `, ${r.sqlite.nodeSqlite} (node:sqlite)` : ''}.`
  );
}

export const RUN_L_TABLE = {
  bench: 'run-L',
  render(r: BenchRecord): string {
    const l = (r.figures as RunFigures).results.find((x) => x.size === 'L');
    if (!l) throw new Error('the run-L result has no L size');
    const rows = [
      `| L publication (${l.items} items, ${(l.payloadBytes / 1e6).toFixed(1)} MB, ${l.rowsWritten} range rows) | measured | target |`,
      '|---|---|---|',
      `| 200 (ack) | ${ms(l.ackMs, 0)} | |`,
      vs('ack / (JSON.parse + raw body insert), same run', l.ratios.ackVsParsePlusBodyInsert, l.ratios.ackVsParsePlusBodyInsert.toFixed(2), '≤ 2', (v) => v <= 2),
      `| 200 -> applied, median of ${l.applySamplesMs.length} | ${ms(l.applyMs, 0)} | |`,
      vs('apply / raw rows insert, same run', l.ratios.applyVsRawRowsInsert, l.ratios.applyVsRawRowsInsert.toFixed(2), '≤ 2', (v) => v <= 2),
      vs('peak RSS / payload, whole run', l.ratios.peakRssVsPayload, l.ratios.peakRssVsPayload.toFixed(2), '< 6', (v) => v < 6),
    ];
    if (l.tillLookup) rows.push(vs(`till lookup p99, idle (${l.tillLookup.reader})`, l.tillLookup.p99Ms, ms(l.tillLookup.p99Ms, 3), '< 1 ms', (v) => v < 1));
    const d = l.duringApply;
    if (d) {
      rows.push(vs('longest small ack during a second L apply / idle p99 small ack', d.ratios.longestSmallAckVsIdleP99, d.ratios.longestSmallAckVsIdleP99.toFixed(2), '≤ 10', (v) => v <= 10));
      rows.push(vs("receiver's event-loop delay p99 during that apply", d.eventLoopDelay.p99Ms, ms(d.eventLoopDelay.p99Ms, 2), '≤ 20 ms', (v) => v <= 20));
      rows.push(vs(`till lookup p99 during that apply (${d.tillLookupDuringApply.reader})`, d.tillLookupDuringApply.p99Ms, ms(d.tillLookupDuringApply.p99Ms, 3), '< 0.2 ms', (v) => v < 0.2));
    }
    return [...rows, '', provenance(r)].join('\n');
  },
};

export const FIGURE_TABLES: Readonly<Record<string, { readonly bench: string; render(r: BenchRecord): string }>> = {
  parse: {
    bench: 'parse',
    render(r) {
      const f = r.figures as ParseFigures;
      return [
        `| Parsing the L publication's items (${f.items} items, ${(f.bytes / 1e6).toFixed(1)} MB) | median | range (${f.rounds} rounds) |`,
        '|---|---|---|',
        `| \`parseExact\` (numbers kept as written) | ${ms(f.parseExactMs.median, 0)} | ${f.parseExactMs.min.toFixed(0)}–${ms(f.parseExactMs.max, 0)} |`,
        `| \`JSON.parse\` (baseline) | ${ms(f.jsonParseMs.median, 0)} | ${f.jsonParseMs.min.toFixed(0)}–${ms(f.jsonParseMs.max, 0)} |`,
        `| parseExact / JSON.parse | ${f.ratio.toFixed(2)} | |`,
        '',
        provenance(r),
      ].join('\n');
    },
  },
  'run-l': RUN_L_TABLE,
  lookup: {
    bench: 'lookup',
    render(r) {
      const f = r.figures as LookupFigures;
      return [
        `| Till lookup by location and PLU for today (${f.plus} PLUs of the L menu), through | p50 | p90 | p99 | lookups |`,
        '|---|---|---|---|---|',
        ...f.results.map((x) => `| ${x.variant} | ${ms(x.p50Ms, 3)} | ${ms(x.p90Ms, 3)} | ${ms(x.p99Ms, 3)} | ${x.lookups} |`),
        '',
        provenance(r),
      ].join('\n');
    },
  },
};

const BLOCK = /(<!-- figures:([a-z0-9-]+) -->\n)([\s\S]*?)(\n<!-- \/figures:\2 -->)/g;

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
  return text.replace(BLOCK, (_all, open: string, name: string, _content: string, close: string) => `${open}${renderTable(name, resultsDir)}${close}`);
}

/** The docs that may hold figures blocks. */
export function docFiles(root: string = path.join(__dirname, '..')): string[] {
  const docs = path.join(root, 'docs');
  return [path.join(root, 'README.md'), ...fs.readdirSync(docs).filter((f) => f.endsWith('.md')).map((f) => path.join(docs, f))];
}

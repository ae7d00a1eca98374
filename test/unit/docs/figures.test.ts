import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { docFiles, figureBlocks, FIGURE_TABLES, renderBlocks, renderTable } from '../../../bench/figures';
import type { BenchRecord } from '../../../bench/results';

/**
 * The docs' figures tables are rendered from the benches' latest results (bench/results/,
 * bench/figures.ts): a table typed or edited by hand, or results newer than the docs, fail here.
 * Fix: `npm run docs:figures` (after running the bench whose results changed).
 */
describe('figures in the docs', () => {
  const blocks = docFiles().flatMap((file) => figureBlocks(fs.readFileSync(file, 'utf8')).map((b) => ({ file: path.basename(file), ...b })));

  it('the docs hold figures tables (the check below has something to check)', () => {
    assert.ok(blocks.length > 0, 'no <!-- figures:NAME --> block in README.md or docs/');
  });

  it('every table in the docs is its rendering from the latest results (npm run docs:figures)', () => {
    for (const b of blocks) assert.equal(b.content, renderTable(b.name), `${b.file}: figures:${b.name} differs from its rendering; run npm run docs:figures`);
  });

  it('a table edited by hand, or a newer result, is told apart from the rendering', () => {
    const results = fs.mkdtempSync(path.join(os.tmpdir(), 'pos-sync-figures-'));
    try {
      const record = (date: string, median: number): BenchRecord => ({
        bench: 'parse',
        date,
        commit: '0123456789abcdef',
        dirty: false,
        machine: { cpus: 2, cpuModel: 'Test CPU', memoryBytes: 2 ** 33, platform: 'linux' },
        node: 'v24.0.0',
        sqlite: { betterSqlite3: '3.54.1', nodeSqlite: null },
        figures: { items: 5000, bytes: 43e6, rounds: 8, parseExactMs: { median, min: median, max: median }, jsonParseMs: { median: 100, min: 90, max: 110 }, ratio: median / 100 },
      });
      fs.mkdirSync(path.join(results, 'parse'));
      fs.writeFileSync(path.join(results, 'parse', 'a.json'), JSON.stringify(record('2026-01-01T00:00:00.000Z', 150)));
      const doc = '# x\n<!-- figures:parse -->\nold\n<!-- /figures:parse -->\n';
      const rendered = renderBlocks(doc, results);
      assert.match(rendered, /\| `parseExact` \(numbers kept as written\) \| 150 ms \|/);
      assert.equal(renderBlocks(rendered, results), rendered, 'rendering is stable');
      fs.writeFileSync(path.join(results, 'parse', 'b.json'), JSON.stringify(record('2026-02-01T00:00:00.000Z', 170)));
      assert.notEqual(renderBlocks(rendered, results), rendered, 'the newest result wins');
      assert.match(renderBlocks(rendered, results), /170 ms/);
      assert.throws(() => renderTable('no-such-table', results), /no figures table named no-such-table/);
    } finally {
      fs.rmSync(results, { recursive: true, force: true });
    }
  });

  it('every table has a bench and a place in the docs', () => {
    const placed = new Set(blocks.map((b) => b.name));
    for (const [name, t] of Object.entries(FIGURE_TABLES)) {
      assert.ok(t.bench.length > 0, name);
      assert.ok(placed.has(name), `figures:${name} is rendered nowhere: add its markers to a doc or remove it from bench/figure-tables.ts`);
    }
  });

  it('a table names the command that made its figures, with the arguments it was given', () => {
    const results = fs.mkdtempSync(path.join(os.tmpdir(), 'pos-sync-figures-'));
    try {
      fs.mkdirSync(path.join(results, 'parse'));
      const record: BenchRecord = {
        bench: 'parse',
        args: ['--rounds', '4'],
        date: '2026-01-01T00:00:00.000Z',
        commit: 'fedcba9876543210',
        dirty: true,
        machine: { cpus: 2, cpuModel: 'Test CPU', memoryBytes: 2 ** 33, platform: 'linux' },
        node: 'v24.0.0',
        sqlite: { betterSqlite3: '3.54.1', nodeSqlite: '3.53.4' },
        figures: { items: 5000, bytes: 43e6, rounds: 4, parseExactMs: { median: 150, min: 140, max: 160 }, jsonParseMs: { median: 100, min: 90, max: 110 }, ratio: 1.5 },
      };
      fs.writeFileSync(path.join(results, 'parse', 'a.json'), JSON.stringify(record));
      assert.match(renderTable('parse', results), /Measured 2026-01-01 by `npm run bench:parse -- --rounds 4` at fedcba9 \(with uncommitted changes\)/);
    } finally {
      fs.rmSync(results, { recursive: true, force: true });
    }
  });
});

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { AgentCore } from '../../src/core';
import { silentLogger } from '../../src/log';
import { openReadOnly, storeFilePath } from '../../src/store/database';
import { fencedBlocks } from '../helpers/doc-blocks';
import { SAMPLES_DIR, tempDir, testConfig } from '../helpers/fixtures';

/**
 * Every SQL statement docs/pos-database.md shows a till integrator runs as printed on a real till
 * file (the samples applied), read-only as a till reads it, with its named parameters bound to the
 * samples' values. The answers the doc promises for some of them are checked too.
 */

const DOC = path.resolve(__dirname, '..', '..', 'docs', 'pos-database.md');

/** The statements of the doc's ```sql blocks, comments dropped, each with the line of its block. */
function statements(): { line: number; sql: string }[] {
  return fencedBlocks(DOC, fs.readFileSync(DOC, 'utf8'))
    .filter((b) => b.lang === 'sql')
    .flatMap((b) =>
      b.text
        .split('\n')
        .map((l) => l.replace(/--.*$/, ''))
        .join('\n')
        .split(';')
        .map((sql) => sql.trim())
        .filter((sql) => sql.length > 0)
        .map((sql) => ({ line: b.line, sql })),
    );
}

/** Values for the names the doc's statements use, from the samples (location 3021, PLU 1001, Christmas Day). */
const PARAMETERS: Record<string, unknown> = { location: 3021, plu: '1001', date: '2026-12-25', last: 0, location_id: 3021, item_id: '8812-0001' };

describe('the SQL docs/pos-database.md shows a till', () => {
  const dataDir = tempDir('pos-sync-doc-sql-');
  const core = new AgentCore(testConfig({ dataDir, sync: { baselineSettleSeconds: 0 } }), silentLogger);
  for (const file of fs.readdirSync(SAMPLES_DIR).filter((f) => f.endsWith('.json')).sort()) core.importPayload(fs.readFileSync(path.join(SAMPLES_DIR, file)), 'test');
  core.close();
  const found = statements();

  it('finds the statements (the check below has something to check)', () => {
    assert.ok(found.length >= 8, `${found.length} statements`);
  });

  // One connection per block, its statements in order (a block may open a read transaction).
  for (const line of [...new Set(found.map((f) => f.line))]) {
    const block = found.filter((f) => f.line === line);
    it(`pos-database.md:${line}: ${block.map((b) => b.sql.split('\n')[0]).join(' / ')}`, () => {
      const till = openReadOnly(storeFilePath(dataDir, 'till'));
      try {
        for (const { sql } of block) {
          const names = [...sql.matchAll(/:([a-z_]+)/g)].map((m) => m[1]!);
          for (const n of names) assert.ok(n in PARAMETERS, `the test has no value for :${n}`);
          const bound = Object.fromEntries(names.map((n) => [n, PARAMETERS[n]]));
          const statement = till.prepare(sql);
          if (statement.reader) statement.all(names.length > 0 ? bound : []);
          else statement.run(names.length > 0 ? bound : []);
        }
      } finally {
        till.close();
      }
    });
  }

  it("the lunch queries tell an item not tied to meal periods from one not sold at lunch, on a date's rows", () => {
    const till = openReadOnly(storeFilePath(dataDir, 'till'));
    try {
      // The same questions as the doc's, on the dated view (its _today forms ask them for each location's today).
      const periods = (plu: string): number => (till.prepare("SELECT count(*) AS n FROM pos_availability WHERE location_id = 3021 AND plu = ? AND '2026-12-25' BETWEEN date_from AND date_to").get(plu) as { n: number }).n;
      const lunch = (plu: string): unknown => till.prepare("SELECT status FROM pos_availability WHERE location_id = 3021 AND plu = ? AND meal_period = 'Lunch' AND '2026-12-25' BETWEEN date_from AND date_to").get(plu);
      const withPeriods = (till.prepare("SELECT DISTINCT plu FROM pos_availability WHERE location_id = 3021 AND '2026-12-25' BETWEEN date_from AND date_to").all() as { plu: string }[]).map((r) => r.plu);
      const priced = (till.prepare("SELECT DISTINCT plu FROM pos_prices WHERE location_id = 3021 AND '2026-12-25' BETWEEN date_from AND date_to").all() as { plu: string }[]).map((r) => r.plu);
      const untied = priced.filter((p) => !withPeriods.includes(p));
      const notAtLunch = withPeriods.filter((p) => lunch(p) === undefined);
      // The samples hold both kinds, or this proves nothing.
      assert.ok(untied.length > 0 && notAtLunch.length > 0, `untied ${untied}, not at lunch ${notAtLunch}`);
      for (const p of untied) assert.deepEqual([lunch(p), periods(p)], [undefined, 0], p);
      for (const p of notAtLunch) assert.ok(periods(p) > 0, p);
    } finally {
      till.close();
    }
  });
});

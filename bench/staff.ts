/**
 * Staff benchmark: a full sync of N employees (default 5,000) from the simulator over loopback, and
 * search latency over the cache, each with a same-run baseline:
 * - sync vs. raw fetch + JSON.parse of the same responses (what any client must pay);
 * - search (StaffService.search: normalise, LIKE scan of the normalised column, rank) vs. a bare
 *   point SELECT by primary key, and vs. an FTS5 trigram index built over the same text.
 * Usage: npx tsx bench/staff.ts [--employees N] [--runs R] [--json]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { parseConfig } from '../src/config/load';
import { AgentCore } from '../src/core';
import { createEmployeeApi } from '../src/dev/employee-api/app';
import { likeEscape, searchTerms } from '../src/employees/search';
import { StaffService } from '../src/employees/service';
import { silentLogger } from '../src/log';
import { recordResult } from './results';

const { values } = parseArgs({ options: { employees: { type: 'string' }, runs: { type: 'string' }, json: { type: 'boolean' }, 'no-record': { type: 'boolean' } } });
const EMPLOYEES = Number(values.employees ?? 5000);
const RUNS = Number(values.runs ?? 5);
const QUERIES = ['zoe', 'mull', 'E2500', "o'brien", 'siobhan', 'lukasz wis', 'ni bhriain', 'xyzzy', 'a', 'kelly'];
const SEARCH_ROUNDS = 200;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
function stats(samples: number[]): { p50: number; p99: number; mean: number } {
  const s = [...samples].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p99: percentile(s, 99), mean: s.reduce((a, b) => a + b, 0) / s.length };
}
const ms = (n: number): string => (n < 1 ? `${(n * 1000).toFixed(0)} µs` : `${n.toFixed(1)} ms`);

async function main(): Promise<void> {
  const sim = createEmployeeApi({ employees: EMPLOYEES - 8, seed: 7, organisationId: 1 });
  const running = await sim.listen(0);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'staff-bench-'));
  try {
    const config = parseConfig({ dataDir: dir, admin: { enabled: false }, employees: { baseUrl: running.url, organisationId: 1, syncIntervalMinutes: 0 } });
    const core = new AgentCore(config, silentLogger);
    const staff = new StaffService(config, silentLogger, { db: core.staffDb });

    // The same six requests a full sync makes, fetched and parsed with nothing else.
    const urls = ['/Locations', '/Divisions', '/EmployeeSource', '/organisations/1/Employees?showFormer=true', '/organisations/1/Employees?showFormer=false', '/organisations/1/Employees/Employments?showFormer=true'];
    const rawTimes: number[] = [];
    const syncTimes: number[] = [];
    let bytes = 0;
    for (let run = 0; run < RUNS; run++) {
      let t0 = performance.now();
      bytes = 0;
      for (const u of urls) {
        const text = await (await fetch(`${running.url}${u}`)).text();
        bytes += Buffer.byteLength(text);
        JSON.parse(text);
      }
      rawTimes.push(performance.now() - t0);
      t0 = performance.now();
      const report = await staff.sync({ full: true });
      syncTimes.push(performance.now() - t0);
      if (report.errors.length > 0 || report.counts.employees !== EMPLOYEES) throw new Error(`sync failed: ${JSON.stringify(report)}`);
    }

    // Search: the service's search, a bare primary-key SELECT, and an FTS5 trigram index for comparison.
    const searchSamples: number[] = [];
    const pointSamples: number[] = [];
    const ftsSamples: number[] = [];
    core.staffDb.exec("CREATE VIRTUAL TABLE temp.bench_fts USING fts5(search_text, tokenize = 'trigram')");
    core.staffDb.exec('INSERT INTO temp.bench_fts (rowid, search_text) SELECT employee_id, search_text FROM staff_employees');
    const point = core.staffDb.prepare('SELECT employee_id, display_name FROM staff_employees WHERE employee_id = ?');
    const fts = core.staffDb.prepare(
      "SELECT e.employee_id, e.display_name FROM temp.bench_fts f JOIN staff_employees e ON e.employee_id = f.rowid WHERE f.search_text LIKE ? ESCAPE '\\' ORDER BY e.former, e.display_name LIMIT 21",
    );
    let hits = 0;
    for (let round = 0; round < SEARCH_ROUNDS; round++) {
      for (const q of QUERIES) {
        let t0 = performance.now();
        hits += staff.search(q, 20).results.length;
        searchSamples.push(performance.now() - t0);
        t0 = performance.now();
        point.get(2000 + ((round * 37) % EMPLOYEES));
        pointSamples.push(performance.now() - t0);
        const terms = searchTerms(q);
        t0 = performance.now();
        fts.all(`%${likeEscape(terms.join(' '))}%`);
        ftsSamples.push(performance.now() - t0);
      }
    }
    const sync = stats(syncTimes);
    const raw = stats(rawTimes);
    const search = stats(searchSamples);
    const pk = stats(pointSamples);
    const tri = stats(ftsSamples);
    const result = {
      employees: EMPLOYEES,
      runs: RUNS,
      responseBytes: bytes,
      fullSync: { p50Ms: sync.p50, meanMs: sync.mean },
      rawFetchParse: { p50Ms: raw.p50, meanMs: raw.mean },
      syncOverRaw: sync.p50 / raw.p50,
      search: { queries: searchSamples.length, p50Ms: search.p50, p99Ms: search.p99, hits },
      pointSelect: { p50Ms: pk.p50, p99Ms: pk.p99 },
      fts5Trigram: { p50Ms: tri.p50, p99Ms: tri.p99 },
      searchOverPointSelectP50: search.p50 / pk.p50,
      searchOverFtsP50: search.p50 / tri.p50,
      node: process.version,
      cpus: os.cpus().length,
    };
    recordResult('staff', result);
    if (values.json) {
      process.stdout.write(`${JSON.stringify(result)}\n`);
    } else {
      const rows: [string, string, string, string][] = [
        ['what', 'p50', 'p99 / mean', 'ratio'],
        [`full sync of ${EMPLOYEES} (6 requests, ${(bytes / 1e6).toFixed(1)} MB)`, ms(sync.p50), `mean ${ms(sync.mean)}`, `${result.syncOverRaw.toFixed(2)}x raw`],
        ['  baseline: raw fetch + JSON.parse, same responses', ms(raw.p50), `mean ${ms(raw.mean)}`, '1x'],
        [`staff search (${QUERIES.length} queries x ${SEARCH_ROUNDS})`, ms(search.p50), ms(search.p99), `${result.searchOverPointSelectP50.toFixed(1)}x point`],
        ['  baseline: SELECT by primary key', ms(pk.p50), ms(pk.p99), '1x'],
        ['  comparison: FTS5 trigram LIKE', ms(tri.p50), ms(tri.p99), `search/fts ${result.searchOverFtsP50.toFixed(2)}x`],
      ];
      const w = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => r[i]!.length)));
      for (const r of rows) process.stdout.write(`${r.map((c, i) => c.padEnd(w[i]!)).join('  ')}\n`);
      process.stdout.write(`(node ${process.version}, ${os.cpus().length} CPUs, ${RUNS} sync runs)\n`);
    }
    await staff.stop();
    core.close();
  } finally {
    await running.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});

// The random-kill crash suite at scale (not part of `npm test`): `npm run soak -- --kills 1000`.
// Runs test/faults/crash.test.ts with FAULT_KILLS=<n> (and FAULT_SEED=<seed> when given); the
// assertions are the same as in CI, only the number of kills differs. When it passes, its summary
// (kills, deliveries, wall time) is recorded as the bench results are (bench/results/soak/, rendered
// into docs/reliability.md by `npm run docs:figures`), unless --no-record.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { recordResult } from '../bench/results';

const { values } = parseArgs({ options: { kills: { type: 'string', default: '1000' }, seed: { type: 'string' }, 'no-record': { type: 'boolean', default: false } } });
if (!/^\d+$/.test(values.kills)) {
  console.error('--kills takes a whole number');
  process.exit(2);
}
const summaryDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pos-sync-soak-'));
const summaryFile = path.join(summaryDir, 'summary.json');
const env = { ...process.env, FAULT_KILLS: values.kills, FAULT_SUMMARY_FILE: summaryFile, ...(values.seed ? { FAULT_SEED: values.seed } : {}) };
const started = performance.now();
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', 'test/faults/crash.test.ts'], { stdio: 'inherit', env });
const wallSeconds = (performance.now() - started) / 1000;
if (result.status === 0 && fs.existsSync(summaryFile)) {
  recordResult('soak', { ...JSON.parse(fs.readFileSync(summaryFile, 'utf8')), wallSeconds });
}
fs.rmSync(summaryDir, { recursive: true, force: true });
process.exit(result.status ?? 1);

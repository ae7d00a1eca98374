#!/usr/bin/env node
// The random-kill crash suite at scale (not part of `npm test`): `npm run soak -- --kills 1000`.
// Runs test/faults/crash.test.ts with FAULT_KILLS=<n> (and FAULT_SEED=<seed> when given) and prints
// its summary line; the assertions are the same as in CI, only the number of kills differs.
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { kills: { type: 'string', default: '1000' }, seed: { type: 'string' } } });
if (!/^\d+$/.test(values.kills)) {
  console.error('--kills takes a whole number');
  process.exit(2);
}
const env = { ...process.env, FAULT_KILLS: values.kills, ...(values.seed ? { FAULT_SEED: values.seed } : {}) };
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', 'test/faults/crash.test.ts'], { stdio: 'inherit', env });
process.exit(result.status ?? 1);

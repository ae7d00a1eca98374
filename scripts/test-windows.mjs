#!/usr/bin/env node
// `npm run test:windows`: the built agent and its command line run as Windows processes (Node for
// Windows under Wine), driven by node:test on this machine's Node (test/windows/). Installs what it
// needs first (scripts/windows-prerequisites.mjs), builds, runs the suites, and stops the Wine
// server it started. Arguments are test files or folders (default: test/windows).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const started = Date.now();

const prereq = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'windows-prerequisites.mjs')], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
process.stdout.write(prereq.stdout.split('\n').slice(0, -2).map((l) => `${l}\n`).join(''));
if (prereq.status !== 0) process.exit(prereq.status ?? 1);
const paths = JSON.parse(prereq.stdout.trim().split('\n').pop());

const { wineEnv } = await import('./windows-prerequisites.mjs');
const env = wineEnv({ POS_SYNC_WINE: paths.wine, POS_SYNC_WINDOWS_NODE: paths.node });

const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);

// One Wine server for the whole run (persistent until killed): every Windows process of every suite
// shares it and the prefix, instead of each start paying for a new one.
// (It refuses when one already runs for this prefix, say a previous run's that is ending: that one is used.)
spawnSync(paths.wineserver, ['-p'], { env, stdio: 'inherit' });
// Suites that change the prefix machine-wide (a registered service, %ProgramData%\pos-sync-agent, which
// every other agent's command would find as the site's configuration) run alone, after the others.
const ALONE = ['test/windows/service.test.ts'];
let status = 1;
try {
  const given = process.argv.slice(2);
  const runs = given.length ? [given] : [fs.readdirSync(path.join(ROOT, 'test', 'windows')).filter((f) => f.endsWith('.test.ts')).map((f) => `test/windows/${f}`).filter((f) => !ALONE.includes(f)), ALONE];
  status = 0;
  for (const files of runs) {
    const tests = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'run-tests.mjs'), ...files], { cwd: ROOT, env, stdio: 'inherit' });
    if (tests.status !== 0) status = tests.status ?? 1;
  }
} finally {
  // Ends every Windows process left in this prefix (a failed test's agent) and the server itself.
  spawnSync(paths.wineserver, ['-k'], { env, stdio: 'inherit' });
}
console.log(`test:windows: ${((Date.now() - started) / 1000).toFixed(0)} s in all`);
process.exit(status);

#!/usr/bin/env node
// Runs node's built-in test runner over every *.test.ts file below the given folders, with tsx
// loading TypeScript. The files are listed here rather than globbed by `node --test`, so the same
// folders and single files can be given on every supported Node.
//
// Tests that need root or Debian packages (scripts/test-groups.mjs, test/helpers/system.ts):
//   --without-system (npm test): left out, and listed at the end;
//   --system (npm run test:system): only they run, with the files that declare single ones;
//   neither (a developer naming files or folders): everything given runs, system tests included.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { DECLARES_SYSTEM_TESTS, SYSTEM_FILES } from './test-groups.mjs';

const args = process.argv.slice(2);
const system = args.includes('--system');
const withoutSystem = args.includes('--without-system');
const roots = args.filter((a) => !a.startsWith('--'));
const passThrough = args.filter((a) => a.startsWith('--') && a !== '--system' && a !== '--without-system');
const files = [];
function walk(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full);
    else if (entry.name.endsWith('.test.ts')) files.push(full);
  }
}
for (const root of roots.length ? roots : ['test']) {
  if (!fs.existsSync(root)) continue;
  if (fs.statSync(root).isDirectory()) walk(root);
  else files.push(root);
}
files.sort();

const rel = (file) => path.relative(process.cwd(), path.resolve(file)).split(path.sep).join('/');
const systemNeeds = (file) => SYSTEM_FILES.find(([p]) => rel(file) === p || rel(file).startsWith(`${p}/`))?.[1] ?? null;
const declared = (file) => DECLARES_SYSTEM_TESTS.test(fs.readFileSync(file, 'utf8'));
/** The single tests a file leaves to test:system: `it('name', needs('what')`. */
const declaredTests = (file) => [...fs.readFileSync(file, 'utf8').matchAll(/it\(\s*(['"`])(.+?)\1,\s*needs\((['"`])(.+?)\3/g)].map((m) => `${m[2]} (needs ${m[4]})`);

const selected = system ? files.filter((f) => systemNeeds(f) !== null || declared(f)) : withoutSystem ? files.filter((f) => systemNeeds(f) === null) : files;
if (selected.length === 0) {
  console.error(`no ${system ? 'system ' : ''}test files under ${roots.join(', ') || 'test'}`);
  process.exit(1);
}
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-reporter=spec', `--test-concurrency=${process.env.TEST_CONCURRENCY ?? 2}`, ...passThrough, ...selected],
  { stdio: 'inherit', env: { ...process.env, ...(withoutSystem ? {} : { POS_SYNC_TEST_SYSTEM: '1' }) } },
);

if (withoutSystem) {
  const leftFiles = files.filter((f) => systemNeeds(f) !== null);
  const leftTests = files.filter((f) => systemNeeds(f) === null && declared(f)).flatMap((f) => declaredTests(f).map((t) => `${rel(f)}: ${t}`));
  if (leftFiles.length + leftTests.length > 0) {
    console.log(`\nLeft to \`npm run test:system\` (needs root or Debian packages; .ci/run runs it):`);
    for (const f of leftFiles) console.log(`  ${rel(f)} (needs ${systemNeeds(f)})`);
    for (const t of leftTests) console.log(`  ${t}`);
  }
}
process.exit(result.status ?? 1);

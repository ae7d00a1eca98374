#!/usr/bin/env node
// Runs node's built-in test runner over every *.test.ts file below the given folders, with tsx
// loading TypeScript. The files are listed here rather than globbed by `node --test`, so the same
// folders and single files can be given on every supported Node.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const roots = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const passThrough = process.argv.slice(2).filter((a) => a.startsWith('--'));
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
if (files.length === 0) {
  console.error(`no test files under ${roots.join(', ')}`);
  process.exit(1);
}
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-reporter=spec', `--test-concurrency=${process.env.TEST_CONCURRENCY ?? 2}`, ...passThrough, ...files],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);

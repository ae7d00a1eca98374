#!/usr/bin/env node
// Builds the status window (renderer/) into renderer/dist/: type-checks renderer/src with the DOM
// types, bundles it with esbuild (uPlot included, no CDN), and copies index.html. The admin server
// serves renderer/dist and refuses to start without it.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const rendererDir = path.join(root, 'renderer');
const outDir = path.join(rendererDir, 'dist');
const skipTypecheck = process.argv.includes('--no-typecheck');

if (!skipTypecheck) {
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const result = spawnSync(process.execPath, [tsc, '--noEmit', '-p', path.join(rendererDir, 'tsconfig.json')], { stdio: 'inherit' });
  if (result.status !== 0) {
    console.error('renderer: type errors (see above)');
    process.exit(1);
  }
}

fs.rmSync(outDir, { recursive: true, force: true });
fs.mkdirSync(outDir, { recursive: true });
await esbuild.build({
  absWorkingDir: root,
  entryPoints: { app: path.join(rendererDir, 'src', 'main.ts') },
  bundle: true,
  outdir: outDir,
  format: 'iife',
  platform: 'browser',
  target: ['chrome120'],
  minify: true,
  sourcemap: 'linked',
  legalComments: 'linked',
  logLevel: 'warning',
});
fs.copyFileSync(path.join(rendererDir, 'index.html'), path.join(outDir, 'index.html'));
const files = fs.readdirSync(outDir).sort();
console.log(`renderer built into ${path.relative(root, outDir)}/: ${files.join(', ')}`);

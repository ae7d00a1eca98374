#!/usr/bin/env node
// Bundles the compiled command (dist/src/cli/main.js), the desktop app's agent process
// (dist/src/electron/agent-process.js) and the two worker threads both start into dist/agent/, one
// file each, with esbuild. `npm run build` runs it after tsc; bin/pos-sync-agent.cjs
// runs dist/agent/cli.js when it is there.
//
// Why: a running agent that loads its code as the few hundred files tsc and its packages are made of
// keeps more memory for as long as it runs than one that loads three files, because Node's module
// loader, run once per file, becomes hot enough for V8 to compile it with its optimising compilers,
// and each file's module record is kept (issue 29; `npm run bench` prints serve's idle RSS). The
// files in dist/src stay as they are: the desktop app's main process, the tests and the harnesses load
// them.
//
// What stays outside the bundle, loaded from node_modules at run time:
// - better-sqlite3: a native addon, found next to its package;
// - electron: only there inside the desktop app;
// - prom-client and express: loaded only when needed (a metrics token; `dev employee-api`), so a
//   running agent without them never reads them (test/integration/serve-modules.test.ts);
// - tsx: only for POS_SYNC_FROM_SOURCE, never from the build.
// The list of what each bundle holds is written to dist/agent/meta.json (esbuild's metafile), which
// test/unit/packaging/agent-bundle.test.ts reads.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const compiled = path.join(root, 'dist', 'src');
const outDir = path.join(root, 'dist', 'agent');

const EXTERNAL_PACKAGES = ['better-sqlite3', 'electron', 'prom-client', 'express', 'tsx'];

// The worker files sit next to cli.js under the names ThreadClient looks for beside its caller
// (workerEntry in src/threads/thread-client.ts: `dir: __dirname` in receiver-host and applier-host).
const entryPoints = {
  cli: path.join(compiled, 'cli', 'main.js'),
  'receiver-worker': path.join(compiled, 'webhook', 'receiver-worker.js'),
  'applier-worker': path.join(compiled, 'sync', 'applier-worker.js'),
  // The desktop app's agent process (Electron's utilityProcess; main.ts forks it from here), which
  // starts the same two worker threads from beside itself.
  'agent-process': path.join(compiled, 'electron', 'agent-process.js'),
};

for (const [name, file] of Object.entries(entryPoints)) {
  if (!fs.existsSync(file)) {
    console.error(`bundle-agent: ${path.relative(root, file)} (for ${name}) is missing: run tsc first (npm run build)`);
    process.exit(1);
  }
}

fs.rmSync(outDir, { recursive: true, force: true });
const result = await esbuild.build({
  absWorkingDir: root,
  entryPoints,
  outdir: outDir,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node22',
  external: EXTERNAL_PACKAGES.flatMap((p) => [p, `${p}/*`]),
  // Names stay as written, so a stack trace in the log still names the function it came from.
  minify: false,
  sourcemap: 'linked',
  metafile: true,
  logLevel: 'warning',
});
fs.writeFileSync(path.join(outDir, 'meta.json'), `${JSON.stringify(result.metafile)}\n`);

// Each bundle is written in ASCII. V8 holds a script's source in the heap for as long as the script
// lives, as one byte per character only when every character is below U+0100; a single `—` or `’`
// makes it two bytes per character, doubling what the largest bundle's source costs the main thread.
// esbuild escapes strings and identifiers (charset ascii) but leaves comments and regular expression
// literals as written (its own code and its packages', e.g. zod's comments). In both, and in strings
// and identifiers, `\uXXXX` means the same as the character; only a String.raw template's text would
// differ, so the build refuses one that holds such a character.
// test/unit/packaging/agent-bundle.test.ts checks that the bundles are ASCII.
for (const name of Object.keys(entryPoints)) {
  const file = path.join(outDir, `${name}.js`);
  const text = fs.readFileSync(file, 'utf8');
  for (const raw of text.matchAll(/String\.raw`([^`]*)`/g)) {
    if (/[\u0080-\uffff]/.test(raw[1])) {
      console.error(`bundle-agent: ${name}.js has a String.raw template with a character outside ASCII, which escaping would change: ${raw[0].slice(0, 80)}`);
      process.exit(1);
    }
  }
  const ascii = text.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (ascii !== text) fs.writeFileSync(file, ascii);
}

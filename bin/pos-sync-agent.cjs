#!/usr/bin/env node
'use strict';
// The `pos-sync-agent` command. First it checks that this Node is one the product runs on
// (package.json `engines.node`): on another, better-sqlite3 may crash the process without a word,
// so an unsupported Node gets one line and exit 1 before anything native loads. This file and
// node-version.cjs use syntax every Node can parse.
//
// Then it runs the compiled JavaScript in dist/ (in the published package; in a checkout, built by
// `npm run build`): an installed agent, a service or the desktop app's command never runs TypeScript.
// The command is dist/agent/cli.js, bundled with the worker threads it starts beside it
// (scripts/bundle-agent.mjs: a running agent keeps less memory when it loads three files, not hundreds).
// Developers who want the sources without building set POS_SYNC_FROM_SOURCE=1 (needs tsx).
var path = require('path');
var fs = require('fs');

var root = path.join(__dirname, '..');
var engines = null;
try {
  engines = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).engines;
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- a binding old Nodes can parse
} catch (unreadable) {
  engines = null;
}
var problem = require('./node-version.cjs').versionProblem(process.versions.node, engines && engines.node, process.execPath);
if (problem) {
  process.stderr.write(problem + '\n');
  process.exit(1);
}

var built = path.join(root, 'dist', 'agent', 'cli.js');
var source = path.join(root, 'src', 'cli', 'main.ts');

// A running agent sets V8 up for a process that idles for months (src/threads/agent-v8-flags.ts: the
// main thread's young generation held, worker threads compiling on their own thread), before the
// agent's modules load. The other commands run briefly and keep V8's defaults.
var serving = process.argv[2] === 'serve';

var fromSource = process.env.POS_SYNC_FROM_SOURCE === '1';

// On Linux a running agent starts with glibc's malloc settings (src/threads/malloc-settings.ts), which
// glibc reads only when a process starts: `serve` runs itself again in its own place, with the same
// process id, arguments and output, before it loads anything else. At most once: the second start
// carries POS_SYNC_MALLOC_EXEC (a glibc that drops GLIBC_TUNABLES, as for a privileged process, must
// not make it start itself forever). Not when a parent talks to it over an IPC channel, which an exec
// would close. A Node without process.execve (before 22.15), or an exec that fails, runs on with
// glibc's defaults.
var execMarker = 'POS_SYNC_MALLOC_EXEC';
if (process.env[execMarker] !== undefined) {
  delete process.env[execMarker];
} else if (serving && typeof process.execve === 'function' && !process.channel && (fromSource || fs.existsSync(built))) {
  if (fromSource) require('tsx/cjs');
  var settings = fromSource ? path.join(root, 'src', 'threads', 'malloc-settings.ts') : path.join(root, 'dist', 'src', 'threads', 'malloc-settings.js');
  var env = require(settings).agentEnvironment(process.env, process.platform);
  if (env.GLIBC_TUNABLES !== process.env.GLIBC_TUNABLES) {
    try {
      fs.accessSync(process.execPath, fs.constants.X_OK);
      env[execMarker] = '1';
      process.execve(process.execPath, [process.execPath].concat(process.execArgv, process.argv.slice(1)), env);
      // eslint-disable-next-line @typescript-eslint/no-unused-vars -- a binding old Nodes can parse
    } catch (notRun) {
      // Not allowed or not there (a permission model, a Node replaced under it): glibc's defaults.
    }
  }
}

if (fromSource) {
  require('tsx/cjs');
  if (serving) require(path.join(root, 'src', 'threads', 'agent-v8-flags.ts'));
  require(source).main(process.argv.slice(2));
} else if (fs.existsSync(built)) {
  if (serving) require(path.join(root, 'dist', 'src', 'threads', 'agent-v8-flags.js'));
  require(built).main(process.argv.slice(2));
} else {
  process.stderr.write('pos-sync-agent is not built: run `npm run build` in ' + root + ' (or set POS_SYNC_FROM_SOURCE=1 in a development checkout)\n');
  process.exit(1);
}

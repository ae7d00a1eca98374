#!/usr/bin/env node
'use strict';
// Runs the compiled JavaScript in dist/ (built by `npm ci`'s prepare step, `npm run build`, and
// `npm test`): an installed agent, a systemd unit or a package never runs TypeScript through tsx.
// Developers who want the sources without building set POS_SYNC_FROM_SOURCE=1 (needs tsx).
const path = require('node:path');
const fs = require('node:fs');

const root = path.join(__dirname, '..');
const built = path.join(root, 'dist', 'src', 'cli', 'main.js');
const source = path.join(root, 'src', 'cli', 'main.ts');

if (process.env.POS_SYNC_FROM_SOURCE === '1') {
  require('tsx/cjs');
  require(source).main(process.argv.slice(2));
} else if (fs.existsSync(built)) {
  require(built).main(process.argv.slice(2));
} else {
  process.stderr.write(`pos-sync-agent is not built: run \`npm run build\` in ${root} (or set POS_SYNC_FROM_SOURCE=1 in a development checkout)\n`);
  process.exit(1);
}

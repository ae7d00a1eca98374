#!/usr/bin/env node
'use strict';
// In a checkout, run the TypeScript sources through tsx so the CLI always matches the code;
// in a package (no src/ or no tsx), run the compiled JavaScript from dist/.
const path = require('node:path');
const fs = require('node:fs');

const root = path.join(__dirname, '..');
const source = path.join(root, 'src', 'cli', 'main.ts');
let useSource = fs.existsSync(source) && process.env.POS_SYNC_USE_DIST !== '1';
if (useSource) {
  try {
    require.resolve('tsx/cjs', { paths: [root] });
  } catch {
    useSource = false;
  }
}
if (useSource) {
  require('tsx/cjs');
  require(source).main(process.argv.slice(2));
} else {
  require(path.join(root, 'dist', 'src', 'cli', 'main.js')).main(process.argv.slice(2));
}

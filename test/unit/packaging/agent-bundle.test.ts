import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';

/**
 * What the bundles in dist/agent/ hold (scripts/bundle-agent.mjs; `npm run build` makes them and
 * writes esbuild's metafile beside them). `pos-sync-agent serve` runs these three files, so what is
 * bundled into them is what a running agent can load: the packages a thread must never load stay out,
 * and what is outside is loaded from node_modules only when asked for
 * (test/integration/serve-modules.test.ts watches that from a running serve).
 */
const ROOT = path.join(__dirname, '..', '..', '..');
const META = path.join(ROOT, 'dist', 'agent', 'meta.json');

interface Metafile {
  readonly outputs: Record<string, { readonly inputs: Record<string, unknown> }>;
}

function packagesIn(output: string): Set<string> {
  assert.ok(fs.existsSync(META), 'build first: npm run build (npm test does)');
  const meta = JSON.parse(fs.readFileSync(META, 'utf8')) as Metafile;
  const entry = meta.outputs[`dist/agent/${output}`];
  assert.ok(entry, `dist/agent/${output} is one of the bundles (${Object.keys(meta.outputs).join(', ')})`);
  const packages = new Set<string>();
  for (const input of Object.keys(entry.inputs)) {
    const m = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
    packages.add(m ? m[1]! : '(own)');
  }
  return packages;
}

/** Never inside a bundle: a native addon, Electron, the lazily loaded packages, the TypeScript loader. */
const NEVER_BUNDLED = ['better-sqlite3', 'electron', 'prom-client', 'express', 'body-parser', 'serve-static', 'tsx'];

describe('dist/agent: the bundles serve runs', () => {
  it('the command holds the agent, zod, router, electron-log and yazl, and none of what stays outside', () => {
    const packages = packagesIn('cli.js');
    for (const p of ['(own)', 'zod', 'router', 'electron-log', 'yazl']) assert.ok(packages.has(p), `${p} in cli.js (${[...packages].join(', ')})`);
    for (const p of NEVER_BUNDLED) assert.ok(!packages.has(p), `${p} is not bundled into cli.js`);
  });

  it('the webhook thread holds neither zod nor express (docs/performance.md, "Threads")', () => {
    const packages = packagesIn('receiver-worker.js');
    assert.ok(packages.has('router'), `router in receiver-worker.js (${[...packages].join(', ')})`);
    for (const p of ['zod', ...NEVER_BUNDLED]) assert.ok(!packages.has(p), `${p} is not bundled into receiver-worker.js`);
  });

  it('the applier thread holds none of what stays outside', () => {
    const packages = packagesIn('applier-worker.js');
    assert.ok(packages.has('(own)'));
    for (const p of NEVER_BUNDLED) assert.ok(!packages.has(p), `${p} is not bundled into applier-worker.js`);
  });

  it('the desktop app\'s agent process holds the agent and none of what stays outside, electron included', () => {
    const packages = packagesIn('agent-process.js');
    for (const p of ['(own)', 'zod', 'router', 'electron-log']) assert.ok(packages.has(p), `${p} in agent-process.js (${[...packages].join(', ')})`);
    for (const p of NEVER_BUNDLED) assert.ok(!packages.has(p), `${p} is not bundled into agent-process.js`);
  });

  it('every bundle is ASCII, so V8 holds its source at one byte a character', () => {
    for (const name of ['cli.js', 'receiver-worker.js', 'applier-worker.js', 'agent-process.js']) {
      const text = fs.readFileSync(path.join(ROOT, 'dist', 'agent', name), 'utf8');
      const at = text.search(/[\u0080-\uffff]/);
      const line = at < 0 ? '' : text.slice(text.lastIndexOf('\n', at) + 1, text.indexOf('\n', at));
      assert.equal(at, -1, `${name} holds ${JSON.stringify(text[at])} in: ${line.slice(0, 200)}`);
    }
    // The bundles did hold such characters before the build escaped them: the staff search's folds.
    assert.match(fs.readFileSync(path.join(ROOT, 'dist', 'agent', 'cli.js'), 'utf8'), /\\u0142/);
  });

  it('an escaped character still means itself: the staff search folds Łukasz and O’Sullivan in the bundle', () => {
    // The bundle's copy of normaliseForSearch, taken out by its name and run.
    const text = fs.readFileSync(path.join(ROOT, 'dist', 'agent', 'cli.js'), 'utf8');
    const start = text.indexOf('var FOLDS');
    const end = text.indexOf('\n    }\n', text.indexOf('function normaliseForSearch', start));
    assert.ok(start > 0 && end > start, 'normaliseForSearch and its FOLDS are in cli.js');
    const normalise = new Function(`${text.slice(start, end + 7)}\nreturn normaliseForSearch;`)() as (t: string) => string;
    assert.equal(normalise('Łukasz O’Sullivan-Þór'), 'lukasz osullivanthor');
  });
});

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';

const MODULE = path.join(__dirname, '..', '..', '..', 'src', 'threads', 'agent-v8-flags.ts');

/**
 * A plain Node process (no loader: tsx would grow the heap before the module runs; Node strips the
 * types itself) that loads the module first (or not), then allocates the way loading the agent's modules
 * does (many objects, a third of them kept), and prints the size of its young generation.
 */
function youngGenerationAfterLoading(hold: boolean): number {
  const script = `
    ${hold ? `require(${JSON.stringify(MODULE)});` : ''}
    const kept = [];
    for (let i = 0; i < 3e5; i++) { const o = { i, text: 'item ' + i }; if (i % 3 === 0) kept.push(o); }
    const space = require('node:v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    process.stdout.write(String(space.space_size) + ' ' + kept.length);`;
  const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const [size, kept] = run.stdout.trim().split(' ').map(Number);
  assert.equal(kept, 1e5);
  return size!;
}

/**
 * Whether V8 compiles optimised code on its background threads, in a plain Node process that loads
 * the module first (or not): asked of the main thread's isolate and of a worker thread's made after.
 */
function concurrentRecompilation(load: boolean): { main: boolean; worker: boolean } {
  const script = `
    require('node:v8').setFlagsFromString('--allow-natives-syntax');
    ${load ? `require(${JSON.stringify(MODULE)});` : ''}
    const main = eval('%IsConcurrentRecompilationSupported()');
    const { Worker } = require('node:worker_threads');
    const w = new Worker("require('node:worker_threads').parentPort.postMessage(%IsConcurrentRecompilationSupported())", { eval: true });
    w.once('message', (worker) => { process.stdout.write(JSON.stringify({ main, worker })); w.terminate(); });`;
  const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stderr, '', 'every flag is one this V8 knows (an unknown one is reported on stderr)');
  return JSON.parse(run.stdout) as { main: boolean; worker: boolean };
}

describe('agent-v8-flags', () => {
  it('worker threads made after it compile on their own thread; the main thread as before', { timeout: 60_000 }, () => {
    assert.deepEqual(concurrentRecompilation(true), { main: true, worker: false });
    assert.deepEqual(concurrentRecompilation(false), { main: true, worker: true }, 'without it V8 compiles in the background: the check no longer tells');
  });

  it('keeps the young generation at the size it starts with, where V8 alone grows it', { timeout: 60_000 }, () => {
    const held = youngGenerationAfterLoading(true);
    const grown = youngGenerationAfterLoading(false);
    assert.ok(held <= 4 * 1024 * 1024, `held: ${held} bytes`);
    assert.ok(grown >= 4 * held, `without it V8 grew it to ${grown} bytes (held: ${held}): the allocation no longer exercises growth`);
  });
});

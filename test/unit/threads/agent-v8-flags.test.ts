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

/**
 * How V8 optimised a hot function, in a plain Node process that loads the module first (or not): in
 * the main thread and in a worker thread made after (%GetOptimizationStatus's bits: 32 Maglev, 64
 * Turbofan).
 */
function optimisedBy(load: boolean): { main: string; worker: string } {
  const script = `
    require('node:v8').setFlagsFromString('--allow-natives-syntax');
    ${load ? `require(${JSON.stringify(MODULE)});` : ''}
    const hot = \`
      function sum(a) { let s = 0; for (let i = 0; i < a.length; i++) s += a[i] * 2; return s; }
      const a = new Array(1000).fill(1);
      // Rounds of calls until V8 reaches Turbofan, or for all of them: on a busy machine one round may
      // end before V8 asks for it. A compile still under way on a background thread is finished and
      // installed after each round: the check reads what V8 chose, not how far it got.
      let status = 0;
      for (let round = 0; round < 10 && !(status & 64); round++) {
        for (let i = 0; i < 200000; i++) sum(a);
        eval('%FinalizeOptimization()');
        status = eval('%GetOptimizationStatus(sum)');
      }
      const by = status & 64 ? 'turbofan' : status & 32 ? 'maglev' : 'neither';\`;
    const main = new Function(hot + 'return by;')();
    const { Worker } = require('node:worker_threads');
    const w = new Worker(hot + "require('node:worker_threads').parentPort.postMessage(by);", { eval: true });
    w.once('message', (worker) => { process.stdout.write(JSON.stringify({ main, worker })); w.terminate(); });`;
  const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stderr, '');
  return JSON.parse(run.stdout) as { main: string; worker: string };
}

describe('agent-v8-flags', () => {
  it('hot functions are optimised by Maglev, never Turbofan, on the main thread and in workers', { timeout: 60_000 }, () => {
    assert.deepEqual(optimisedBy(true), { main: 'maglev', worker: 'maglev' });
    assert.deepEqual(optimisedBy(false), { main: 'turbofan', worker: 'turbofan' }, 'without it V8 uses Turbofan: the check no longer tells');
  });

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

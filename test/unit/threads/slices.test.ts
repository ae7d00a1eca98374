import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runSteps, type Steps } from '../../../src/domain/steps';
import { runInSlices } from '../../../src/threads/slices';

/** `n` steps, each noting itself in `log`, returning n. */
function* counted(n: number, log: string[]): Steps<number> {
  for (let i = 0; i < n; i++) {
    log.push(`step ${i}`);
    yield;
  }
  return n;
}

describe('work in steps', () => {
  it('runSteps runs every step at once', () => {
    const log: string[] = [];
    setImmediate(() => log.push('other work'));
    assert.equal(runSteps(counted(3, log)), 3);
    assert.deepEqual(log, ['step 0', 'step 1', 'step 2']);
  });

  it('runInSlices lets other work run between slices that have used their time', async () => {
    const log: string[] = [];
    setImmediate(() => log.push('other work'));
    assert.equal(await runInSlices(counted(3, log), 0), 3);
    // A slice of 0 ms ends after every step: the waiting callback runs after the first.
    assert.deepEqual(log, ['step 0', 'other work', 'step 1', 'step 2']);
  });

  it('runInSlices runs on within a slice that has time left', async () => {
    const log: string[] = [];
    setImmediate(() => log.push('other work'));
    assert.equal(await runInSlices(counted(3, log), 60_000), 3);
    assert.deepEqual(log, ['step 0', 'step 1', 'step 2']);
  });

  it('runInSlices passes on a step that throws', async () => {
    function* failing(): Steps<number> {
      yield;
      throw new Error('bad step');
    }
    await assert.rejects(runInSlices(failing(), 0), /bad step/);
  });
});

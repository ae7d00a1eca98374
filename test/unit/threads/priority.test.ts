import assert from 'node:assert/strict';
import os from 'node:os';
import { describe, it } from 'node:test';
import { applyPriorityToCurrentThread, BACKGROUND_PRIORITY, describePriority, priorityPlan, threadIdFromLink, type PriorityOs } from '../../../src/threads/priority';

/** The applier's CPU priority decisions (sync.applyPriority); the real thread is checked in test/integration/apply-priority.test.ts. */
const PLATFORMS: NodeJS.Platform[] = ['linux', 'win32', 'darwin', 'freebsd'];

function fakeOs(platform: NodeJS.Platform, link = '4242/task/4250', fail?: Error): PriorityOs & { calls: [number, number][] } {
  const calls: [number, number][] = [];
  return {
    platform,
    calls,
    threadSelfLink: () => link,
    setPriority: (id, priority) => {
      if (fail) throw fail;
      calls.push([id, priority]);
    },
  };
}

describe('applier CPU priority', () => {
  it('background lowers the thread on Linux and the process elsewhere; normal changes nothing', () => {
    for (const platform of PLATFORMS) {
      assert.deepEqual(priorityPlan('background', platform), { scope: platform === 'linux' ? 'thread' : 'process', priority: BACKGROUND_PRIORITY });
      assert.deepEqual(priorityPlan('normal', platform), { scope: null, priority: os.constants.priority.PRIORITY_NORMAL });
    }
    // Below normal, never above: a lower priority needs no privilege anywhere.
    assert.ok(BACKGROUND_PRIORITY > os.constants.priority.PRIORITY_NORMAL);
  });

  it("reads the calling thread's id from /proc/thread-self and nothing else", () => {
    assert.equal(threadIdFromLink('4242/task/4250'), 4250);
    assert.equal(threadIdFromLink('4242/task/4250\n'), 4250);
    for (const bad of ['', '4242', '/proc/4242/task/4250', '4242/task/', 'self', '4242/task/x']) assert.equal(threadIdFromLink(bad), null, bad);
  });

  it('sets the thread (Linux) or the process (elsewhere) and reports it', () => {
    const linux = fakeOs('linux');
    assert.deepEqual(applyPriorityToCurrentThread('background', linux), { lowered: true, scope: 'thread', id: 4250, priority: BACKGROUND_PRIORITY });
    assert.deepEqual(linux.calls, [[4250, BACKGROUND_PRIORITY]]);
    const windows = fakeOs('win32');
    assert.deepEqual(applyPriorityToCurrentThread('background', windows), { lowered: true, scope: 'process', id: process.pid, priority: BACKGROUND_PRIORITY });
    assert.deepEqual(windows.calls, [[process.pid, BACKGROUND_PRIORITY]]);
    const normal = fakeOs('linux');
    assert.deepEqual(applyPriorityToCurrentThread('normal', normal), { lowered: false, reason: 'normal' });
    assert.deepEqual(normal.calls, []);
  });

  it('a priority that cannot be set is reported, never thrown, and never guessed at another thread', () => {
    const denied = applyPriorityToCurrentThread('background', fakeOs('linux', '4242/task/4250', new Error('EACCES: permission denied')));
    assert.deepEqual(denied, { lowered: false, reason: 'failed', scope: 'thread', message: 'EACCES: permission denied' });
    const noProc = fakeOs('linux', 'nonsense');
    const unknown = applyPriorityToCurrentThread('background', noProc);
    assert.equal(unknown.lowered, false);
    // Without its own thread id it must not lower the whole process (the receiver) instead.
    assert.deepEqual(noProc.calls, []);
    assert.match(describePriority('the applier', unknown), /could not be given background priority \(its thread\).*runs at normal priority/);
  });

  it('says in the log what it did', () => {
    assert.match(describePriority('the applier', { lowered: true, scope: 'thread', id: 7, priority: 10 }), /background priority \(its thread 7, nice 10\); the receiver stays at normal priority/);
    assert.match(describePriority('the applier', { lowered: true, scope: 'process', id: 7, priority: 10 }), /background priority \(the agent's process 7/);
    assert.match(describePriority('the applier', { lowered: false, reason: 'normal' }), /normal priority \(sync.applyPriority is "normal"\)/);
  });
});

import assert from 'node:assert/strict';
import os from 'node:os';
import { describe, it } from 'node:test';
import { applyPriorityToCurrentThread, BACKGROUND_PRIORITY, describePriority, priorityPlan, threadIdFromLink, type PriorityOs } from '../../../src/threads/priority';

/** The applier's CPU priority decisions (sync.applyPriority); the real thread is checked in test/integration/apply-priority.test.ts. */
const PLATFORMS: NodeJS.Platform[] = ['linux', 'win32', 'darwin', 'freebsd'];

function fakeOs(platform: NodeJS.Platform, link = '4242/task/4250', fail?: Error, current = os.constants.priority.PRIORITY_NORMAL): PriorityOs & { calls: [number, number][] } {
  const calls: [number, number][] = [];
  return {
    platform,
    calls,
    threadSelfLink: () => link,
    getPriority: () => current,
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
    assert.match(describePriority('the applier', unknown), /could not be given background priority \(its thread\).*keeps the priority it started with/);
  });

  it('only ever lowers: a thread or process started at or below background keeps its priority', () => {
    const { PRIORITY_LOW, PRIORITY_BELOW_NORMAL, PRIORITY_NORMAL, PRIORITY_ABOVE_NORMAL, PRIORITY_HIGH, PRIORITY_HIGHEST } = os.constants.priority;
    // Every nice value Unix allows (-20..19), and each of Windows' classes as Node maps them.
    const starts = [...new Set([...Array.from({ length: 40 }, (_, i) => i - 20), PRIORITY_LOW, PRIORITY_BELOW_NORMAL, PRIORITY_NORMAL, PRIORITY_ABOVE_NORMAL, PRIORITY_HIGH, PRIORITY_HIGHEST])];
    let kept = 0;
    let lowered = 0;
    for (const platform of PLATFORMS) {
      for (const start of starts) {
        const system = fakeOs(platform, '4242/task/4250', undefined, start);
        const outcome = applyPriorityToCurrentThread('background', system);
        const id = platform === 'linux' ? 4250 : process.pid;
        const scope = platform === 'linux' ? 'thread' : 'process';
        if (start >= BACKGROUND_PRIORITY) {
          kept++;
          assert.deepEqual(outcome, { lowered: false, reason: 'already-lower', scope, id, priority: start }, `${platform} ${start}`);
          assert.deepEqual(system.calls, [], `${platform} ${start}: must not raise or touch it`);
          assert.match(describePriority('the applier', outcome), new RegExp(`keeps the lower priority it started with \\(its ${scope} ${id}, priority ${start}; background is ${BACKGROUND_PRIORITY}\\)`));
        } else {
          lowered++;
          assert.deepEqual(outcome, { lowered: true, scope, id, priority: BACKGROUND_PRIORITY }, `${platform} ${start}`);
          assert.deepEqual(system.calls, [[id, BACKGROUND_PRIORITY]]);
        }
      }
    }
    // Both branches taken on every platform, and the boundary (background itself) is kept.
    assert.ok(kept >= PLATFORMS.length * 10 && lowered >= PLATFORMS.length * 30, `${kept} kept, ${lowered} lowered`);
    assert.equal(applyPriorityToCurrentThread('background', fakeOs('linux', '4242/task/4250', undefined, BACKGROUND_PRIORITY)).lowered, false);
  });

  it('a priority that cannot be read is reported like one that cannot be set', () => {
    const system = fakeOs('win32');
    const unreadable: PriorityOs = { ...system, getPriority: () => { throw new Error('ESRCH: no such process'); } };
    assert.deepEqual(applyPriorityToCurrentThread('background', unreadable), { lowered: false, reason: 'failed', scope: 'process', message: 'ESRCH: no such process' });
    assert.deepEqual(system.calls, []);
  });

  it('says in the log what it did', () => {
    assert.match(describePriority('the applier', { lowered: true, scope: 'thread', id: 7, priority: 10 }), /background priority \(its thread 7, nice 10\); the receiver stays at normal priority/);
    assert.match(describePriority('the applier', { lowered: true, scope: 'process', id: 7, priority: 10 }), /background priority \(the agent's process 7/);
    assert.match(describePriority('the applier', { lowered: false, reason: 'normal' }), /normal priority \(sync.applyPriority is "normal"\)/);
  });
});

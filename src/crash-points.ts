import fs from 'node:fs';
import { isMainThread } from 'node:worker_threads';

/**
 * Test-only hooks at named points of storing and applying (test/faults/apply-crash.test.ts,
 * body-file-crash.test.ts, body-file-power.test.ts, `npm run soak`). Points: `apply-row` (inside the
 * till file's apply transaction, after each range row written), `apply-before-commit` (all rows
 * written, not committed), `between-commits` (pos-sync.db committed, agent.db not yet), and for a
 * large body received into a file of its own (src/store/body-files.ts, src/store/inbox.ts)
 * `body-file-created`, `body-file-written`, `body-file-synced` and `body-row-committed`.
 * - POS_SYNC_TEST_CRASH_AT=<point>:<n>: the process kills itself with SIGKILL the n-th time its
 *   thread passes <point>;
 * - POS_SYNC_TEST_THREAD_EXIT_AT=<point>:<n>: a worker thread ends itself (as one out of memory
 *   does) the n-th time it passes <point>; each new thread counts again from n
 *   (test/integration/thread-exit.test.ts);
 * - POS_SYNC_TEST_PAUSE_AT=<point>:<n>:<gate file>: the n-th time, the thread writes
 *   `<gate file>.reached` and waits until `<gate file>` exists (a test turns a libfiu fault on
 *   meanwhile, so that exactly the next step fails).
 * Without the variables this is two comparisons per call; no configuration ever sets them.
 */
function parse(spec: string | undefined): { point: string; remaining: number; gate: string | null } | null {
  if (!spec) return null;
  const m = /^([a-z-]+):(\d+)(?::(.+))?$/.exec(spec);
  if (!m) return null;
  return { point: m[1]!, remaining: Number(m[2]), gate: m[3] ?? null };
}

const armed = parse(process.env.POS_SYNC_TEST_CRASH_AT);
const threadExit = isMainThread ? null : parse(process.env.POS_SYNC_TEST_THREAD_EXIT_AT);
const paused = parse(process.env.POS_SYNC_TEST_PAUSE_AT);

/** Blocks this thread until `gate` exists, looking every few milliseconds. */
function waitForGate(gate: string): void {
  fs.writeFileSync(`${gate}.reached`, '');
  const cell = new Int32Array(new SharedArrayBuffer(4));
  while (!fs.existsSync(gate)) Atomics.wait(cell, 0, 0, 10);
}

export function crashPoint(point: string): void {
  if (paused !== null && paused.point === point && paused.gate !== null) {
    paused.remaining -= 1;
    if (paused.remaining === 0) waitForGate(paused.gate);
  }
  if (threadExit !== null && threadExit.point === point) {
    threadExit.remaining -= 1;
    // In a worker, process.exit ends the thread alone.
    if (threadExit.remaining === 0) process.exit(1);
  }
  if (armed === null || armed.point !== point) return;
  armed.remaining -= 1;
  if (armed.remaining > 0) return;
  process.kill(process.pid, 'SIGKILL');
}

/**
 * Test-only crash hooks (test/faults/apply-crash.test.ts, `npm run soak`): with
 * POS_SYNC_TEST_CRASH_AT=<point>:<n> in the environment, the process kills itself with SIGKILL the
 * n-th time it passes <point>. Points: `apply-row` (inside the till file's apply transaction, after
 * each range row written), `apply-before-commit` (all rows written, not committed),
 * `between-commits` (pos-sync.db committed, agent.db not yet).
 * Without the variable this is one comparison per call; it is never set by any configuration.
 */
function parse(spec: string | undefined): { point: string; remaining: number } | null {
  if (!spec) return null;
  const m = /^([a-z-]+):(\d+)$/.exec(spec);
  if (!m) return null;
  return { point: m[1]!, remaining: Number(m[2]) };
}

const armed = parse(process.env.POS_SYNC_TEST_CRASH_AT);

export function crashPoint(point: string): void {
  if (armed === null || armed.point !== point) return;
  armed.remaining -= 1;
  if (armed.remaining > 0) return;
  process.kill(process.pid, 'SIGKILL');
}

import { spawnSync } from 'node:child_process';
import assert from 'node:assert/strict';
import path from 'node:path';

/**
 * The tests that check file and socket permissions run a program as `nobody` (setpriv), and that
 * program must be reachable by nobody: the Node binary, and for some the checkout's node_modules.
 * A checkout under a private folder (root's home is 0700) fails those tests for a reason that has
 * nothing to do with the agent; this says so, naming the path, instead of failing obscurely.
 */
export function assertNobodyCanReach(...paths: string[]): void {
  for (const target of paths) {
    const r = spawnSync('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', 'test', '-r', target], { cwd: '/', timeout: 30_000 });
    if (r.status !== 0) {
      const privateParent = firstClosedParent(target);
      assert.fail(
        `this test runs a program as the user nobody, who cannot read ${target}` +
          (privateParent ? ` (the folder ${privateParent} is closed to other users)` : '') +
          ': clone the project into a folder other users may pass through (e.g. /srv or /opt), or run `chmod o+x` on each folder above it, as CI does',
      );
    }
  }
}

/** The first folder above `target` that nobody may not pass through, if any. */
function firstClosedParent(target: string): string | null {
  const parts = path.resolve(target).split(path.sep).filter(Boolean);
  let dir: string = path.sep;
  for (const part of parts.slice(0, -1)) {
    dir = path.join(dir, part);
    const r = spawnSync('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', 'test', '-x', dir], { cwd: '/', timeout: 30_000 });
    if (r.status !== 0) return dir;
  }
  return null;
}

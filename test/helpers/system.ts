/**
 * Tests that need root (a second OS user through setpriv, groupadd, mounting a file system) or Debian
 * packages (Chromium, nginx, openssl, the sqlite3 shell, libfiu, unixODBC, a C compiler...) run under
 * `npm run test:system`, which installs or demands what they need, and .ci/run runs it on every
 * change. `npm test` runs everything else, on any contributor's machine, and lists in its summary what
 * it left to `test:system`. A whole file of such tests is listed in scripts/test-groups.mjs; a single
 * test in a file of ordinary ones is declared with `needs(...)`:
 *
 *   it('another OS user cannot reach the control socket', needs('root (a second OS user)'), async () => { ... });
 *
 * Under `npm run test:system` (POS_SYNC_TEST_SYSTEM=1) it runs, and a missing prerequisite fails it;
 * under `npm test` it is not run, and the summary names it.
 */
export const SYSTEM_RUN = process.env.POS_SYNC_TEST_SYSTEM === '1';

export function needs(what: string, options: { timeout?: number } = {}): { skip?: string; timeout?: number } {
  return SYSTEM_RUN ? options : { ...options, skip: `left to npm run test:system (needs ${what})` };
}

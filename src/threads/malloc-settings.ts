/**
 * glibc's malloc settings a running agent starts with on Linux (`pos-sync-agent serve` through bin/,
 * the desktop app's agent process, the test and bench harness). glibc reads them from the environment
 * (GLIBC_TUNABLES) when the process starts, so each launcher passes them to the process it starts:
 * bin/ starts `serve` again in its own place (`process.execve`, the same process id), the desktop app
 * hands them to its agent process.
 *
 * Left to itself, glibc raises its trim threshold each time a large block it had mapped on its own is
 * freed (mallopt(3), M_MMAP_THRESHOLD), and keeps free memory below that threshold at the top of each
 * thread's arena instead of handing it back. An apply allocates and frees such blocks, so after one
 * the arenas kept free memory nobody would use until the next apply. Set here to glibc's own starting
 * value, the threshold stays there (and so does the size from which glibc maps a block on its own):
 * free memory above it at the top of an arena goes back to the system.
 * `npm run bench` measures the idle memory this is for (docs/performance.md, "Where the memory
 * goes").
 */
export const MALLOC_TUNABLES = 'glibc.malloc.trim_threshold=131072';

/**
 * The GLIBC_TUNABLES to start a running agent with: the environment's own with MALLOC_TUNABLES added,
 * or null when there is nothing to add (not Linux, or the environment already sets the trim or mmap
 * threshold: a site's own choice is kept). On a Linux without glibc (musl) the variable is ignored.
 */
export function tunablesFor(env: Readonly<Record<string, string | undefined>>, platform: string): string | null {
  if (platform !== 'linux') return null;
  const current = env.GLIBC_TUNABLES ?? '';
  if (/(^|:)glibc\.malloc\.(trim|mmap)_threshold=/.test(current)) return null;
  return current === '' ? MALLOC_TUNABLES : `${current}:${MALLOC_TUNABLES}`;
}

/** `env` with the running agent's GLIBC_TUNABLES (tunablesFor), for a launcher that starts one. */
export function agentEnvironment(env: Readonly<Record<string, string | undefined>>, platform: string): Record<string, string | undefined> {
  const tunables = tunablesFor(env, platform);
  return tunables === null ? { ...env } : { ...env, GLIBC_TUNABLES: tunables };
}

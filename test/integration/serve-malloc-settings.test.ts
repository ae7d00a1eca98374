import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { MALLOC_TUNABLES } from '../../src/threads/malloc-settings';
import { startChildAgent, writeConfig } from '../helpers/child-agent';

/**
 * `pos-sync-agent serve` through bin/ on Linux runs with glibc's malloc settings
 * (src/threads/malloc-settings.ts): bin/ runs serve again in its own place, so the process the
 * service manager started (the same process id) is the one that listens, with them in its
 * environment, and a site's own threshold is kept.
 */
const linux = process.platform === 'linux';

/**
 * The GLIBC_TUNABLES the process `pid` was started with by its last exec. glibc 2.36 (Debian 12)
 * parses the variable in place, ending each tunable with a NUL, so /proc/PID/environ shows the second
 * and later tunables as entries of their own (`glibc.` and no variable has a dot in its name): they are
 * joined back here.
 */
function tunablesOf(pid: number): string | undefined {
  const entries = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  const at = entries.findIndex((e) => e.startsWith('GLIBC_TUNABLES='));
  if (at < 0) return undefined;
  const parts = [entries[at]!.slice('GLIBC_TUNABLES='.length)];
  for (let i = at + 1; i < entries.length && /^glibc\.[a-z0-9_.]+=/.test(entries[i]!); i++) parts.push(entries[i]!);
  return parts.join(':');
}

async function serveWith(tunables: string | undefined): Promise<{ tunables: string | undefined; output: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'serve-malloc-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = writeConfig(dir, { dataDir: path.join(dir, 'data'), webhook: { port: 0 }, admin: { enabled: false } });
  const agent = await startChildAgent(file, { GLIBC_TUNABLES: tunables });
  try {
    // The process started is the one that listens: its output came through the pipes it was given.
    return { tunables: tunablesOf(agent.child.pid!), output: agent.output() };
  } finally {
    await agent.kill('SIGTERM');
  }
}

describe('serve starts with the malloc settings (Linux)', { skip: !linux && 'glibc: Linux only' }, () => {
  // Node's ExperimentalWarning for process.execve is queued for later, and the exec discards it: if
  // Node ever printed it at once, this test would say so.
  it('adds them to an environment without any, and says nothing about it', async () => {
    const { tunables, output } = await serveWith(undefined);
    assert.equal(tunables, MALLOC_TUNABLES);
    assert.doesNotMatch(output, /ExperimentalWarning|execve/);
  });

  it('starts itself again at most once, even where glibc drops GLIBC_TUNABLES (a privileged process)', async () => {
    const strip = path.join(__dirname, '..', 'helpers', 'strip-glibc-tunables.cjs');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'serve-malloc-'));
    after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const file = writeConfig(dir, { dataDir: path.join(dir, 'data'), webhook: { port: 0 }, admin: { enabled: false } });
    // It listens (startChildAgent waits for that), having run itself again once: the marker is in
    // the environment its one exec gave it, the tunables are not (the preload dropped them again).
    const agent = await startChildAgent(file, { GLIBC_TUNABLES: undefined, NODE_OPTIONS: `--require ${JSON.stringify(strip)}` });
    try {
      const environ = fs.readFileSync(`/proc/${agent.child.pid!}/environ`, 'utf8').split('\0');
      assert.ok(environ.includes('POS_SYNC_MALLOC_EXEC=1'), 'bin/ ran serve again once');
    } finally {
      await agent.kill('SIGTERM');
    }
  });

  it("adds them to a site's other tunables, and keeps a site's own threshold", async () => {
    assert.equal((await serveWith('glibc.malloc.arena_max=2')).tunables, `glibc.malloc.arena_max=2:${MALLOC_TUNABLES}`);
    assert.equal((await serveWith('glibc.malloc.trim_threshold=1048576')).tunables, 'glibc.malloc.trim_threshold=1048576');
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { agentEnvironment, MALLOC_TUNABLES, tunablesFor } from '../../../src/threads/malloc-settings';

describe('malloc settings of a running agent', () => {
  it('on Linux: added to whatever GLIBC_TUNABLES the environment has', () => {
    assert.equal(MALLOC_TUNABLES, 'glibc.malloc.trim_threshold=131072');
    assert.equal(tunablesFor({}, 'linux'), MALLOC_TUNABLES);
    assert.equal(tunablesFor({ GLIBC_TUNABLES: '' }, 'linux'), MALLOC_TUNABLES);
    assert.equal(tunablesFor({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' }, 'linux'), `glibc.malloc.arena_max=2:${MALLOC_TUNABLES}`);
    assert.equal(tunablesFor({ GLIBC_TUNABLES: 'glibc.rtld.optional_static_tls=4096:glibc.malloc.tcache_count=0' }, 'linux'), `glibc.rtld.optional_static_tls=4096:glibc.malloc.tcache_count=0:${MALLOC_TUNABLES}`);
  });

  it("keeps a site's own trim or mmap threshold, wherever it stands in the list", () => {
    for (const own of ['glibc.malloc.trim_threshold=1048576', 'glibc.malloc.mmap_threshold=65536', 'glibc.malloc.arena_max=2:glibc.malloc.trim_threshold=0', `${MALLOC_TUNABLES}`]) {
      assert.equal(tunablesFor({ GLIBC_TUNABLES: own }, 'linux'), null, own);
    }
    // A name that only ends like one is not one.
    assert.equal(tunablesFor({ GLIBC_TUNABLES: 'x.glibc.malloc.trim_threshold=1' }, 'linux'), `x.glibc.malloc.trim_threshold=1:${MALLOC_TUNABLES}`);
  });

  it('nothing elsewhere: Windows and macOS have no glibc', () => {
    for (const platform of ['win32', 'darwin']) {
      assert.equal(tunablesFor({}, platform), null);
      assert.deepEqual(agentEnvironment({ PATH: '/bin' }, platform), { PATH: '/bin' });
    }
  });

  it('agentEnvironment: a copy of the environment with them, the original untouched', () => {
    const env = { PATH: '/usr/bin', GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' };
    const out = agentEnvironment(env, 'linux');
    assert.deepEqual(out, { PATH: '/usr/bin', GLIBC_TUNABLES: `glibc.malloc.arena_max=2:${MALLOC_TUNABLES}` });
    assert.equal(env.GLIBC_TUNABLES, 'glibc.malloc.arena_max=2');
    assert.notEqual(out, env);
  });
});

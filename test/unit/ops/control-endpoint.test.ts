import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { controlEndpoint, ensurePrivateRuntimeDir } from '../../../src/ops/control-protocol';

describe('the control endpoint', () => {
  it('is agent.sock in the data folder when the path fits a socket address', () => {
    assert.equal(controlEndpoint('/var/lib/pos-sync', 'linux'), '/var/lib/pos-sync/agent.sock');
  });

  it('is a named pipe on Windows, one per data folder, case-insensitive like its paths', () => {
    const a = controlEndpoint('C:\\ProgramData\\pos-sync-agent', 'win32');
    assert.match(a, /^\\\\\.\\pipe\\pos-sync-agent-[0-9a-f]{16}$/);
    assert.equal(controlEndpoint('C:\\PROGRAMDATA\\POS-SYNC-AGENT', 'win32'), a);
    assert.notEqual(controlEndpoint('D:\\other', 'win32'), a);
  });

  it('moves to a private folder of the user when the data folder is too deep for a socket path', () => {
    const deep = path.join('/srv', 'x'.repeat(120));
    const endpoint = controlEndpoint(deep, 'linux');
    assert.ok(Buffer.byteLength(endpoint) <= 100, endpoint);
    assert.equal(path.dirname(endpoint), path.join(os.tmpdir(), `pos-sync-agent-${process.getuid?.() ?? 0}`));
    assert.notEqual(controlEndpoint(path.join('/srv', 'y'.repeat(120)), 'linux'), endpoint, 'one socket per data folder');
    ensurePrivateRuntimeDir(endpoint, true);
    assert.equal(fs.statSync(path.dirname(endpoint)).mode & 0o777, 0o700);
    // A folder another account could write to is refused, not used.
    fs.chmodSync(path.dirname(endpoint), 0o777);
    try {
      assert.throws(() => ensurePrivateRuntimeDir(endpoint, false), /is not a private folder of this account/);
    } finally {
      fs.chmodSync(path.dirname(endpoint), 0o700);
    }
  });
});

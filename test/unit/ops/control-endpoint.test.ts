import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { controlEndpoint, controlTarget, ensurePrivateRuntimeDir, newControlPipe } from '../../../src/ops/control-protocol';

describe('the control endpoint', () => {
  it('is agent.sock in the data folder when the path fits a socket address', () => {
    assert.equal(controlEndpoint('/var/lib/pos-sync', 'linux'), '/var/lib/pos-sync/agent.sock');
  });

  it('is on Windows a file in the data folder naming a pipe no other account can guess, new at each start', () => {
    assert.equal(controlEndpoint('C:\\ProgramData\\pos-sync-agent', 'win32'), 'C:\\ProgramData\\pos-sync-agent\\control-pipe');
    const names = new Set(Array.from({ length: 50 }, () => newControlPipe('C:\\ProgramData\\pos-sync-agent')));
    assert.equal(names.size, 50, 'a new name each start');
    for (const name of names) assert.match(name, /^\\\\\.\\pipe\\pos-sync-agent-[0-9a-f]{16}-[0-9a-f]{32}$/);
  });

  it('is found by a client through that file: its name, or no agent when the file is missing or names no pipe', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pos-sync-pipe-'));
    const file = path.join(dir, 'control-pipe');
    assert.equal(controlTarget('/run/x/agent.sock', 'linux'), '/run/x/agent.sock', 'a socket is its own target');
    assert.throws(() => controlTarget(file, 'win32'), { code: 'ENOENT' });
    const pipe = newControlPipe('C:\\data');
    fs.writeFileSync(file, `${pipe}\n`);
    assert.equal(controlTarget(file, 'win32'), pipe);
    for (const other of ['\\\\.\\pipe\\pos-sync-agent-0123456789abcdef', '\\\\.\\pipe\\someone-else', '\\\\evil-host\\pipe\\pos-sync-agent-0123456789abcdef-0123456789abcdef0123456789abcdef', '']) {
      fs.writeFileSync(file, other);
      assert.throws(() => controlTarget(file, 'win32'), { code: 'ENOENT' }, other);
    }
    fs.rmSync(dir, { recursive: true, force: true });
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

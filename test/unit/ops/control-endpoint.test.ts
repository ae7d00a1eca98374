import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { controlEndpoint, controlTarget, newControlPipe, newControlSocketDir } from '../../../src/ops/control-protocol';

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

  it('when the data folder is too deep for a socket path, is a file in it naming a socket in a folder of a random name', () => {
    const deep = path.join('/srv', 'x'.repeat(120));
    assert.equal(controlEndpoint(deep, 'linux'), path.join(deep, 'control-socket'));
    const data = fs.mkdtempSync(path.join(os.tmpdir(), 'pos-sync-deep-'));
    const file = path.join(data, 'control-socket');
    const dirs = [newControlSocketDir(), newControlSocketDir()];
    try {
      assert.notEqual(dirs[0], dirs[1], 'a new folder each start: no name another account can make first');
      for (const dir of dirs) {
        assert.equal(path.dirname(dir), os.tmpdir());
        assert.equal(fs.statSync(dir).mode & 0o777, 0o700);
      }
      const socket = path.join(dirs[0]!, 'agent.sock');
      assert.throws(() => controlTarget(file, 'linux'), { code: 'ENOENT' }, 'no file: no agent');
      fs.writeFileSync(file, `${socket}\n`);
      assert.equal(controlTarget(file, 'linux'), socket);
      // A folder another account could write to is refused, not used.
      fs.chmodSync(dirs[0]!, 0o777);
      assert.throws(() => controlTarget(file, 'linux'), { code: 'ENOENT', message: /not a private folder of the agent's account/ });
      fs.chmodSync(dirs[0]!, 0o700);
      // So is one of another account's (a folder it made and named in a file it could not write).
      if (process.getuid?.() === 0) {
        fs.chownSync(dirs[0]!, 65534, 65534);
        assert.throws(() => controlTarget(file, 'linux'), { code: 'ENOENT', message: /not a private folder of the agent's account/ });
        fs.chownSync(dirs[0]!, 0, 0);
      }
      for (const other of ['relative/agent.sock', path.join(dirs[0]!, 'other.sock'), path.join(os.tmpdir(), 'gone-folder', 'agent.sock'), '']) {
        fs.writeFileSync(file, other);
        assert.throws(() => controlTarget(file, 'linux'), { code: 'ENOENT' }, other);
      }
    } finally {
      for (const dir of [data, ...dirs]) fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

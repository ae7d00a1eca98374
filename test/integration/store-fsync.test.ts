import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fsyncPath } from '../../src/ops/backup/files';
import { flushOpenMode, syncFile, syncFolder } from '../../src/store/fsync';
import { tempDir } from '../helpers/fixtures';

/**
 * Flushing files and folders (src/store/fsync.ts). Windows' own behaviour, a read-only handle's
 * flush refused with EPERM and no flush of a folder, is shown by the Windows lane
 * (test/windows/backup.test.ts); here: Linux keeps fsync(2) on a read-only handle and on the folder,
 * and what the Windows path does differently.
 */
describe('durable writes', () => {
  it('opens a file read-write to flush it on Windows (FlushFileBuffers needs write access), read-only elsewhere', () => {
    assert.equal(flushOpenMode('win32'), 'r+');
    assert.equal(flushOpenMode('linux'), 'r');
    assert.equal(flushOpenMode('darwin'), 'r');
  });

  it('flushes a file and a folder on Linux, and leaves the file as it was', () => {
    const dir = tempDir();
    const file = path.join(dir, 'set.db');
    fs.writeFileSync(file, 'contents');
    syncFile(file);
    syncFolder(dir);
    fsyncPath(file);
    fsyncPath(dir);
    // The Windows mode opens read-write but writes nothing.
    syncFile(file, 'win32');
    assert.equal(fs.readFileSync(file, 'utf8'), 'contents');
  });

  it('never opens a folder on Windows, and always does on Linux', () => {
    const missing = path.join(tempDir(), 'not-there');
    assert.doesNotThrow(() => syncFolder(missing, 'win32'));
    assert.throws(() => syncFolder(missing, 'linux'), /ENOENT/);
  });
});

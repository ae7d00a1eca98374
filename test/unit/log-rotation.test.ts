import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { archiveLog, oldLogPath, type RotatedLog, type RotationFs } from '../../src/log-rotation';
import { configureLogging } from '../../src/log';
import { tempDir } from '../helpers/fixtures';

/**
 * Log rotation (agent.log → agent.old.log), on real files. What Windows does to a file another program
 * holds open (refuses to rename it) cannot happen on Linux: `held` refuses the rename as Windows does,
 * every other call is the real one. test/windows/log-rotation.test.ts shows it under Wine.
 */

function logFile(dir: string, text: string): RotatedLog & { cropped: number | null } {
  const file = path.join(dir, 'agent.log');
  fs.writeFileSync(file, text);
  return {
    path: file,
    cropped: null,
    clear: () => true,
    crop(n: number) {
      this.cropped = n;
    },
  };
}

const busy = (): never => {
  throw Object.assign(new Error('EBUSY: resource busy or locked, rename'), { code: 'EBUSY' });
};
/** Windows with a viewer holding agent.log open without sharing delete: rename refused, the rest allowed. */
const held: RotationFs = { ...fs, renameSync: busy };

describe('log rotation', () => {
  it('renames the full log to NAME.old.EXT, replacing the previous one', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'agent.old.log'), 'older\n');
    const file = logFile(dir, 'line 1\nline 2\n');
    assert.equal(archiveLog(file, 64 * 1024), 'renamed');
    assert.equal(oldLogPath(file.path), path.join(dir, 'agent.old.log'));
    assert.equal(fs.readFileSync(path.join(dir, 'agent.old.log'), 'utf8'), 'line 1\nline 2\n');
    assert.equal(fs.existsSync(file.path), false);
  });

  it('held open (the rename refused): copies it aside and empties it in place, losing no line', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'agent.old.log'), 'older\n');
    const file = logFile(dir, 'line 1\nline 2\n');
    assert.equal(archiveLog(file, 64 * 1024, held), 'copied');
    assert.equal(fs.readFileSync(path.join(dir, 'agent.old.log'), 'utf8'), 'line 1\nline 2\n');
    assert.equal(fs.readFileSync(file.path, 'utf8'), '', 'the same file, emptied');
    assert.equal(file.cropped, null);
  });

  it('never writes through a link planted as the old file', () => {
    const dir = tempDir();
    const elsewhere = path.join(tempDir(), 'not-a-log');
    fs.writeFileSync(elsewhere, 'keep me\n');
    fs.symlinkSync(elsewhere, path.join(dir, 'agent.old.log'));
    const file = logFile(dir, 'line 1\n');
    assert.equal(archiveLog(file, 64 * 1024, held), 'copied');
    assert.equal(fs.readFileSync(elsewhere, 'utf8'), 'keep me\n');
    assert.equal(fs.lstatSync(path.join(dir, 'agent.old.log')).isSymbolicLink(), false);
  });

  it('when the old file is held too: keeps the last quarter (at most 256 KiB), as electron-log does', () => {
    const dir = tempDir();
    const file = logFile(dir, 'line 1\n');
    assert.equal(archiveLog(file, 64 * 1024, { ...held, unlinkSync: busy }), 'cropped');
    assert.equal(file.cropped, 16 * 1024);
    assert.equal(archiveLog(file, 8 * 1024 * 1024, { ...held, unlinkSync: busy }), 'cropped');
    assert.equal(file.cropped, 256 * 1024);
  });

  it('the configured logger rotates at log.maxFileBytes and keeps the newest lines, within twice the limit', () => {
    const dir = tempDir();
    const max = 64 * 1024;
    const log = configureLogging({ dir, level: 'info', maxFileBytes: max, console: false, fileName: 'rotation-test.log' });
    for (let i = 0; i < 1500; i++) log.info(`line ${i} ${'x'.repeat(100)}`);
    const current = fs.readFileSync(path.join(dir, 'rotation-test.log'), 'utf8');
    const old = fs.readFileSync(path.join(dir, 'rotation-test.old.log'), 'utf8');
    assert.match(current, /line 1499 x+\n$/);
    assert.ok(current.length + old.length <= 2 * max + 200, `${current.length} + ${old.length} bytes`);
    // Consecutive: the old file ends where the current one begins.
    const lastOld = Number(/line (\d+) x+\n$/.exec(old)![1]);
    const firstCurrent = Number(/line (\d+)/.exec(current)![1]);
    assert.equal(firstCurrent, lastOld + 1);
  });
});

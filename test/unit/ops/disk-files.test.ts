import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { parseConfig } from '../../../src/config/load';
import { checkDisk } from '../../../src/ops/disk';
import { storeFilePath } from '../../../src/store/database';
import { tempDir } from '../../helpers/fixtures';

describe('the data folder\'s size', () => {
  it('counts the three files and their write-ahead logs, not the till file alone', () => {
    const dataDir = tempDir();
    fs.writeFileSync(storeFilePath(dataDir, 'till'), Buffer.alloc(4096));
    fs.writeFileSync(storeFilePath(dataDir, 'agent'), Buffer.alloc(8192));
    fs.writeFileSync(`${storeFilePath(dataDir, 'agent')}-wal`, Buffer.alloc(1_800_000));
    fs.writeFileSync(storeFilePath(dataDir, 'staff'), Buffer.alloc(4096));
    const disk = checkDisk(parseConfig({ dataDir }), new Date(), () => ({ bavail: 1_000_000, bsize: 4096, blocks: 2_000_000 }));
    assert.equal(disk.databaseBytes, 4096 + 8192 + 4096);
    assert.equal(disk.walBytes, 1_800_000);
    assert.ok(path.isAbsolute(dataDir));
  });
});

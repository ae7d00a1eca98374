import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { nodeRelease } from '../../helpers/node-release';
import { tempDir } from '../../helpers/fixtures';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const BIN = path.join(ROOT, 'bin', 'pos-sync-agent.cjs');

describe('the command under an unsupported Node (a real Node 20 release)', () => {
  const node20 = nodeRelease(20);
  const engines = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;

  for (const args of [['status'], ['serve'], ['--version']]) {
    it(`pos-sync-agent ${args.join(' ')}: one line, exit 1, nothing opened`, () => {
      const dataDir = path.join(tempDir(), 'data');
      const result = spawnSync(node20, [BIN, ...args], {
        encoding: 'utf8',
        env: { ...process.env, POS_SYNC__dataDir: dataDir, POS_SYNC_CONFIG: path.join(dataDir, '..', 'none.json') },
        timeout: 60_000,
      });
      const version = spawnSync(node20, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim();
      assert.match(version, /^20\./);
      assert.equal(result.status, 1, `exit ${result.status} signal ${result.signal}: ${result.stderr}`);
      assert.equal(result.stdout, '');
      const lines = result.stderr.split('\n').filter((l) => l !== '');
      assert.equal(lines.length, 1, result.stderr);
      assert.ok(lines[0]!.includes(version), lines[0]);
      assert.ok(lines[0]!.includes(engines), lines[0]);
      assert.ok(lines[0]!.includes(node20), lines[0]);
      assert.match(lines[0]!, /https:\/\/nodejs\.org\//);
      assert.equal(fs.existsSync(dataDir), false, 'an unsupported Node created the data folder');
    });
  }

  it('the same command runs under the Node running the tests', () => {
    const result = spawnSync(process.execPath, [BIN, '--version'], { encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /^pos-sync-agent \d+\.\d+\.\d+/);
  });
});

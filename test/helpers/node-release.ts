import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

/**
 * A real Node release of the given major line, as .ci/run fetches Node 24: the npm registry's
 * `node-linux-<arch>` package holds Node's own release binaries. Kept in .ci/node-<major>/ (ignored
 * by git), so it is fetched once per checkout. Returns the path of its `node` program.
 */
export function nodeRelease(major: number): string {
  const arch = os.arch() === 'arm64' ? 'arm64' : 'x64';
  const dir = path.join(ROOT, '.ci', `node-${major}`);
  const node = path.join(dir, 'bin', 'node');
  if (fs.existsSync(node)) return node;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pos-sync-node-'));
  try {
    execFileSync('npm', ['pack', `node-linux-${arch}@${major}`, '--silent'], { cwd: tmp, stdio: ['ignore', 'pipe', 'inherit'] });
    const tgz = fs.readdirSync(tmp).find((f) => f.endsWith('.tgz'));
    if (!tgz) throw new Error(`npm pack node-linux-${arch}@${major} gave no tarball`);
    const unpack = `${dir}.partial-${process.pid}`;
    fs.mkdirSync(unpack, { recursive: true });
    execFileSync('tar', ['xzf', path.join(tmp, tgz), '-C', unpack, '--strip-components=1']);
    // Another test file may have fetched it meanwhile: either copy is the same release.
    try {
      fs.renameSync(unpack, dir);
    } catch {
      fs.rmSync(unpack, { recursive: true, force: true });
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return node;
}

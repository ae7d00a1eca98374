import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePort, startChildAgent, writeConfig, type ChildAgent } from '../../helpers/child-agent';
import { SAMPLES_DIR, tempDir } from '../../helpers/fixtures';
import { REPO, installGlobally, isBuilt, packCheckout, plainNpmEnv, type InstallResult } from '../../helpers/installed';

const sample = (n: string): string => path.join(SAMPLES_DIR, fs.readdirSync(SAMPLES_DIR).find((f) => f.startsWith(n))!);

interface PackedJson {
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
  files?: string[];
  bin?: Record<string, string>;
}

describe('the package: npm pack, then npm install -g, gives a working pos-sync-agent', () => {
  let tarball = '';
  let installed: InstallResult;
  let work = '';

  before(() => {
    assert.ok(isBuilt(), 'build first: npm run build && npm run build:renderer (npm test does)');
    // Not tempDir(): its clean-up, registered inside a hook, would run when the hook ends.
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'pos-sync-pkg-'));
    tarball = packCheckout(REPO, path.join(work, 'pack'));
    installed = installGlobally(tarball, path.join(work, 'prefix'), work);
  });
  after(() => fs.rmSync(work, { recursive: true, force: true }));

  it('holds the built CLI and window, and nothing a site does not run', () => {
    const list = execFileSync('tar', ['tzf', tarball], { encoding: 'utf8' }).split('\n').filter(Boolean);
    for (const file of ['package/bin/pos-sync-agent.cjs', 'package/bin/node-version.cjs', 'package/dist/agent/cli.js', 'package/dist/agent/receiver-worker.js', 'package/dist/agent/applier-worker.js', 'package/renderer/dist/index.html', 'package/renderer/dist/app.js', 'package/renderer/dist/app.css', 'package/packaging/systemd/pos-sync-agent.service']) {
      assert.ok(list.includes(file), `${file} is in the package`);
    }
    assert.deepEqual(list.filter((f) => /\.ts$|\.map$|^package\/(test|src|bench|scripts|node_modules)\//.test(f)), [], 'no sources, maps, tests or modules');
    const json = JSON.parse(execFileSync('tar', ['xzfO', tarball, 'package/package.json'], { encoding: 'utf8' })) as PackedJson;
    // Nothing runs at install: a consumer's npm must not build, fetch or ask for script approval.
    for (const hook of ['preinstall', 'install', 'postinstall', 'prepare']) assert.equal(json.scripts?.[hook], undefined, `no ${hook} script`);
    assert.ok(json.scripts?.prepack, 'a release pack builds first (prepack)');
    assert.equal(json.dependencies?.electron, undefined, 'the CLI does not depend on Electron');
    assert.deepEqual(json.bin, { 'pos-sync-agent': 'bin/pos-sync-agent.cjs' });
  });

  it('installs globally with no build step, no install-script error and no warning', () => {
    assert.equal(installed.status, 0, `${installed.stdout}\n${installed.stderr}`);
    assert.doesNotMatch(installed.stderr, /npm (warn|error|ERR)/i, installed.stderr);
    assert.match(installed.stdout, /added \d+ packages/);
    assert.ok(!fs.existsSync(path.join(work, 'prefix', 'lib', 'node_modules', 'pos-sync-agent', 'node_modules', 'electron')), 'Electron is not installed');
  });

  describe('the installed command', () => {
    let agent: ChildAgent | null = null;
    after(async () => agent?.kill('SIGTERM'));

    it('--version', () => {
      const r = spawnSync(installed.bin, ['--version'], { encoding: 'utf8', env: plainNpmEnv() });
      assert.equal(r.status, 0, r.stderr);
      const version = (JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
      assert.equal(r.stdout, `pos-sync-agent ${version}\n`);
    });

    it('serves a site, takes an import through the running agent, and shows it applied', async () => {
      const site = tempDir('pos-sync-pkg-site-');
      const config = writeConfig(site, { dataDir: path.join(site, 'data'), webhook: { port: await freePort() }, admin: { port: await freePort() } });
      agent = await startChildAgent(config, plainNpmEnv(), [installed.bin]);
      const env = plainNpmEnv({ HOME: tempDir() });
      const imported = spawnSync(installed.bin, ['import', sample('01'), '--config', config], { encoding: 'utf8', env });
      assert.equal(imported.status, 0, imported.stderr);
      assert.match(imported.stdout, /^Data folder: .*data \(configuration: .*config\.json \(--config\)\)$/m);
      assert.match(imported.stdout, /Handed to the running agent \(pid \d+\)\./);
      const status = spawnSync(installed.bin, ['status', '--config', config], { encoding: 'utf8', env });
      assert.equal(status.status, 0, status.stderr);
      assert.match(status.stdout, /last applied ChangeSequence 1041/);
      // The window is served from the package's renderer/dist.
      const page = await fetch(`http://127.0.0.1:${(JSON.parse(fs.readFileSync(config, 'utf8')) as { admin: { port: number } }).admin.port}/`);
      assert.ok(page.status === 200 || page.status === 401, `window answered ${page.status}`);
    });
  });
});

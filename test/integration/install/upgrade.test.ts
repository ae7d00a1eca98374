import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { freePort, startChildAgent, writeConfig } from '../../helpers/child-agent';
import { sampleBodies } from '../../helpers/fixtures';
import { REPO, installGlobally, isBuilt, packCheckout, plainNpmEnv } from '../../helpers/installed';

/**
 * Upgrading keeps the site's data: the package of main (the version this branch grows from) is
 * installed, runs a site and receives updates; it is stopped, this version's package is installed
 * over it, started on the same data, and the data is all there and keeps growing.
 *
 * main's package.json predates `files` (npm pack then leaves dist/ out, as .gitignore does) and has a
 * `prepare` script (which npm's strict allow-scripts refuses in a tarball), so the older tarball is
 * made the way this one is: its sources built, packed with this `files` list and without `prepare`.
 */

const FILES = (JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { files: string[] }).files;

/** Every row of every table, as JSON lines per table (the till file a POS reads, and the agent's own). */
function snapshot(file: string): Map<string, string[]> {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[];
    return new Map(tables.map(({ name }) => [name, (db.prepare(`SELECT * FROM "${name}"`).all() as unknown[]).map((r) => JSON.stringify(r)).sort()]));
  } finally {
    db.close();
  }
}

async function deliver(url: string, body: Buffer): Promise<number> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  await res.arrayBuffer();
  return res.status;
}

describe('upgrade: the package over the previous one keeps the site\'s data', () => {
  let work = '';
  let oldTree = '';
  before(() => {
    assert.ok(isBuilt(), 'build first: npm run build && npm run build:renderer (npm test does)');
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'pos-sync-upgrade-'));
  });
  after(() => {
    if (oldTree) spawnSync('git', ['worktree', 'remove', '--force', oldTree], { cwd: REPO });
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('from main to this version: stop, install over, start: data migrated and intact, updates continue', async (t) => {
    const base = execFileSync('git', ['merge-base', 'HEAD', 'main'], { cwd: REPO, encoding: 'utf8' }).trim();
    t.diagnostic(`previous version: main at ${base.slice(0, 12)}`);
    oldTree = path.join(work, 'old');
    execFileSync('git', ['worktree', 'add', '--detach', oldTree, base], { cwd: REPO, stdio: 'ignore' });
    fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(oldTree, 'node_modules'));
    // Built by its own `build` script, whatever that version's build makes (tsc alone, or tsc and the bundle the command runs).
    execFileSync('npm', ['run', '--silent', 'build'], { cwd: oldTree, stdio: 'inherit' });
    execFileSync(process.execPath, ['scripts/build-renderer.mjs'], { cwd: oldTree, stdio: 'ignore' });
    const oldPkgFile = path.join(oldTree, 'package.json');
    const oldPkg = JSON.parse(fs.readFileSync(oldPkgFile, 'utf8')) as Record<string, unknown>;
    const oldScripts = { ...(oldPkg.scripts as Record<string, string>) };
    delete oldScripts.prepare;
    fs.writeFileSync(oldPkgFile, JSON.stringify({ ...oldPkg, files: oldPkg.files ?? FILES, scripts: oldScripts }, null, 2));
    const oldTarball = packCheckout(oldTree, path.join(work, 'old-pack'));
    const newTarball = packCheckout(REPO, path.join(work, 'new-pack'));

    const prefix = path.join(work, 'prefix');
    const oldInstall = installGlobally(oldTarball, prefix, work);
    assert.equal(oldInstall.status, 0, oldInstall.stderr);

    const site = path.join(work, 'site');
    fs.mkdirSync(site);
    const config = writeConfig(site, { dataDir: path.join(site, 'data'), webhook: { port: await freePort() }, admin: { port: await freePort() }, sync: { baselineSettleSeconds: 0 } });
    const [first, second, third] = sampleBodies();
    const env = plainNpmEnv({ HOME: path.join(work, 'home') });

    // The previous version runs the site and receives two updates.
    let agent = await startChildAgent(config, env, [oldInstall.bin]);
    assert.equal(await deliver(agent.url, first!.raw), 200);
    assert.equal(await deliver(agent.url, second!.raw), 200);
    let before = '';
    for (let i = 0; i < 100 && !/last applied ChangeSequence 1042/.test(before); i++) {
      await new Promise((r) => setTimeout(r, 100));
      before = spawnSync(oldInstall.bin, ['status', '--config', config], { encoding: 'utf8', env }).stdout;
    }
    assert.match(before, /last applied ChangeSequence 1042/);
    await agent.kill('SIGTERM');
    const till = path.join(site, 'data', 'pos-sync.db');
    const agentDb = path.join(site, 'data', 'agent.db');
    const tillBefore = snapshot(till);
    const agentBefore = snapshot(agentDb);
    const dataRows = [...tillBefore].filter(([table]) => !/migration/i.test(table)).flatMap(([, rows]) => rows);
    assert.ok(dataRows.length > 10, `the till file holds the updates' data (${dataRows.length} rows)`);

    // This version installed over it (the installer's order: stopped, replaced, started).
    const newInstall = installGlobally(newTarball, prefix, work);
    assert.equal(newInstall.status, 0, newInstall.stderr);
    assert.doesNotMatch(newInstall.stderr, /npm (warn|error)/i);
    agent = await startChildAgent(config, env, [newInstall.bin]);
    try {
      const status = spawnSync(newInstall.bin, ['status', '--config', config], { encoding: 'utf8', env });
      assert.equal(status.status, 0, status.stderr);
      assert.match(status.stdout, /last applied ChangeSequence 1042/);
      // Every row that was there is there (tables a migration added may be new; none is lost).
      for (const [file, before] of [[till, tillBefore], [agentDb, agentBefore]] as const) {
        const afterUpgrade = snapshot(file);
        for (const [table, rows] of before) {
          const now = afterUpgrade.get(table);
          assert.ok(now, `${path.basename(file)}: table ${table} is gone`);
          assert.deepEqual(now, rows, `${path.basename(file)}: ${table} changed across the upgrade`);
        }
      }
      // And the chain continues on the upgraded agent.
      assert.equal(await deliver(agent.url, third!.raw), 200);
      let after = '';
      for (let i = 0; i < 100 && !/last applied ChangeSequence 1043/.test(after); i++) {
        await new Promise((r) => setTimeout(r, 100));
        after = spawnSync(newInstall.bin, ['status', '--config', config], { encoding: 'utf8', env }).stdout;
      }
      assert.match(after, /last applied ChangeSequence 1043/);
    } finally {
      await agent.kill('SIGTERM');
    }
  });
});

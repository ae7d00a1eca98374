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
 * Upgrading keeps the site's data: the package of the previous release (0.2.0, PREVIOUS_RELEASE) is
 * installed, runs a site and receives updates; it is stopped, this version's package is installed
 * over it, started on the same data, and the data is all there and keeps growing.
 *
 * 0.2.0's package.json predates `files` (npm pack then leaves dist/ out, as .gitignore does) and has a
 * `prepare` script (which npm's strict allow-scripts refuses in a tarball), so the older tarball is
 * made the way this one is: its sources built, packed with this `files` list and without `prepare`.
 */

/**
 * The commit 0.2.0 was released from (CHANGELOG.md, [0.2.0]): the last before the work on 0.3 began.
 * A fixed commit, not the branch point with main: on main itself that is this very commit, and the
 * upgrade would be from this version to itself.
 */
const PREVIOUS_RELEASE = 'b188fff8be80d1949696aa40a5f748eda6cae3b7';

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

  it('from 0.2.0 to this version: stop, install over, start: data migrated and intact, updates continue', async (t) => {
    const base = PREVIOUS_RELEASE;
    const known = spawnSync('git', ['cat-file', '-e', `${base}^{commit}`], { cwd: REPO });
    assert.equal(known.status, 0, `this clone does not have 0.2.0's commit ${base}: clone with its history (not --depth)`);
    assert.notEqual(execFileSync('git', ['rev-parse', 'HEAD'], { cwd: REPO, encoding: 'utf8' }).trim(), base, 'this is the previous release itself');
    t.diagnostic(`previous version: 0.2.0 at ${base.slice(0, 12)}`);
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
      // Every row that was there is there, with the values it had (tables a migration added may be
      // new, and columns it added are left out of the comparison; none is lost). The migration
      // records gain this version's: the earlier ones are kept.
      let migrated = 0;
      for (const [file, before] of [[till, tillBefore], [agentDb, agentBefore]] as const) {
        const afterUpgrade = snapshot(file);
        for (const [table, rows] of before) {
          const now = afterUpgrade.get(table);
          assert.ok(now, `${path.basename(file)}: table ${table} is gone`);
          if (rows.length === 0) continue;
          const columns = Object.keys(JSON.parse(rows[0]!) as Record<string, unknown>);
          const projected = now.map((r) => JSON.stringify(Object.fromEntries(columns.map((c) => [c, (JSON.parse(r) as Record<string, unknown>)[c]])))).sort();
          if (/migration/i.test(table)) {
            for (const row of rows) assert.ok(projected.includes(row), `${path.basename(file)}: ${table} lost ${row}`);
            migrated += now.length - rows.length;
          } else {
            assert.deepEqual(projected, rows, `${path.basename(file)}: ${table} changed across the upgrade`);
          }
        }
      }
      assert.ok(migrated > 0, 'no migration ran: the upgrade was from this version to itself');
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

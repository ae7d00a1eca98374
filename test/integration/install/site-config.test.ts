import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { SAMPLES_DIR, tempDir } from '../../helpers/fixtures';
import { createSiteData } from '../../helpers/site-data';

const CLI = path.resolve(__dirname, '..', '..', '..', 'bin', 'pos-sync-agent.cjs');
const sample = (n: string): string => path.join(SAMPLES_DIR, fs.readdirSync(SAMPLES_DIR).find((f) => f.startsWith(n))!);

/** A person's shell with its own home: no POS_SYNC_* variables, so the site rule decides. */
function shellEnv(home: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), XDG_DATA_HOME: path.join(home, '.local', 'share'), TZ: 'UTC' };
  return { ...env, ...extra };
}

function cli(args: readonly string[], env: NodeJS.ProcessEnv): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env, timeout: 60_000 });
}

/** Every file below a folder (to show that nothing was created). */
function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { recursive: true }).map(String).sort();
}

describe('one site configuration (config/site.ts) from the command line', () => {
  it('read-only commands on a site with no data create nothing and say where they looked', () => {
    const home = tempDir();
    const env = shellEnv(home);
    for (const args of [['status'], ['deliveries'], ['lookup', '--plu', '1'], ['changes'], ['conflicts'], ['admin-url'], ['ops', 'status'], ['backup', 'list']]) {
      const r = cli(args, env);
      assert.equal(r.status, 1, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
      const defaultData = path.join(home, '.local', 'share', 'pos-sync-agent');
      assert.match(r.stdout, new RegExp(`^Data folder: ${defaultData.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} \\(configuration: none: built-in defaults\\)`));
      assert.match(r.stderr, /no agent has run on .*nothing was created.*--config FILE.*pos-sync-agent serve \[no_site_data\]/);
      assert.deepEqual(filesUnder(home), [], `${args.join(' ')} created files`);
    }
    // The configuration command acts on no data: it prints, and creates nothing either.
    assert.equal(cli(['config'], env).status, 0);
    assert.deepEqual(filesUnder(home), []);
  });

  it("commands on a 0.1 data folder not upgraded yet say so, and leave it as it is", () => {
    // Before the new version's first start, 0.1's data is all in pos-sync.db: not "no agent has run".
    const home = tempDir();
    const env = shellEnv(home);
    const dataDir = path.join(home, 'data');
    fs.mkdirSync(dataDir);
    fs.copyFileSync(path.join(__dirname, '..', '..', 'fixtures', 'legacy-0.1', 'pos-sync.db'), path.join(dataDir, 'pos-sync.db'));
    const config = path.join(home, 'site.json');
    fs.writeFileSync(config, JSON.stringify({ dataDir }));
    const before = fs.readFileSync(path.join(dataDir, 'pos-sync.db')).toString('base64');
    for (const args of [['status'], ['deliveries'], ['staff', 'search', 'a'], ['force-apply', '3021:1043', '--reason', 'x'], ['staff', 'purge', '--yes']]) {
      const r = cli([...args, '--config', config], env);
      assert.equal(r.status, 1, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, /holds a 0\.1 agent's data in pos-sync\.db, not upgraded yet .*Start the agent once to upgrade it \(.*serve.*\), then run this again\. \[site_not_upgraded\]/, args.join(' '));
      assert.deepEqual(filesUnder(dataDir), ['pos-sync.db'], `${args.join(' ')} created files`);
    }
    assert.equal(fs.readFileSync(path.join(dataDir, 'pos-sync.db')).toString('base64'), before, 'the 0.1 file unchanged');
  });

  it('import and force-apply found by default refuse a folder without data, naming it and --config', () => {
    const home = tempDir();
    const env = shellEnv(home);
    for (const args of [['import', sample('01')], ['force-apply', '3021:1043', '--reason', 'x']]) {
      const r = cli(args, env);
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stderr, new RegExp(`${args[0]} refused: no agent runs on ${path.join(home, '.local', 'share', 'pos-sync-agent').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} and it holds no data`));
      assert.match(r.stderr, /Give the site's configuration with --config FILE/);
      assert.deepEqual(filesUnder(home), []);
    }
  });

  it("finds the user's own file, then POS_SYNC_CONFIG over it, and names the file it acts on", () => {
    const home = tempDir();
    const siteDir = path.join(home, 'site-data');
    createSiteData(siteDir);
    const userFile = path.join(home, '.config', 'pos-sync-agent', 'config.json');
    fs.mkdirSync(path.dirname(userFile), { recursive: true });
    fs.writeFileSync(userFile, JSON.stringify({ dataDir: siteDir }));
    const imported = cli(['import', sample('01')], shellEnv(home));
    assert.equal(imported.status, 0, imported.stderr);
    assert.match(imported.stdout, new RegExp(`^Data folder: ${siteDir.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} \\(configuration: ${userFile.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} \\(this user's\\)\\)`));
    assert.match(imported.stdout, /Applied location 3021 ChangeSequence 1041/);

    const other = path.join(home, 'other.json');
    const otherData = path.join(home, 'other-data');
    fs.writeFileSync(other, JSON.stringify({ dataDir: otherData }));
    const status = cli(['status'], shellEnv(home, { POS_SYNC_CONFIG: other }));
    assert.equal(status.status, 1);
    assert.match(status.stdout, /\(configuration: .*other\.json \(POS_SYNC_CONFIG\)\)/);
    // Named on purpose, a change may start the site's data; the hint it prints works in a plain shell.
    const first = cli(['import', sample('01')], shellEnv(home, { POS_SYNC_CONFIG: other }));
    assert.equal(first.status, 0, first.stderr);
    assert.match(first.stdout, /No data in .*other-data yet: it is created for this site\./);
    const waiting = cli(['import', sample('03')], shellEnv(home, { POS_SYNC_CONFIG: other }));
    assert.match(waiting.stdout, new RegExp(`Not applied yet: see \`pos-sync-agent status --config ${other.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\``));
    const viaHint = cli(['status', '--config', other], shellEnv(home));
    assert.equal(viaHint.status, 0, viaHint.stderr);
    assert.match(viaHint.stdout, /gap: update 3021:1043 \(received .*\) needs update 1042, which has not arrived/);
    // No login link for a site whose agent is not running (whoever listened on its port could use
    // one): it says so, with the command that starts the agent.
    const link = cli(['admin-url'], shellEnv(home));
    assert.equal(link.status, 1, link.stdout);
    assert.doesNotMatch(link.stdout, /login=/);
    assert.match(link.stderr, /no agent is running on .*site-data, so there is no status window to log in to: start it \(pos-sync-agent serve, or start the service\), then run pos-sync-agent admin-url again/);
    // The secrets commands follow the same rule.
    const secrets = cli(['secrets', 'list'], shellEnv(home, { POS_SYNC_CONFIG: other }));
    assert.equal(secrets.status, 0, secrets.stderr);
    assert.match(secrets.stdout, new RegExp(`Secrets file: ${path.join(otherData, 'secrets.json').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`));
    assert.match(secrets.stderr, /\(configuration: .*other\.json \(POS_SYNC_CONFIG\)\)/);
    // And the user's own site still has only what was imported there.
    assert.match(cli(['status'], shellEnv(home)).stdout, /last applied ChangeSequence 1041/);
  });
});

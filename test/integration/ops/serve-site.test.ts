import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { freePort, REPO_ROOT, startServe } from '../../helpers/child-agent';
import { tempDir } from '../../helpers/fixtures';

/**
 * `serve` finds its site as every other command does (docs/operations.md, "Which configuration"):
 * --config, POS_SYNC_CONFIG, the machine-wide file, this user's. It once read only --config, so on a
 * PC set up with a user's configuration its first start made the webhook token in the default data
 * folder and the second ran the configured site with no token at all.
 */

const CLI = path.join(REPO_ROOT, 'bin', 'pos-sync-agent.cjs');

/** An environment with nothing of this machine's site in it: its own home, no POS_SYNC_ variables. */
function homeEnv(home: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('POS_SYNC') && !k.startsWith('XDG_')) env[k] = v;
  return { ...env, HOME: home, ...extra };
}

function cli(env: NodeJS.ProcessEnv, cwd: string, args: string[]): { status: number | null; stdout: string; out: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, env, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, out: `${r.stdout}${r.stderr}` };
}

async function site(dir: string): Promise<{ dataDir: string; config: Record<string, unknown> }> {
  const dataDir = path.join(dir, 'site-data');
  return { dataDir, config: { dataDir, webhook: { port: await freePort() }, admin: { enabled: false } } };
}

/** The agent at `url` refuses an update without the token and takes it with the one `secrets show` prints. */
async function tokenGuards(url: string, token: string): Promise<void> {
  const body = JSON.stringify({ LocationID: 1, ChangeSequence: 1, ParentChangeSequence: 0, ScheduledItems: [] });
  const without = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  assert.equal(without.status, 401, 'an update without the token was taken');
  const withToken = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body });
  assert.notEqual(withToken.status, 401);
}

describe('serve finds its site as every command does', () => {
  it("uses this user's configuration when started without --config, and makes the token in its data folder", { timeout: 120_000 }, async () => {
    const dir = tempDir();
    const home = path.join(dir, 'home');
    const { dataDir, config } = await site(dir);
    const userConfig = path.join(home, '.config', 'pos-sync-agent', 'config.json');
    fs.mkdirSync(path.dirname(userConfig), { recursive: true });
    fs.writeFileSync(userConfig, JSON.stringify(config));
    const env = homeEnv(home);
    for (let start = 1; start <= 2; start++) {
      const agent = await startServe([], { env, cwd: dir });
      try {
        assert.match(agent.output(), new RegExp(`data in ${dataDir.replace(/[/.]/g, '\\$&')} \\(configuration: ${userConfig.replace(/[/.]/g, '\\$&')} \\(`), `start ${start}: names the data folder and the configuration it found`);
        assert.equal(new URL(agent.url).port, String((config.webhook as { port: number }).port));
        const shown = cli(env, dir, ['secrets', 'show', 'webhook.bearerToken', '--json']);
        assert.equal(shown.status, 0, shown.out);
        const token = (JSON.parse(shown.stdout) as { value: string }).value;
        assert.ok(token.length > 20, `start ${start}: no token in this site's secrets`);
        await tokenGuards(agent.url, token);
      } finally {
        await agent.kill('SIGTERM');
      }
    }
    assert.equal(fs.existsSync(path.join(home, '.local', 'share', 'pos-sync-agent')), false, 'the default data folder was used');
  });

  it('uses POS_SYNC_CONFIG', { timeout: 120_000 }, async () => {
    const dir = tempDir();
    const home = path.join(dir, 'home');
    fs.mkdirSync(home);
    const { dataDir, config } = await site(dir);
    const file = path.join(dir, 'site.json');
    fs.writeFileSync(file, JSON.stringify(config));
    const env = homeEnv(home, { POS_SYNC_CONFIG: file });
    const agent = await startServe([], { env, cwd: home });
    try {
      assert.match(agent.output(), new RegExp(`data in ${dataDir.replace(/[/.]/g, '\\$&')}\\b`));
      const shown = cli(env, home, ['secrets', 'show', 'webhook.bearerToken', '--json']);
      assert.equal(shown.status, 0, shown.out);
      await tokenGuards(agent.url, (JSON.parse(shown.stdout) as { value: string }).value);
    } finally {
      await agent.kill('SIGTERM');
    }
    assert.equal(fs.existsSync(path.join(home, '.local', 'share', 'pos-sync-agent')), false, 'the default data folder was used');
  });

  it('under a service manager, prints an admin-url command that runs as printed from another folder', { timeout: 120_000 }, async () => {
    const dir = tempDir();
    const home = path.join(dir, 'home');
    fs.mkdirSync(home);
    const siteDir = path.join(dir, 'my site');
    fs.mkdirSync(siteDir);
    const adminPort = await freePort();
    fs.writeFileSync(path.join(siteDir, 'config.json'), JSON.stringify({ dataDir: path.join(siteDir, 'data'), webhook: { port: 0, allowUnauthenticated: true }, admin: { port: adminPort } }));
    // Started from the site's folder with a relative --config, as a service unit might.
    const env = homeEnv(home, { JOURNAL_STREAM: '8:12345', INVOCATION_ID: '0123456789abcdef' });
    const agent = await startServe(['--config', 'config.json'], { env, cwd: siteDir });
    try {
      const command = /get a one-time login link with: (pos-sync-agent admin-url[^\n]*)\)\n/.exec(agent.output())?.[1];
      assert.ok(command, agent.output());
      // `pos-sync-agent` on PATH as an install puts it; the command pasted into a shell elsewhere.
      const bin = path.join(dir, 'bin');
      fs.mkdirSync(bin);
      fs.symlinkSync(CLI, path.join(bin, 'pos-sync-agent'));
      const r = spawnSync('sh', ['-c', command], { cwd: home, env: { ...homeEnv(home), PATH: `${bin}:${path.dirname(process.execPath)}:${process.env.PATH}` }, encoding: 'utf8', timeout: 60_000 });
      assert.equal(r.status, 0, `${command}\n${r.stdout}${r.stderr}`);
      assert.match(r.stdout, new RegExp(`http://127\\.\\d+\\.\\d+\\.\\d+:${adminPort}/\\?login=`));
    } finally {
      await agent.kill('SIGTERM');
    }
  });
});

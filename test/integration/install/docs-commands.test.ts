import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../../helpers/child-agent';
import { commandsOf, docBlocks, printsPattern, type DocCommand } from '../../helpers/doc-blocks';
import { REPO, installGlobally, isBuilt, packCheckout, plainNpmEnv } from '../../helpers/installed';
import { createSiteData } from '../../helpers/site-data';

/**
 * Every shell command in README.md and docs/*.md runs as printed (the convention is in
 * test/helpers/doc-blocks.ts): against the installed package (npm pack + npm install -g, into a
 * scratch prefix that is also npm's global folder for the commands, with this version's tarball in
 * the working folder), a scratch site (its configuration in POS_SYNC_CONFIG and ./site.json, free
 * ports, data already created), and a scratch HOME. Commands marked `# not run here: REASON` are
 * checked with bash -n only.
 */

const LONG_RUNNING = /(^|[\s;&|])(pos-sync-agent\s+(.*\s)?serve|npm run agent)\b/;

describe('the docs convention (test/helpers/doc-blocks.ts)', () => {
  it('reads commands, continuations, prints and markers', () => {
    const { notRun, commands } = commandsOf(
      ['# a comment', 'pos-sync-agent status --config site.json   # why', '# prints: Location …', 'printf %s x \\', '  | wc -c', 'systemctl enable x   # not run here: systemd'].join('\n'),
    );
    assert.equal(notRun, null);
    assert.deepEqual(commands, [
      { text: 'pos-sync-agent status --config site.json   # why', notRun: null, prints: ['Location …'] },
      { text: 'printf %s x  | wc -c', notRun: null, prints: [] },
      { text: 'systemctl enable x   # not run here: systemd', notRun: 'systemd', prints: [] },
    ]);
    assert.equal(commandsOf('# not run here: an installer\nmsiexec /i x').commands[0]!.notRun, 'an installer');
    assert.match('Status window: http://127.0.0.1:4431/?login=abc', printsPattern('Status window: http://127.0.0.1:…/?login=…'));
    assert.doesNotMatch('Status window: https://example/', printsPattern('Status window: http://127.0.0.1:…/?login=…'));
  });
});

describe('every shell command in README.md and docs/*.md', () => {
  const blocks = docBlocks(REPO);
  let work = '';
  let env: NodeJS.ProcessEnv = {};
  let site = '';

  before(async () => {
    assert.ok(isBuilt(), 'build first: npm run build && npm run build:renderer (npm test does)');
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'pos-sync-docs-'));
    const tarball = packCheckout(REPO, path.join(work, 'pack'));
    const installed = installGlobally(tarball, path.join(work, 'prefix'), work);
    assert.equal(installed.status, 0, installed.stderr);
    site = path.join(work, 'site');
    fs.mkdirSync(path.join(work, 'home'), { recursive: true });
    fs.mkdirSync(site);
    // The docs' `npm install -g ./pos-sync-agent-<version>.tgz` installs this tarball into the scratch prefix.
    fs.copyFileSync(tarball, path.join(site, path.basename(tarball)));
    const config = path.join(site, 'site.json');
    fs.writeFileSync(config, JSON.stringify({ dataDir: './data', webhook: { port: await freePort() }, admin: { port: await freePort() } }, null, 2));
    createSiteData(path.join(site, 'data'));
    env = plainNpmEnv({
      PATH: `${path.dirname(installed.bin)}:${process.env.PATH}`,
      HOME: path.join(work, 'home'),
      POS_SYNC_CONFIG: config,
      TZ: 'UTC',
      // npm install -g goes to the scratch prefix, with install scripts refused as a strict site's npm would.
      npm_config_prefix: path.join(work, 'prefix'),
      npm_config_strict_allow_scripts: 'true',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
    });
    for (const k of Object.keys(env)) if (k.startsWith('POS_SYNC__')) delete env[k];
  });
  after(() => fs.rmSync(work, { recursive: true, force: true }));

  it('finds the shell blocks (the docs have some)', (t) => {
    assert.ok(blocks.some((b) => b.commands.length > 0));
    for (const b of blocks.filter((x) => x.notRun)) t.diagnostic(`${b.file}:${b.line} (${b.lang}) not run here: ${b.notRun}`);
  });

  for (const block of blocks) {
    const where = `${block.file}:${block.line}`;
    if (block.lang === 'powershell' || block.lang === 'ps1' || block.lang === 'pwsh' || block.lang === 'bat' || block.lang === 'cmd' || block.lang === 'batch') continue;
    it(`${where} is valid shell`, () => {
      const r = spawnSync('bash', ['-n'], { input: block.text, encoding: 'utf8' });
      assert.equal(r.status, 0, `${where}: ${r.stderr}`);
    });
    for (const command of block.commands.filter((c) => c.notRun === null)) {
      it(`${where}: ${command.text}`, async () => {
        const { status, output } = LONG_RUNNING.test(command.text) ? await runUntilListening(command, site, env) : runToEnd(command, site, env);
        assert.equal(status, 0, `${where}: \`${command.text}\` exited ${status}:\n${output}`);
        for (const expected of command.prints) assert.match(output, printsPattern(expected), `${where}: \`${command.text}\` should print ${expected}`);
      });
    }
  }
});

function runToEnd(command: DocCommand, cwd: string, env: NodeJS.ProcessEnv): { status: number | null; output: string } {
  const r = spawnSync('bash', ['-o', 'pipefail', '-c', command.text], { cwd, env, encoding: 'utf8', timeout: 120_000, input: '' });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

/** `serve` runs until stopped: it passes once it listens, and is stopped (SIGTERM) then. */
async function runUntilListening(command: DocCommand, cwd: string, env: NodeJS.ProcessEnv): Promise<{ status: number | null; output: string }> {
  const child = spawn('bash', ['-c', command.text], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (c) => (output += c));
  child.stderr.on('data', (c) => (output += c));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const listening = await new Promise<boolean>((resolve) => {
    const timer = setInterval(() => {
      if (/Receiving menu cycle updates at /.test(output)) {
        clearInterval(timer);
        resolve(true);
      }
    }, 50);
    void exited.then(() => {
      clearInterval(timer);
      resolve(/Receiving menu cycle updates at /.test(output));
    });
    setTimeout(() => {
      clearInterval(timer);
      resolve(false);
    }, 60_000).unref();
  });
  if (child.exitCode === null) process.kill(-child.pid!, 'SIGTERM');
  const code = await exited;
  return { status: listening ? 0 : code ?? 1, output };
}

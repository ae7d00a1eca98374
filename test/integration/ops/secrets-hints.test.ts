import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { CLI, runCli, startChildAgent, writeConfig } from '../../helpers/child-agent';
import { tempDir } from '../../helpers/fixtures';

/**
 * The commands the `secrets` commands print run as printed (CHANGELOG: hints "now run as printed"):
 * given `--config FILE`, a hint carries it, so that `secrets show` run from the hint prints this site's
 * token, not the default data folder's (which head office would then be given). And, like every
 * command that reads or changes a site's data, they name the data folder first, --config or not.
 */

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** A shell with no site of its own: a fresh home, so the default data folder is one of this test's. */
function shell(): { env: NodeJS.ProcessEnv; defaultDataDir: string; bin: string } {
  const home = tempDir();
  const bin = path.join(home, 'bin');
  fs.mkdirSync(bin);
  // `pos-sync-agent` on PATH, as the installed command: this checkout's bin under this Node.
  fs.writeFileSync(path.join(bin, 'pos-sync-agent'), `#!/bin/sh\nexec '${process.execPath}' '${CLI}' "$@"\n`, { mode: 0o755 });
  const env = { HOME: home, XDG_DATA_HOME: path.join(home, 'data'), XDG_CONFIG_HOME: path.join(home, 'config'), POS_SYNC_CONFIG: '' };
  return { env, defaultDataDir: path.join(home, 'data', 'pos-sync-agent'), bin };
}

/** Runs a command line exactly as printed, through /bin/sh (its quoting included). */
function runAsPrinted(line: string, sh: ReturnType<typeof shell>): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync('/bin/sh', ['-c', line], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, ...sh.env, PATH: `${sh.bin}:${process.env.PATH ?? ''}` } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The site: its configuration in a folder whose name needs quoting, its data folder beside it. */
function site(): { config: string; dataDir: string } {
  const dir = path.join(tempDir(), 'site one');
  fs.mkdirSync(dir);
  const dataDir = path.join(dir, 'data');
  return { config: writeConfig(dir, { dataDir }), dataDir };
}

function storedToken(dataDir: string): string {
  return (JSON.parse(fs.readFileSync(path.join(dataDir, 'secrets.json'), 'utf8')) as { secrets: Record<string, string> }).secrets['webhook.bearerToken']!;
}

describe('secrets hints run as printed, with the site\'s --config', () => {
  it('`secrets generate --config FILE`: the printed `secrets show` shows this site\'s token, not the default folder\'s', () => {
    const sh = shell();
    const { config, dataDir } = site();
    // The default data folder has a token of its own: what a hint without --config would show.
    const other = runAsPrinted('pos-sync-agent secrets generate webhook.bearerToken', sh);
    assert.equal(other.status, 0, other.stderr);
    const otherToken = storedToken(sh.defaultDataDir);

    const generated = runCli(config, ['secrets', 'generate', 'webhook.bearerToken'], { env: sh.env });
    assert.equal(generated.status, 0, generated.stderr);
    const token = storedToken(dataDir);
    assert.notEqual(token, otherToken);
    const hint = /for this site's registration \((pos-sync-agent [^)]*)\)/.exec(generated.stdout)?.[1];
    assert.ok(hint, generated.stdout);

    const shown = runAsPrinted(hint, sh);
    assert.equal(shown.status, 0, shown.stderr);
    assert.notEqual(shown.stdout, `${otherToken}\n`, 'the hint, run as printed, shows the default data folder\'s token');
    assert.equal(shown.stdout, `${token}\n`, 'the hint, run as printed, shows this site\'s token');
    assert.match(shown.stderr, new RegExp(`^Data folder: ${escape(dataDir)} `));
    assert.match(hint, /^pos-sync-agent secrets show webhook\.bearerToken --config '.*\/site one\/config\.json'$/);
  });

  it('`secrets show` on a site with no token: the printed `secrets generate` makes this site\'s, and `secrets show` then prints it', () => {
    const sh = shell();
    const { config, dataDir } = site();
    const missing = runCli(config, ['secrets', 'show', 'webhook.bearerToken'], { env: sh.env });
    assert.equal(missing.status, 1, missing.stdout);
    const hint = /or run: (pos-sync-agent .*?) \[secret_not_set\]/.exec(missing.stderr)?.[1];
    assert.ok(hint, missing.stderr);
    const generated = runAsPrinted(hint, sh);
    assert.equal(generated.status, 0, generated.stderr);
    assert.equal(fs.existsSync(path.join(sh.defaultDataDir, 'secrets.json')), false, 'nothing was written to the default data folder');
    const shown = runCli(config, ['secrets', 'show', 'webhook.bearerToken'], { env: sh.env });
    assert.equal(shown.stdout, `${storedToken(dataDir)}\n`);
    assert.match(missing.stderr, /start the agent once to make it \(pos-sync-agent serve --config '.*\/site one\/config\.json'\)/);
  });

  it('`serve --config FILE` making the token: the command its log names shows that token, run as printed', async () => {
    const sh = shell();
    const dir = path.join(tempDir(), 'site one');
    fs.mkdirSync(dir);
    const dataDir = path.join(dir, 'data');
    const config = writeConfig(dir, { dataDir, webhook: { port: 0, allowUnauthenticated: false }, admin: { enabled: false } });
    const agent = await startChildAgent(config, sh.env);
    let output: string;
    try {
      output = agent.output();
    } finally {
      await agent.kill('SIGTERM');
    }
    const hint = /made this install's webhook token \((pos-sync-agent .*?) prints it for head office\)/.exec(output)?.[1];
    assert.ok(hint, output);
    assert.match(hint, /^pos-sync-agent secrets show webhook\.bearerToken --config '.*\/site one\/config\.json'$/);
    const shown = runAsPrinted(hint, sh);
    assert.equal(shown.stdout, `${storedToken(dataDir)}\n`, shown.stderr);
  });

  it('`secrets show` and `secrets list` with --config name the data folder first, as without it', () => {
    const sh = shell();
    const { config, dataDir } = site();
    assert.equal(runCli(config, ['secrets', 'generate', 'webhook.bearerToken'], { env: sh.env }).status, 0);
    const folder = new RegExp(`^Data folder: ${escape(dataDir)} \\(no agent is running from it\\) \\(configuration: ${escape(config)} \\(--config\\)\\)\\.\n`);
    for (const args of [['secrets', 'show', 'webhook.bearerToken'], ['secrets', 'list'], ['secrets', 'list', '--json']]) {
      const r = runCli(config, args, { env: sh.env });
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stderr, folder, `${args.join(' ')}: ${r.stderr}`);
    }
    // On stderr: what `show` prints is the token alone, and `list --json` stays JSON.
    assert.equal(runCli(config, ['secrets', 'show', 'webhook.bearerToken'], { env: sh.env }).stdout, `${storedToken(dataDir)}\n`);
    assert.doesNotThrow(() => JSON.parse(runCli(config, ['secrets', 'list', '--json'], { env: sh.env }).stdout));
  });
});

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT, writeConfig } from '../helpers/child-agent';
import { SAMPLES_DIR, tempDir } from '../helpers/fixtures';
import { createSiteData } from '../helpers/site-data';

/** The real CLI as a user runs it: its own process, its own exit code, its own stdout and stderr. */
const CLI = path.join(REPO_ROOT, 'bin', 'pos-sync-agent.cjs');

interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function cli(args: readonly string[], options: { env?: NodeJS.ProcessEnv; input?: string } = {}): Run {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000, input: options.input, env: { ...process.env, ...options.env } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** What `cmd | head` does: the reader is gone before the command writes anything. */
async function withClosedStdout(args: readonly string[], input?: string): Promise<{ status: number | null; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdout.destroy();
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  // `secrets set` reads its value first, so its output is written only after this: after the close.
  child.stdin.end(input ?? '');
  return { status: await exited, stderr };
}

const sample = (n: string): string => path.join(SAMPLES_DIR, fs.readdirSync(SAMPLES_DIR).find((f) => f.startsWith(n))!);

function site(): { dir: string; config: string } {
  const dir = tempDir();
  createSiteData(path.join(dir, 'data'));
  return { dir, config: writeConfig(dir, { dataDir: path.join(dir, 'data') }) };
}

/** No stack frame, no Node internals: what a user sees of an error is its message. */
function assertNoStack(text: string): void {
  assert.doesNotMatch(text, /\n\s+at |node:internal|EPIPE|Error:/, text);
}

describe('the CLI process', () => {
  it('takes global options before or after the command (point 6)', () => {
    const { config } = site();
    for (const args of [
      ['--config', config, 'status'],
      [`--config=${config}`, 'status'],
      ['status', '--config', config],
      ['--json', '--config', config, 'status'],
      // A command's own option with a value, before the command.
      ['--location', '3021', '--config', config, 'ack-warnings'],
    ]) {
      const r = cli(args);
      assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
      if (args.includes('--json')) assert.deepEqual((JSON.parse(r.stdout) as { locations: unknown[] }).locations, []);
      else if (args.includes('ack-warnings')) assert.match(r.stdout, /Acknowledged 0 warnings\./);
      else assert.match(r.stdout, /No updates received yet/);
    }
    // Two-word commands too, with the option between nothing and the words.
    const list = cli(['--config', config, 'secrets', 'list']);
    assert.equal(list.status, 0, list.stderr);
    assert.match(list.stdout, new RegExp(`Secrets file: ${path.join(path.dirname(config), 'data', 'secrets.json').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`));
  });

  it('ends quietly with its own exit code when the reader closes the pipe (`status | head`) (point 7)', async () => {
    const { config } = site();
    assert.equal(cli(['import', sample('01'), '--config', config]).status, 0);
    const status = await withClosedStdout(['status', '--config', config]);
    assert.equal(status.status, 0, status.stderr);
    assertNoStack(status.stderr);
    assert.equal(status.stderr, '');
    const help = await withClosedStdout(['--help']);
    assert.equal(help.status, 0, help.stderr);
    assert.equal(help.stderr, '');
    // The work is done even though nobody reads what it says about it.
    const secret = await withClosedStdout(['secrets', 'set', 'webhook.bearerToken', '--config', config], 'tok-5b3c1e9d\n');
    assert.equal(secret.status, 0, secret.stderr);
    assertNoStack(secret.stderr);
    assert.match(fs.readFileSync(path.join(path.dirname(config), 'data', 'secrets.json'), 'utf8'), /tok-5b3c1e9d/);
  });

  it('with --json, writes every error as {"error":{"id","message"}} on stderr with the documented exit code (point 8)', () => {
    const { dir, config } = site();
    const badConfig = path.join(dir, 'bad.json');
    fs.writeFileSync(badConfig, JSON.stringify({ webhook: { port: 'eighty' } }));
    const badPayload = path.join(dir, 'no-parent.json');
    fs.writeFileSync(badPayload, JSON.stringify({ LocationID: 1, ChangeSequence: 2 }));
    const cases: { args: string[]; status: number; id: string }[] = [
      { args: ['status', '--bogus'], status: 2, id: 'usage' },
      { args: ['frob'], status: 2, id: 'usage' },
      { args: ['force-apply', 'not-a-name', '--reason', 'x'], status: 2, id: 'usage' },
      { args: ['status', '--config', badConfig], status: 3, id: 'config_invalid' },
      { args: ['force-apply', '3021:1043', '--reason', 'lost', '--config', config], status: 1, id: 'update_not_found' },
      { args: ['lookup', '--plu', '4242', '--config', config], status: 1, id: 'plu_not_found' },
      { args: ['import', path.join(dir, 'missing.json'), '--config', config], status: 4, id: 'file_unreadable' },
      { args: ['import', badPayload, '--config', config], status: 4, id: 'invalid_envelope' },
    ];
    for (const c of cases) {
      const r = cli(['--json', ...c.args]);
      assert.equal(r.status, c.status, `${c.args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stdout, '', c.args.join(' '));
      const error = (JSON.parse(r.stderr) as { error: { id: string; message: string } }).error;
      assert.equal(error.id, c.id, r.stderr);
      assert.equal(typeof error.message, 'string');
      assertNoStack(error.message);
    }
    // Without --json the same failures are one line of text with the id, and the same exit codes.
    const text = cli(['lookup', '--plu', '4242', '--config', config]);
    assert.equal(text.status, 1);
    assert.equal(text.stderr, 'no item with PLU 4242 [plu_not_found]\n');
    assert.match(text.stdout, /^Data folder: .*\/data \(configuration: .*config\.json \(--config\)\)\n$/);
  });

  it('names a mistyped argument before it looks at the data folder, whatever the folder holds', () => {
    // A folder with no data: reading it, or changing it through a configuration found by default,
    // would be refused; a usage error is still named first (exit 2), and the folder is not created.
    const dir = tempDir();
    const empty = path.join(dir, 'nothing-here');
    const config = writeConfig(dir, { dataDir: empty });
    const cases: { args: string[]; message: RegExp }[] = [
      { args: ['force-apply', 'not-a-name', '--reason', 'x'], message: /LOCATION:SEQUENCE/ },
      { args: ['force-apply', '3021:1043'], message: /--reason is required/ },
      { args: ['resolve-conflict', '3021:1043', '--keep', 'both', '--reason', 'why not'], message: /--keep takes first, later or #N/ },
      { args: ['lookup', '--plu', '4242', '--date', '26/11/2026'], message: /--date takes YYYY-MM-DD/ },
      { args: ['pause', '--reason', ' '], message: /--reason takes a text/ },
      { args: ['staff', 'purge'], message: /add --yes to confirm/ },
      { args: ['changes', '--days', '0'], message: /--days takes a whole number from 1/ },
      { args: ['audit', '--limit', 'x'], message: /--limit takes a whole number/ },
      { args: ['conflicts', '--location', 'x'], message: /--location takes a whole number/ },
      { args: ['conflicts', 'not-a-name'], message: /LOCATION:SEQUENCE/ },
    ];
    for (const c of cases) {
      const r = cli(['--json', ...c.args, '--config', config]);
      assert.equal(r.status, 2, `${c.args.join(' ')}: ${r.stderr}`);
      const error = (JSON.parse(r.stderr) as { error: { id: string; message: string } }).error;
      assert.equal(error.id, 'usage', c.args.join(' '));
      assert.match(error.message, c.message);
    }
    assert.equal(fs.existsSync(empty), false, 'nothing was created');
  });

  it('prints --version, one command\'s help, and never echoes the rest of an unknown line (point 9)', () => {
    const version = (JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    const v = cli(['--version']);
    assert.equal(v.status, 0);
    assert.equal(v.stdout, `pos-sync-agent ${version}\n`);
    assert.deepEqual(JSON.parse(cli(['--version', '--json']).stdout), { version });

    const forceHelp = cli(['force-apply', '--help']);
    assert.equal(forceHelp.status, 0, forceHelp.stderr);
    assert.match(forceHelp.stdout, /^Usage: pos-sync-agent force-apply LOCATION:SEQUENCE --reason TEXT/);
    assert.doesNotMatch(forceHelp.stdout, /Commands:/, 'one command, not the whole list');
    const staffHelp = cli(['staff', '--help']);
    assert.equal(staffHelp.status, 0);
    assert.match(staffHelp.stdout, /staff search QUERY/);
    assert.doesNotMatch(staffHelp.stdout, /force-apply/);

    const unknown = cli(['frob', 's3cr3t-value', '--json']);
    assert.equal(unknown.status, 2);
    assert.doesNotMatch(unknown.stderr, /s3cr3t/);
    const typo = cli(['secrets', 'sett', 'hunter2-token']);
    assert.equal(typo.status, 2);
    assert.match(typo.stderr, /Unknown secrets command; the secrets commands are: secrets set, secrets list, secrets show, secrets generate, secrets delete/);
    assert.doesNotMatch(typo.stderr, /hunter2|sett/);
    const pasted = cli(['tok-9f8e7d6c5b4a']);
    assert.equal(pasted.status, 2);
    assert.doesNotMatch(pasted.stderr, /tok-9f8e/);
  });

  it('imports a file saved by Notepad: a UTF-8 byte-order mark and CRLF line ends', () => {
    const { dir, config } = site();
    const file = path.join(dir, 'notepad.json');
    const text = fs.readFileSync(sample('01'), 'utf8');
    fs.writeFileSync(file, `\uFEFF${JSON.stringify(JSON.parse(text), null, 2).replace(/\n/g, '\r\n')}\r\n`);
    const r = cli(['import', file, '--config', config]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /Stored update 3021:1041 .*: new\./);
    assert.match(r.stdout, /Applied location 3021 ChangeSequence 1041/);
  });

  it('names updates LOCATION:SEQUENCE in status and force-apply; #N still names the inbox row (point 10)', () => {
    const { config } = site();
    cli(['import', sample('01'), '--config', config]);
    const stored = cli(['import', sample('03'), '--config', config]);
    assert.match(stored.stdout, /Stored update 3021:1043 \(location 3021 ChangeSequence 1043, parent 1042; inbox #2\): new\./);
    const status = cli(['status', '--config', config]);
    assert.match(status.stdout, /gap: update 3021:1043 \(received [^)]*\) needs update 1042, which has not arrived/);
    const wrongLocation = cli(['force-apply', '3022:1043', '--reason', 'lost', '--config', config]);
    assert.equal(wrongLocation.status, 1);
    assert.match(wrongLocation.stderr, /no stored update 3022:1043: name an update as LOCATION:SEQUENCE/);
    const forced = cli(['force-apply', '3021:1043', '--reason', 'support says 1042 is lost', '--config', config]);
    assert.equal(forced.status, 0, forced.stderr);
    assert.match(forced.stdout, /Force-applied update 3021:1043/);
    const byInbox = cli(['force-apply', '#2', '--reason', 'again', '--config', config]);
    assert.equal(byInbox.status, 1);
    assert.match(byInbox.stderr, /update #2 is applied; only a waiting update can be force-applied \[not_pending\]/);
  });

  it('says which folder `secrets set` writes to when no --config is given (point 11)', () => {
    const home = tempDir();
    const env = { HOME: home, XDG_DATA_HOME: path.join(home, 'xdg'), POS_SYNC__dataDir: undefined } as NodeJS.ProcessEnv;
    delete env.POS_SYNC__dataDir;
    const defaultDir = path.join(home, 'xdg', 'pos-sync-agent');
    const set = cli(['secrets', 'set', 'webhook.bearerToken'], { env, input: 'tok-1a2b3c4d\n' });
    assert.equal(set.status, 0, set.stderr);
    assert.match(set.stderr, new RegExp(`No --config given: using the default data folder ${defaultDir.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} \\(no agent is running from it\\)`));
    assert.match(set.stderr, /If the site runs with --config FILE, run this again with that --config/);
    assert.match(set.stdout, new RegExp(`Stored webhook.bearerToken in ${path.join(defaultDir, 'secrets.json').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`));
    const { config } = site();
    const withConfig = cli(['secrets', 'set', 'webhook.bearerToken', '--config', config], { env, input: 'tok-1a2b3c4d\n' });
    assert.equal(withConfig.status, 0, withConfig.stderr);
    // Named, the configuration needs no note; the data folder is still named first, as by every command.
    assert.doesNotMatch(withConfig.stderr, /No --config given/);
    assert.match(withConfig.stderr, new RegExp(`^Data folder: ${path.join(path.dirname(config), 'data').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} \\(no agent is running from it\\) \\(configuration: .*config\\.json \\(--config\\)\\)\\.\n$`));
  });

  it('`restore` names the data folder it restores into, and refuses one only the built-in defaults name', () => {
    const { dir, config } = site();
    const backup = cli(['backup', '--config', config]);
    assert.equal(backup.status, 0, backup.stderr);
    const sets = fs.readdirSync(path.join(dir, 'data', 'backups')).filter((f) => f.startsWith('backup-'));
    assert.equal(sets.length, 1, backup.stdout);
    const set = path.join(dir, 'data', 'backups', sets[0]!);
    const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

    // No configuration anywhere: the per-user default folder, which no agent of the site reads.
    const home = tempDir();
    const env = { HOME: home, XDG_DATA_HOME: path.join(home, 'xdg'), XDG_CONFIG_HOME: path.join(home, 'xdg-config') } as NodeJS.ProcessEnv;
    const refused = cli(['restore', set], { env });
    assert.equal(refused.status, 1, refused.stdout);
    const defaultDir = path.join(home, 'xdg', 'pos-sync-agent');
    assert.match(refused.stdout, new RegExp(`^Data folder: ${escape(defaultDir)} \\(configuration: none: built-in defaults\\)\n`));
    assert.match(refused.stderr, /restore refused: .* holds no data and no configuration names it/);
    assert.match(refused.stderr, /--config FILE/);
    assert.equal(fs.existsSync(defaultDir), false, 'the refused restore made the default folder');
    assertNoStack(refused.stderr);

    // A new PC: the site's configuration names an empty folder; the backup goes into it.
    const fresh = tempDir();
    const freshConfig = writeConfig(fresh, { dataDir: path.join(fresh, 'data') });
    const restored = cli(['restore', set, '--config', freshConfig], { env });
    assert.equal(restored.status, 0, restored.stderr);
    assert.match(restored.stdout, new RegExp(`^Data folder: ${escape(path.join(fresh, 'data'))} \\(configuration: ${escape(freshConfig)} \\(--config\\)\\)\nNo data in ${escape(path.join(fresh, 'data'))} yet: the backup is restored into it\\.\nRestored `));
    assert.ok(fs.existsSync(path.join(fresh, 'data', 'agent.db')));

    // Over a site's data: the folder named first, as for every command that changes it.
    const over = cli(['restore', set, '--config', config]);
    assert.equal(over.status, 0, over.stderr);
    assert.match(over.stdout, new RegExp(`^Data folder: ${escape(path.join(dir, 'data'))} \\(configuration: ${escape(config)} \\(--config\\)\\)\nRestored `));
  });

  it('shows times in local time with the offset; lookup of an unknown PLU and tunnel status without a tunnel exit 1 (point 12)', () => {
    const { config } = site();
    cli(['import', sample('01'), '--config', config]);
    // A zone without summer time and with a half-hour offset: a UTC time printed as local would show.
    const env = { TZ: 'Asia/Kolkata' };
    const json = JSON.parse(cli(['status', '--json', '--config', config], { env }).stdout) as { locations: { lastAppliedAt: string }[] };
    const iso = json.locations[0]!.lastAppliedAt;
    assert.match(iso, /Z$/, '--json keeps ISO UTC');
    const local = new Date(Date.parse(iso) + 330 * 60_000).toISOString().replace('T', ' ').slice(0, 19);
    const text = cli(['status', '--config', config], { env });
    assert.ok(text.stdout.includes(`last applied ChangeSequence 1041 at ${local} +05:30`), text.stdout);
    assert.match(cli(['deliveries', '--config', config], { env }).stdout, /^Data folder: .*\n\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+05:30 {2}3021 {2}1041/);

    const unknown = cli(['lookup', '--plu', '999999', '--config', config]);
    assert.equal(unknown.status, 1);
    assert.match(unknown.stderr, /no item with PLU 999999/);
    assert.equal(cli(['lookup', '--plu', '1001', '--config', config]).status, 0);

    const tunnel = cli(['tunnel', 'status', '--config', config]);
    assert.equal(tunnel.status, 1);
    assert.match(tunnel.stderr, /no tunnel is configured .*\[tunnel_not_configured\]/);
  });
});

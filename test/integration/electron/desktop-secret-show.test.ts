import assert from 'node:assert/strict';
import { spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import type { ChildMessage } from '../../../src/electron/channel';
import { desktopSecretStore, resolveDesktopSecrets } from '../../../src/electron/safe-storage-secrets';
import { Supervisor } from '../../../src/electron/supervisor';
import { silentLogger } from '../../../src/log';
import { controlEndpoint } from '../../../src/ops/control-protocol';
import { safeStorageSecretsFile } from '../../../src/ops/desktop-secrets-file';
import { ensureWebhookToken } from '../../../src/ops/webhook-token';
import { webhookTokenFromDesktop } from '../../../src/cli/desktop-secret';
import { runCli, type CliResult } from '../../helpers/child-agent';
import { FakeSafeStorage } from '../../helpers/fake-safe-storage';
import { forkAgentProcess } from '../../helpers/fork-child';
import { reachableByNobody } from '../../helpers/second-user';
import { needs } from '../../helpers/system';

/**
 * Issue 24, item 2: `pos-sync-agent secrets show webhook.bearerToken` where the desktop app keeps the
 * token encrypted (secrets.safe.json, which only the app's main process can decrypt). The desktop's
 * agent process runs for real (child_process.fork standing in for Electron's utilityProcess, as in
 * agent-process.test.ts), given its secrets by this test playing main, with a stand-in for
 * safeStorage; the CLI is the real command, a separate process, over the real control socket.
 */

const cli = (config: string, ...args: string[]): CliResult => runCli(config, args, { env: { POS_SYNC_SECRET_WEBHOOK_BEARERTOKEN: '' } });

function shown(dataDir: string): { actor: string; details: string }[] {
  const db = new Database(path.join(dataDir, 'agent.db'), { readonly: true });
  try {
    return db.prepare("SELECT actor, details FROM audit_log WHERE action = 'secret-shown' ORDER BY id").all() as { actor: string; details: string }[];
  } finally {
    db.close();
  }
}

const output = { text: '' };
const children: ChildProcess[] = [];
let dir: string;
let dataDir: string;
let configFile: string;
let supervisor: Supervisor;
let token: string;
let readies = 0;

async function waitFor(what: string, until: () => boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!until()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; agent output:\n${output.text}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'desktop-secret-show-'));
  dataDir = path.join(dir, 'data');
  configFile = path.join(dir, 'config.json');
  fs.writeFileSync(configFile, JSON.stringify({ dataDir, webhook: { port: 0 }, admin: { port: 0 }, backup: { enabled: false } }));
  const options = { file: configFile, env: {} };
  const store = desktopSecretStore(options, new FakeSafeStorage(), {});
  // What the desktop's main process does at its first start: make the token, keep it encrypted.
  assert.equal(ensureWebhookToken(options, store).kind, 'generated');
  token = store.get('webhook.bearerToken')!;
  assert.ok(!fs.readFileSync(safeStorageSecretsFile(dataDir), 'utf8').includes(token), 'the file holds it encrypted');
  supervisor = new Supervisor({
    spawn: () => forkAgentProcess(output, children),
    log: silentLogger,
    startMessage: () => {
      const { secrets, sources } = resolveDesktopSecrets(options, store);
      return { type: 'start', configFile, secrets, sources };
    },
  });
  supervisor.on('message', (m: ChildMessage) => void (m.type === 'ready' && readies++));
  supervisor.start();
  await waitFor('the desktop agent process to be ready', () => readies === 1);
});

after(async () => {
  await supervisor.stop();
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('secrets show, when the desktop app keeps the webhook token', { timeout: 180_000 }, () => {
  it('asks the running app\'s agent over the control socket, which records it in the audit log', () => {
    assert.equal(fs.existsSync(path.join(dataDir, 'secrets.json')), false, 'there is no plain secrets file to read');
    const r = cli(configFile, 'secrets', 'show', 'webhook.bearerToken');
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `${token}\n`);
    const json = cli(configFile, 'secrets', 'show', 'webhook.bearerToken', '--json');
    assert.deepEqual(JSON.parse(json.stdout), { name: 'webhook.bearerToken', value: token });
    const rows = shown(dataDir);
    assert.equal(rows.length, 2);
    for (const row of rows) {
      assert.match(row.actor, / \(command line\)$/);
      assert.deepEqual(JSON.parse(row.details), { name: 'webhook.bearerToken' });
    }
    const log = fs.readFileSync(path.join(dataDir, 'logs', 'agent.log'), 'utf8');
    assert.match(log, /command line: webhook\.bearerToken shown to \S+ \(command line\)/);
    assert.ok(!log.includes(token), 'the token is not in the agent\'s log');
    const audit = cli(configFile, 'audit', '--limit', '1');
    assert.match(audit.stdout, /\(command line\): Showed the webhook token \(to give head office\)\./);
  });

  it('`secrets list` says the desktop app keeps it, never the value', () => {
    const r = cli(configFile, 'secrets', 'list');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /webhook\.bearerToken\s+set \(kept by the desktop app in .*secrets\.safe\.json, encrypted with this user's keyring\)/);
    assert.match(r.stdout, /tunnel\.token\s+not set/);
    assert.ok(!r.stdout.includes(token));
  });

  it('another account on the PC cannot ask for it: the control socket refuses nobody', needs('root (a second OS user)'), () => {
    const before = shown(dataDir).length;
    const endpoint = controlEndpoint(dataDir);
    assert.equal(fs.statSync(endpoint).mode & 0o777, 0o600, 'the socket is owner-only');
    assert.equal(fs.statSync(dataDir).mode & 0o077, 0, 'in an owner-only data folder');
    const probe = `
      const req = require('http').request({ socketPath: ${JSON.stringify(endpoint)}, path: '/webhook-token/reveal', method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
        let body = ''; res.on('data', (c) => (body += c)); res.on('end', () => { console.log('answered ' + res.statusCode + ' ' + body); process.exit(0); });
      });
      req.on('error', (e) => { console.log(e.code); process.exit(1); });
      req.end('{}');`;
    const r = spawnSync('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', reachableByNobody(process.execPath), '-e', probe], { encoding: 'utf8', cwd: '/tmp', timeout: 30_000 });
    assert.equal(r.status, 1, `nobody was answered: ${r.stdout}${r.stderr}`);
    assert.match(r.stdout, /EACCES/);
    assert.ok(!r.stdout.includes(token));
    assert.equal(shown(dataDir).length, before);
  });

  it('without the app running it says in one line where the token is kept and how to see it', async () => {
    await supervisor.stop();
    assert.equal(fs.existsSync(controlEndpoint(dataDir)), false);
    const r = cli(configFile, 'secrets', 'show', 'webhook.bearerToken');
    assert.equal(r.status, 1);
    assert.equal(r.stdout, '');
    // The data folder it looked in, as every command names it first; then the error, in one line.
    const lines = r.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 2, r.stderr);
    assert.equal(lines[0], `Data folder: ${dataDir} (no agent is running from it) (configuration: ${configFile} (--config)).`);
    assert.match(
      r.stderr,
      new RegExp(
        `\nwebhook\\.bearerToken is kept by the desktop app in ${safeStorageSecretsFile(dataDir).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(encrypted with this user's keyring\\), which only the running app can read: ` +
          'start POS Sync Agent and, in its window, open Settings → Token → Show \\(or Copy\\); or run this command again while the app runs\\. \\[secret_in_desktop_store\\]\n$',
      ),
    );
    assert.ok(!r.stderr.includes(token));
    // The same words on the site's Windows PC name its account.
    await assert.rejects(webhookTokenFromDesktop(dataDir, 'tester', 'win32'), /\(encrypted for this Windows account\)/);
  });
});

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { resolveSiteConfig, type SiteConfig } from '../../../src/config/site';
import { askService, desktopMode, probeService, serviceLoginLink, type ServiceEndpoints } from '../../../src/electron/service-client';
import { freePort, runCli, startChildAgent, writeConfig, type ChildAgent, type CliResult } from '../../helpers/child-agent';
import { samplePath, tempDir } from '../../helpers/fixtures';
import { reachableByNobody } from '../../helpers/second-user';
import { needs } from '../../helpers/system';

/**
 * Client mode (issue 25): the desktop app of a PC whose agent runs as a service asks that agent, over
 * its control channel, for its severity and a login link, and `admin-url` does the same. Real `serve`
 * processes on scratch data folders, the real socket, real CLI processes. The login link in Chromium:
 * test/browser/service-client.test.ts.
 */

const LINUX = { platform: 'linux' as const, home: '/home/manager', cwd: '/', env: {} };
const cli = (config: string, ...args: string[]): CliResult => runCli(config, args);
const sample = samplePath;

function auditRows(dataDir: string): { actor: string; action: string; details: string }[] {
  const db = new Database(path.join(dataDir, 'agent.db'), { readonly: true });
  try {
    return db.prepare('SELECT actor, action, details FROM audit_log ORDER BY id').all() as { actor: string; action: string; details: string }[];
  } finally {
    db.close();
  }
}

/**
 * A scratch site whose config file plays the machine-wide one (writing /etc here would touch the
 * machine). The webhook keeps its token (no exposure alert): updates arrive through `import`.
 */
async function scratchService(admin: Record<string, unknown> = {}): Promise<{ dataDir: string; config: string; service: ServiceEndpoints }> {
  const dir = tempDir();
  const dataDir = path.join(dir, 'data');
  const adminPort = await freePort();
  const webhookPort = await freePort();
  const config = writeConfig(dir, { dataDir, admin: { port: adminPort, ...admin }, webhook: { port: webhookPort, allowUnauthenticated: false }, backup: { enabled: false }, sync: { baselineSettleSeconds: 0, pollIntervalMs: 200 } });
  const site: SiteConfig = { file: config, source: 'machine', machine: true, defaultDataDir: dataDir };
  const mode = desktopMode(site, JSON.parse(fs.readFileSync(config, 'utf8')) as Record<string, unknown>, dataDir);
  assert.equal(mode.kind, 'client');
  if (mode.kind !== 'client') throw new Error('not a client');
  return { dataDir, config, service: mode.service };
}

describe('client mode: the decision (service-client.ts)', () => {
  it('is a client exactly when the site is the machine-wide configuration, and finds the service\'s channel', () => {
    const machine = resolveSiteConfig({ ...LINUX, exists: (f) => f === '/etc/pos-sync-agent/config.json' });
    const mode = desktopMode(machine, { admin: { port: 9780 }, webhook: { port: 9787 } }, '/var/lib/pos-sync-agent', 'linux');
    assert.deepEqual(mode, {
      kind: 'client',
      service: {
        configFile: '/etc/pos-sync-agent/config.json',
        adminUrl: 'http://127.0.0.1:9780/',
        healthUrl: 'http://127.0.0.1:9787/healthz',
        control: '/var/lib/pos-sync-agent/agent.sock',
      },
    });
    // Windows: the file in the service's data folder that names its pipe (control-protocol.ts).
    const win = desktopMode(machine, {}, 'C:\\ProgramData\\POS Sync Agent\\data', 'win32');
    assert.equal(win.kind === 'client' && win.service.control, 'C:\\ProgramData\\POS Sync Agent\\data\\control-pipe');
    // Defaults when the file sets no ports; a receiver on all interfaces is reached on loopback.
    const defaults = desktopMode(machine, { webhook: { host: '0.0.0.0' } }, '/var/lib/pos-sync-agent', 'linux');
    assert.equal(defaults.kind === 'client' && defaults.service.adminUrl, 'http://127.0.0.1:8780/');
    assert.equal(defaults.kind === 'client' && defaults.service.healthUrl, 'http://127.0.0.1:8787/healthz');
    for (const own of [
      resolveSiteConfig({ ...LINUX, exists: (f) => f.startsWith('/home/') }),
      resolveSiteConfig({ ...LINUX, exists: () => false }),
      resolveSiteConfig({ ...LINUX, option: '/srv/site.json', exists: () => true }),
    ]) {
      assert.deepEqual(desktopMode(own, { admin: { port: 1 } }, '/x'), { kind: 'own' }, own.source);
    }
  });
});

describe('client mode against a real serve', () => {
  let agent: ChildAgent | null = null;
  after(async () => agent?.kill('SIGTERM'));

  it('shows the service\'s severity from its channel: the one model, paused-with-held red, and unreachable once it stops', async () => {
    const { config, service } = await scratchService();
    assert.deepEqual(await askService(service), { kind: 'no-channel', running: false }, 'nothing runs yet');
    agent = await startChildAgent(config);
    try {

    let view = await askService(service);
    assert.equal(view.kind, 'status');
    if (view.kind !== 'status') return;
    assert.equal(view.summary.light, 'amber');
    assert.match(view.summary.headline, /No updates received yet/);
    // The window's own address, drawn at the service's start, at the configured port; the configured
    // address (service.adminUrl) is the front door, which serves no window.
    assert.match(view.summary.adminUrl ?? '', /^http:\/\/127\.\d{1,3}\.\d{1,3}\.\d{1,3}:\d+\/$/);
    assert.equal(new URL(view.summary.adminUrl!).port, new URL(service.adminUrl).port);
    assert.notEqual(view.summary.adminUrl, service.adminUrl);

    assert.equal(cli(config, 'import', sample('01')).status, 0);
    view = await askService(service);
    assert.equal(view.kind === 'status' && view.summary.light, 'green');
    assert.equal(view.kind === 'status' && view.summary.headline, 'The till is up to date.');

    // Paused with nothing held: amber; an update held while paused: red (domain/severity.ts).
    assert.equal(cli(config, 'pause').status, 0);
    view = await askService(service);
    assert.deepEqual(view.kind === 'status' && [view.summary.light, view.summary.label, view.summary.paused], ['amber', 'Paused', true]);
    assert.match(view.kind === 'status' ? (view.summary.pausedBy ?? '') : '', /\(command line\)$/);
    assert.equal(cli(config, 'import', sample('02')).status, 0);
    view = await askService(service);
    assert.deepEqual(view.kind === 'status' && [view.summary.light, view.summary.label], ['red', 'Paused']);
    assert.equal(view.kind === 'status' && view.summary.reasons[0]?.id, 'paused');
    assert.match(view.kind === 'status' ? view.summary.headline : '', /1 update is held and not on the till/);

    assert.equal(cli(config, 'resume').status, 0);
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      view = await askService(service);
      if (view.kind === 'status' && view.summary.light === 'green') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(view.kind === 'status' && view.summary.light, 'green', 'resumed: the held update is applied');

    } finally {
      await agent.kill('SIGTERM');
      agent = null;
    }
    assert.deepEqual(await askService(service), { kind: 'no-channel', running: false });
    assert.equal(await probeService(service), 'not-answering');
  });

  it('admin-url takes its link from the running agent (audited), even on a port chosen at start-up', async () => {
    const { dataDir, config, service } = await scratchService({ port: 0 });
    agent = await startChildAgent(config);
    try {
    const r = cli(config, 'admin-url', '--json');
    assert.equal(r.status, 0, r.stderr);
    const link = JSON.parse(r.stdout) as { url: string; rotated: boolean };
    const summary = await askService(service);
    assert.equal(summary.kind, 'status');
    const adminUrl = summary.kind === 'status' ? summary.summary.adminUrl! : '';
    assert.ok(link.url.startsWith(`${adminUrl}?login=`), `${link.url} is on the port the agent listens on (${adminUrl})`);
    // The code works once: traded for a session, then refused.
    const code = new URL(link.url).searchParams.get('login');
    const login = (): Promise<Response> => fetch(new URL('/api/login', adminUrl), { method: 'POST', headers: { 'content-type': 'application/json', origin: new URL(adminUrl).origin }, body: JSON.stringify({ code }) });
    assert.equal((await login()).status, 200);
    assert.equal((await login()).status, 401);

    // The desktop app asks the same way; both are in the audit log with who asked and how.
    const desktop = await serviceLoginLink(service, new URL(adminUrl).origin, { actor: 'maria@till-pc' });
    assert.equal(desktop.kind, 'link');
    const links = auditRows(dataDir).filter((a) => a.action === 'login-link');
    assert.equal(links.length, 2);
    assert.match(links[0]!.actor, /\(command line\)$/);
    assert.equal(links[1]!.actor, 'maria@till-pc (desktop app)');
    assert.equal((JSON.parse(links[1]!.details) as { rotated: boolean }).rotated, false);
    assert.ok(!agent.output().includes(code!), 'the link is never logged');
    } finally {
      await agent.kill('SIGTERM');
      agent = null;
    }
    // With no agent there is no window to link to: refused, naming why.
    const none = cli(config, 'admin-url');
    assert.notEqual(none.status, 0);
    assert.doesNotMatch(none.stdout, /login=/);
    assert.match(none.stderr, /no agent is running on .*, so there is no status window to log in to/);
  });

  it('a login link for another address than the service\'s window is not loaded', async () => {
    const { config, service } = await scratchService();
    agent = await startChildAgent(config);
    try {
      const other = await serviceLoginLink(service, 'http://127.0.0.1:1');
      assert.equal(other.kind, 'unavailable');
    } finally {
      await agent.kill('SIGTERM');
      agent = null;
    }
  });

  it('another OS account gets neither the severity nor a login link', needs('root (a second OS user)'), async (t) => {
    if (process.getuid?.() !== 0) assert.fail('this test needs root to switch to the nobody user (setpriv); run the suite as CI does');
    const node = reachableByNobody(process.execPath);
    const { dataDir, config, service } = await scratchService();
    agent = await startChildAgent(config);
    try {
      assert.equal(fs.statSync(service.control).mode & 0o777, 0o600, 'the socket is owner-only');
      // Both routes, asked as nobody over the real socket: the operating system refuses the connection.
      const probe = `
        const http = require('node:http');
        const ask = (method, route, body) => new Promise((resolve) => {
          const r = http.request({ socketPath: ${JSON.stringify(service.control)}, path: route, method, headers: { 'content-type': 'application/json' } }, (res) => { let t = ''; res.on('data', (c) => (t += c)); res.on('end', () => resolve(res.statusCode + ' ' + t)); });
          r.on('error', (e) => resolve(e.code));
          r.end(body);
        });
        (async () => {
          console.log('summary ' + (await ask('GET', '/summary')));
          console.log('login-link ' + (await ask('POST', '/login-link', JSON.stringify({ via: 'desktop app' }))));
        })();`;
      const r = spawnSync('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', node, '-e', probe], { encoding: 'utf8', cwd: '/tmp', timeout: 30_000 });
      t.diagnostic(`as nobody: ${r.stdout.trim().replace(/\n/g, '; ')}`);
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual(r.stdout.trim().split('\n'), ['summary EACCES', 'login-link EACCES']);
      assert.equal(auditRows(dataDir).filter((a) => a.action === 'login-link').length, 0, 'no link was handed out');
      // The same refusal is what the client reads as "not allowed" (service-client.ts isRefusal), and as
      // root (the service's owner here) the same request answers.
      assert.equal((await askService(service)).kind, 'status');
    } finally {
      await agent.kill('SIGTERM');
      agent = null;
    }
  });
});

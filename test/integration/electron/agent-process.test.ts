import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ChildMessage } from '../../../src/electron/channel';
import { desktopSecretStore, resolveDesktopSecrets, secretSources } from '../../../src/electron/safe-storage-secrets';
import { Supervisor } from '../../../src/electron/supervisor';
import { tokenFilePath } from '../../../src/admin/token';
import { silentLogger } from '../../../src/log';
import { FakeSafeStorage } from '../../helpers/fake-safe-storage';
import { forkAgentProcess } from '../../helpers/fork-child';

/**
 * The desktop shell's supervision loop end to end, with Node's child_process.fork standing in for
 * Electron's utilityProcess: a real agent (database, receiver, status window) on port 0 in a temp data
 * folder, killed and restarted; a secret set through the status window's API reaches the encrypted
 * store through the "main process" (this test) and the restarted agent uses it.
 */

type Ready = Extract<ChildMessage, { type: 'ready' }>;

const output = { text: '' };
const children: ChildProcess[] = [];
let dir: string;
let configFile: string;
let supervisor: Supervisor;
const safeStorage = new FakeSafeStorage();
const readies: Ready[] = [];
const loginLinks: string[] = [];
const waiters: { until: () => boolean; resolve: () => void }[] = [];

function poke(): void {
  for (const w of waiters.splice(0)) {
    if (w.until()) w.resolve();
    else waiters.push(w);
  }
}

function waitFor(what: string, until: () => boolean, ms = 60_000): Promise<void> {
  if (until()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}; agent output:\n${output.text}`)), ms);
    waiters.push({ until, resolve: () => (clearTimeout(timer), resolve()) });
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function adminApi(ready: Ready, method: string, route: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  // The login link carries a one-time code, not the token: a script reads the token file, as the CLI does.
  const token = fs.readFileSync(tokenFilePath(path.join(dir, 'data'), null), 'utf8').trim();
  const session = (await (await fetch(`${ready.adminOrigin}/api/session`, { headers: { authorization: `Bearer ${token}` } })).json()) as { csrfToken: string; csrfHeader: string };
  const res = await fetch(`${ready.adminOrigin}${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, [session.csrfHeader]: session.csrfToken, 'content-type': 'application/json', origin: ready.adminOrigin },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: await res.json() };
}

/** What the window's script does with a login link: trade its one-time code for a session (200), or be refused (401). */
async function login(link: string): Promise<number> {
  const url = new URL(link);
  const res = await fetch(`${url.origin}/api/login`, { method: 'POST', headers: { 'content-type': 'application/json', origin: url.origin }, body: JSON.stringify({ code: url.searchParams.get('login') }) });
  return res.status;
}

const events: string[] = [];

before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-process-'));
  configFile = path.join(dir, 'config.json');
  fs.writeFileSync(configFile, JSON.stringify({ dataDir: path.join(dir, 'data'), webhook: { port: 0 }, admin: { port: 0 }, backup: { enabled: false } }));
  const store = desktopSecretStore({ file: configFile }, safeStorage, {});
  supervisor = new Supervisor({
    spawn: () => forkAgentProcess(output, children),
    log: silentLogger,
    policy: { baseDelayMs: 300, maxDelayMs: 2_000, maxFailures: 5, healthyAfterMs: 60_000 },
    startMessage: () => {
      const { secrets, sources } = resolveDesktopSecrets({ file: configFile, env: {} }, store);
      return { type: 'start', configFile, secrets, sources };
    },
  });
  // This test plays the main process: it answers secret-set with the (fake) safeStorage store.
  supervisor.on('message', (m) => {
    if (m.type === 'ready') readies.push(m);
    if (m.type === 'login-link') loginLinks.push(m.url);
    if (m.type === 'secret-set') {
      if (m.value === null) store.delete(m.name);
      else store.set(m.name, m.value);
      supervisor.send({ type: 'secret-result', requestId: m.requestId, sources: secretSources(store), error: null });
    }
    events.push(m.type);
    poke();
  });
  supervisor.on('exit', ({ code }) => (events.push(`exit:${code}`), poke()));
  supervisor.on('restart-scheduled', ({ delayMs }) => (events.push(`restart-in:${delayMs}`), poke()));
  supervisor.on('gave-up', ({ reason }) => (events.push(`gave-up:${reason}`), poke()));
  supervisor.on('stopped', () => (events.push('stopped'), poke()));
});

after(async () => {
  await supervisor.stop();
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('the desktop agent process under its supervisor (child_process.fork for utilityProcess)', () => {
  it('starts a real agent that reports ready with a status window address that answers', async () => {
    supervisor.start();
    await waitFor('ready', () => readies.length === 1);
    const ready = readies[0]!;
    assert.match(ready.adminLoginUrl, /^http:\/\/127\.\d{1,3}\.\d{1,3}\.\d{1,3}:\d+\/\?login=/);
    assert.equal(await login(ready.adminLoginUrl), 200, 'the login link\'s code is traded for a session');
    const api = await adminApi(ready, 'GET', '/api/secrets');
    assert.equal(api.status, 200);
    assert.equal(supervisor.state, 'running');
    await waitFor('first status', () => events.includes('status'));
  });

  it('a window opened later asks for a fresh one-time login link (the one in ready is spent)', async () => {
    const ready = readies.at(-1)!;
    assert.equal(await login(ready.adminLoginUrl), 401, 'a login link works once');
    supervisor.send({ type: 'login-link-request' });
    await waitFor('a login link', () => loginLinks.length === 1);
    assert.equal(new URL(loginLinks[0]!).origin, ready.adminOrigin);
    assert.equal(await login(loginLinks[0]!), 200);
  });

  it('a secret set in the window is stored encrypted by main, and the restarted agent uses it', async () => {
    const ready = readies.at(-1)!;
    assert.equal((await postWebhook('{}', null)).status === 401, false, 'no token is required before the secret is set');
    const put = await adminApi(ready, 'PUT', '/api/secrets/webhook.bearerToken', { value: 'window-set-token-12345' });
    assert.equal(put.status, 200, JSON.stringify(put.json));
    const listed = put.json as { secrets: { name: string; source: string | null }[]; restartNeeded: boolean };
    assert.equal(listed.secrets.find((s) => s.name === 'webhook.bearerToken')?.source, 'store');
    assert.equal(listed.restartNeeded, true);
    assert.doesNotMatch(JSON.stringify(listed), /window-set-token/, 'the API never returns a value');
    const stored = fs.readFileSync(path.join(dir, 'data', 'secrets.safe.json'), 'utf8');
    assert.doesNotMatch(stored, /window-set-token/);
    assert.equal(fs.existsSync(path.join(dir, 'data', 'secrets.json')), false, 'nothing plain is written');
    const firstPid = supervisor.pid!;
    const restart = await adminApi(ready, 'POST', '/api/secrets/restart');
    assert.equal(restart.status, 202);
    await waitFor('ready after the asked-for restart', () => readies.length === 2);
    assert.notEqual(supervisor.pid, firstPid);
    assert.ok(!events.some((e) => e.startsWith('restart-in:')), 'an asked-for restart is not a crash: no back-off');
    const hook = await postWebhook('{}', null);
    assert.equal(hook.status, 401, 'the new agent requires the token set in the window');
    const authorised = await postWebhook('{}', 'window-set-token-12345');
    assert.notEqual(authorised.status, 401);
  });

  it('a SIGKILLed agent is restarted after the back-off delay, and the new one answers', async () => {
    const pid = supervisor.pid!;
    const before = readies.length;
    process.kill(pid, 'SIGKILL');
    await waitFor('restart scheduled', () => events.includes('restart-in:300'));
    assert.equal(supervisor.state, 'waiting');
    assert.equal(alive(pid), false);
    await waitFor('ready after the crash', () => readies.length === before + 1);
    assert.notEqual(supervisor.pid, pid);
    assert.equal(await login(readies.at(-1)!.adminLoginUrl), 200);
  });

  it('two kills in a row never leave two agents running', async () => {
    const first = supervisor.pid!;
    const before = readies.length;
    process.kill(first, 'SIGKILL');
    await waitFor('second restart scheduled', () => events.filter((e) => e.startsWith('restart-in:')).length === 2);
    // A second start asked for while waiting is a no-op: still one child.
    supervisor.start();
    supervisor.start();
    await waitFor('ready after the second crash', () => readies.length === before + 1);
    const running = children.filter((c) => c.exitCode === null && c.signalCode === null);
    assert.equal(running.length, 1, `running agent processes: ${running.map((c) => c.pid).join(', ')}`);
    assert.ok(events.includes('restart-in:600'), 'the second death in a row waits twice as long');
  });

  it('stopping stops the agent cleanly within 10 s and nothing restarts it', async () => {
    const pid = supervisor.pid!;
    const started = Date.now();
    await supervisor.stop();
    // The bound the desktop app promises on quit (issue 11), not a speed measurement.
    assert.ok(Date.now() - started < 10_000);
    assert.equal(alive(pid), false);
    assert.equal(supervisor.state, 'stopped');
    assert.ok(events.includes('exit:0'), `a clean exit: ${events.join(' ')}`);
    supervisor.start();
    assert.equal(supervisor.state, 'stopped', 'no start after a stop');
    assert.equal(children.filter((c) => c.exitCode === null && c.signalCode === null).length, 0);
  });
});

async function postWebhook(body: string, token: string | null): Promise<Response> {
  const ready = readies.at(-1)!;
  const settings = (await adminApi(ready, 'GET', '/api/settings')).json as { localWebhookUrl: string };
  return fetch(settings.localWebhookUrl, { method: 'POST', body, headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) } });
}

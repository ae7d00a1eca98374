import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { spawnAgent, waitFor } from '../../src/dev/child-agent';
import { silentLogger } from '../../src/log';
import { isInstanceLocked } from '../../src/ops/instance';
import { pidFile } from '../../src/ops/paths';
import { looseWebhookArgs } from '../../src/ops/tunnel';
import { openDatabase, storeFilePath } from '../../src/store/database';
import { Inbox } from '../../src/store/inbox';
import { InboxServer } from '../../src/store/inbox-server';
import { startWebhookServer } from '../../src/webhook/server';
import { CLI, startChildAgent, writeConfig } from '../helpers/child-agent';
import { tempDir, testConfig } from '../helpers/fixtures';

/**
 * The webhook listens on 127.0.0.1 (webhook.host's default). Another account on the same PC could
 * listen on [::1] at the same port, and a client of `localhost:PORT` that tries ::1 first (Chromium;
 * ngrok and cloudflared, Go programs, on a stock Debian /etc/hosts) would then hand it head office's
 * deliveries and their bearer token. The webhook holds [::1] at its port too (its "twin"), and start-up
 * refuses a port whose twin another program holds, for the webhook and the status window. Real
 * sockets on loopback; skipped only where the machine has no ::1 at all.
 */

const TOKEN = 'ipv6-twin-head-office-token-0123456789';
const PATH = '/webhooks/menu-cycles';

/** Whether this machine has ::1 (IPv6 turned off: EADDRNOTAVAIL or EAFNOSUPPORT), found by binding ::1 port 0. */
async function ipv6LoopbackProblem(): Promise<string | null> {
  const server = net.createServer();
  return new Promise((resolve) => {
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    server.listen(0, '::1', () => server.close(() => resolve(null)));
  });
}

/** False (and the test skipped, saying why) where this machine has no ::1 at all. */
async function hasIpv6Loopback(t: TestContext): Promise<boolean> {
  const problem = await ipv6LoopbackProblem();
  if (problem === null) return true;
  t.skip(`this machine has no IPv6 loopback address: binding [::1]:0 failed with ${problem}`);
  return false;
}

/** Listens on host:port as another program (another account's) would; rejects with its error. */
function occupy(port: number, host: string): Promise<net.Server> {
  const server = net.createServer((socket) => socket.destroy());
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host, exclusive: true }, () => resolve(server));
  });
}

/** The error code of listening on host:port now, or null: it could (and was let go again). */
async function bindError(port: number, host: string): Promise<string | null> {
  try {
    const server = await occupy(port, host);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return null;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? String(err);
  }
}

/** A port free on both 127.0.0.1 and ::1, below the ephemeral ranges (as freePort, src/dev/child-agent.ts). */
async function freeOnBoth(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if ((await bindError(port, '127.0.0.1')) === null && (await bindError(port, '::1')) === null) return port;
  }
  throw new Error('no port free on both 127.0.0.1 and ::1');
}

/** Whether nothing accepts connections on host:port. */
function refusesConnections(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, host);
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

/** A request over a socket to exactly host:port (never a name), with its answer. */
function request(host: string, port: number, method: string, urlPath: string, body?: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host, port, method, path: urlPath, family: net.isIPv6(host) ? 6 : 4, headers: body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.once('error', reject);
    req.end(body);
  });
}

/** The webhook's answer to an unauthenticated POST on host:port: its 401 JSON (src/webhook/auth.ts). */
async function assertAgentsRefusal(host: string, port: number): Promise<void> {
  const res = await request(host, port, 'POST', PATH, '{}');
  assert.equal(res.status, 401, `${host}:${port} answered ${res.status}: ${res.text}`);
  assert.match(String(res.headers['content-type']), /application\/json/);
  const json = JSON.parse(res.text) as { error?: { id?: string } };
  assert.equal(typeof json.error?.id, 'string', res.text);
}

function serve(config: string): { status: number | null; output: string } {
  const r = spawnSync(process.execPath, [CLI, 'serve', '--config', config], { encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

function assertNothingLeft(dataDir: string): void {
  assert.equal(fs.existsSync(pidFile(dataDir)), false, 'no pid file is left');
  assert.equal(isInstanceLocked(dataDir), false, 'the data folder is not locked');
}

describe('the loopback twin: another program on [::1] at the agent\'s ports (spawned serve)', () => {
  it('a program on [::1] at webhook.port before start: serve exits 3 naming webhook.port, and 127.0.0.1 is not left listening', async (t) => {
    if (!(await hasIpv6Loopback(t))) return;
    const dir = tempDir('ipv6-twin-');
    const webhookPort = await freeOnBoth();
    const other = await occupy(webhookPort, '::1');
    try {
      const config = writeConfig(dir, { dataDir: path.join(dir, 'data'), webhook: { port: webhookPort, bearerToken: TOKEN }, admin: { port: 0 } });
      const r = serve(config);
      assert.equal(r.status, 3, r.output);
      assert.match(r.output, new RegExp(`webhook\\.port: port ${webhookPort} on ::1 .*is already in use .*choose a free webhook\\.port`));
      assert.doesNotMatch(r.output, /Receiving menu cycle updates|at .*\.ts:\d+/, 'never "receiving", no stack');
      assert.ok(await refusesConnections(webhookPort, '127.0.0.1'), 'the webhook never listened on 127.0.0.1');
      assertNothingLeft(path.join(dir, 'data'));
    } finally {
      other.close();
    }
  });

  it('a program on [::1] at admin.port before start: serve exits 3 naming admin.port', async (t) => {
    if (!(await hasIpv6Loopback(t))) return;
    const dir = tempDir('ipv6-twin-');
    const [webhookPort, adminPort] = [await freeOnBoth(), await freeOnBoth()];
    const other = await occupy(adminPort, '::1');
    try {
      const config = writeConfig(dir, { dataDir: path.join(dir, 'data'), webhook: { port: webhookPort, bearerToken: TOKEN }, admin: { port: adminPort } });
      const r = serve(config);
      assert.equal(r.status, 3, r.output);
      assert.match(r.output, new RegExp(`admin\\.port: port ${adminPort} on ::1 .*is already in use .*choose a free admin\\.port`));
      assert.doesNotMatch(r.output, /Receiving menu cycle updates/);
      assert.ok(await refusesConnections(webhookPort, '127.0.0.1'), 'the webhook is not left listening');
      assert.ok(await refusesConnections(webhookPort, '::1'), 'nor its twin');
      assertNothingLeft(path.join(dir, 'data'));
    } finally {
      other.close();
    }
  });

  it('with the agent running, [::1] at webhook.port is the agent\'s: its 401 JSON to an unauthenticated POST, and nobody else can listen there', async (t) => {
    if (!(await hasIpv6Loopback(t))) return;
    const dir = tempDir('ipv6-twin-');
    const webhookPort = await freeOnBoth();
    const config = writeConfig(dir, { dataDir: path.join(dir, 'data'), webhook: { port: webhookPort, bearerToken: TOKEN }, admin: { port: 0 } });
    const agent = await startChildAgent(config);
    try {
      assert.equal(new URL(agent.url).hostname, '127.0.0.1');
      await assertAgentsRefusal('::1', webhookPort);
      await assertAgentsRefusal('127.0.0.1', webhookPort);
      assert.equal((await request('::1', webhookPort, 'GET', '/healthz')).text, '{"status":"ok"}');
      assert.equal(await bindError(webhookPort, '::1'), 'EADDRINUSE', 'another program cannot listen on [::1] at the webhook\'s port');
    } finally {
      await agent.kill('SIGTERM');
    }
    assert.ok(await refusesConnections(webhookPort, '::1'), 'the twin is let go at stop');
  });

  it('the webhook thread started again after it ended holds the twin again', { timeout: 120_000 }, async (t) => {
    if (!(await hasIpv6Loopback(t))) return;
    const dir = tempDir('ipv6-twin-restart-');
    const webhookPort = await freeOnBoth();
    // Each new webhook thread ends once it has written a large body's file (src/crash-points.ts).
    const config = writeConfig(dir, { dataDir: path.join(dir, 'data'), webhook: { port: webhookPort, bearerToken: TOKEN }, admin: { enabled: false } });
    const agent = await spawnAgent(config, { built: true, env: { POS_SYNC_TEST_THREAD_EXIT_AT: 'body-file-written:1', CHILD_AGENT_LOG: '1' } });
    try {
      const large = JSON.stringify({ pad: 'x'.repeat(2 * 1024 * 1024) });
      const answered = await fetch(agent.url, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: large }).then(
        (r) => r.status,
        () => null,
      );
      assert.equal(answered, null, 'the thread ended during the receipt');
      await waitFor('the webhook thread listening again', () => agent.stderr().includes('webhook receiver listening again'), 20_000, 50);
      await assertAgentsRefusal('::1', webhookPort);
      assert.equal(await bindError(webhookPort, '::1'), 'EADDRINUSE', 'the new thread holds [::1] at the port');
    } finally {
      await agent.kill();
    }
  });
});

describe('the loopback twin of startWebhookServer (the webhook thread\'s listener)', () => {
  let inbox: InboxServer;
  let dataDir: string;
  before(() => {
    dataDir = path.join(tempDir('ipv6-twin-server-'), 'data');
    fs.mkdirSync(dataDir, { recursive: true });
    const db = openDatabase(storeFilePath(dataDir, 'agent'), { kind: 'agent' });
    inbox = new InboxServer(new Inbox(db, { bodiesPerDay: 1000, bytesPerDay: 1 << 28, diskFloorBytes: 0, freeBytes: () => null }), db);
  });
  after(() => inbox.close());
  const start = (webhook: Record<string, unknown>): ReturnType<typeof startWebhookServer> =>
    startWebhookServer({ config: testConfig({ dataDir, webhook: { bearerToken: TOKEN, ...webhook } }).webhook, inbox, log: silentLogger, dataDir, onStored: () => undefined });

  it('webhook.port 0: the twin holds the port the first listener got', async (t) => {
    if (!(await hasIpv6Loopback(t))) return;
    const running = await start({ port: 0 });
    const port = Number(new URL(running.url).port);
    try {
      assert.equal(new URL(running.url).hostname, '127.0.0.1');
      await assertAgentsRefusal('::1', port);
      assert.equal(await bindError(port, '::1'), 'EADDRINUSE');
    } finally {
      await running.close();
    }
    assert.ok(await refusesConnections(port, '::1'), 'close lets the twin go too');
    assert.ok(await refusesConnections(port, '127.0.0.1'));
  });

  it('webhook.host ::1: the twin is 127.0.0.1', async (t) => {
    if (!(await hasIpv6Loopback(t))) return;
    const running = await start({ port: 0, host: '::1' });
    const port = Number(new URL(running.url).port);
    try {
      assert.equal(new URL(running.url).hostname, '[::1]');
      await assertAgentsRefusal('127.0.0.1', port);
      assert.equal(await bindError(port, '127.0.0.1'), 'EADDRINUSE');
    } finally {
      await running.close();
    }
  });

  it('the twin taken (after the start-up check, before listening): it rejects with EADDRINUSE naming webhook.port, and leaves 127.0.0.1 free', async (t) => {
    if (!(await hasIpv6Loopback(t))) return;
    const port = await freeOnBoth();
    const other = await occupy(port, '::1');
    try {
      const started = start({ port });
      // Should it listen after all, it is closed again (so the test process can end).
      void started.then((running) => running.close(), () => undefined);
      await assert.rejects(started, (err: NodeJS.ErrnoException) => {
        assert.equal(err.code, 'EADDRINUSE');
        assert.match(err.message, new RegExp(`port ${port} on ::1 .*is already in use .*choose a free webhook\\.port`));
        return true;
      });
      assert.ok(await refusesConnections(port, '127.0.0.1'), 'not left listening on 127.0.0.1 alone');
    } finally {
      other.close();
    }
  });
});

describe('tunnel arguments that name the webhook as localhost or a bare port', () => {
  it('are found (warned of at start), and the documented forms are not', () => {
    assert.deepEqual(looseWebhookArgs('ngrok', ['http', '{webhookPort}', '--url', 'pos-0042.ngrok.app']), ['{webhookPort}']);
    assert.deepEqual(looseWebhookArgs('C:\\ngrok\\ngrok.exe', ['http', '8787']), ['8787']);
    assert.deepEqual(looseWebhookArgs('cloudflared', ['tunnel', 'run', '--url', 'http://localhost:{webhookPort}']), ['http://localhost:{webhookPort}']);
    assert.deepEqual(looseWebhookArgs('ngrok', ['http', '127.0.0.1:{webhookPort}', '--url', 'pos-0042.ngrok.app']), []);
    assert.deepEqual(looseWebhookArgs('cloudflared', ['tunnel', '--no-autoupdate', 'run', '--url', '{webhookUrl}']), []);
    // A stand-in given the port as a value of its own option is not ngrok.
    assert.deepEqual(looseWebhookArgs(process.execPath, ['stand-in.mjs', '--target', '{webhookPort}']), []);
  });
});

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { Agent, AgentService } from '../../../src/agent';
import { ConfigError } from '../../../src/errors';
import { silentLogger } from '../../../src/log';
import { isInstanceLocked } from '../../../src/ops/instance';
import { pidFile } from '../../../src/ops/paths';
import { startAgent } from '../../../src/ops/startup';
import { freePort, REPO_ROOT, startChildAgent, writeConfig } from '../../helpers/child-agent';
import { sampleBodies, tempDir, testConfig } from '../../helpers/fixtures';
import { needs } from '../../helpers/system';

/** Issue 10, point 6: start-up is all or nothing, through a real `serve` process. */

const CLI = path.join(REPO_ROOT, 'bin', 'pos-sync-agent.cjs');

function serve(config: string): { status: number | null; output: string } {
  const r = spawnSync(process.execPath, [CLI, 'serve', '--config', config], { encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

/** Holds a TCP port the way another program would. */
async function occupy(port: number): Promise<net.Server> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return server;
}

async function refusesConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

function assertNothingLeft(dataDir: string): void {
  assert.equal(fs.existsSync(pidFile(dataDir)), false, 'no pid file is left');
  assert.equal(isInstanceLocked(dataDir), false, 'the data folder is not locked');
}

describe('start-up is all or nothing (spawned serve)', () => {
  it('a busy admin port stops start-up with exit 3 naming admin.port; the webhook never listened', async () => {
    const dir = tempDir();
    const [webhookPort, adminPort] = [await freePort(), await freePort()];
    const blocker = await occupy(adminPort);
    try {
      const config = writeConfig(dir, { dataDir: path.join(dir, 'data'), webhook: { port: webhookPort }, admin: { port: adminPort } });
      const r = serve(config);
      assert.equal(r.status, 3, r.output);
      assert.match(r.output, new RegExp(`admin\\.port: port ${adminPort} on 127\\.0\\.0\\.1 is already in use .*choose a free admin\\.port`));
      assert.doesNotMatch(r.output, /EADDRINUSE|Receiving menu cycle updates|at .*\.ts:\d+/, 'no bare error, no stack, never "receiving"');
      assert.ok(await refusesConnections(webhookPort), 'the webhook port is free again');
      assertNothingLeft(path.join(dir, 'data'));
    } finally {
      blocker.close();
    }
  });

  it('a busy webhook port stops start-up with exit 3 naming webhook.port', async () => {
    const dir = tempDir();
    const webhookPort = await freePort();
    const blocker = await occupy(webhookPort);
    try {
      const config = writeConfig(dir, { dataDir: path.join(dir, 'data'), webhook: { port: webhookPort }, admin: { port: 0 } });
      const r = serve(config);
      assert.equal(r.status, 3, r.output);
      assert.match(r.output, new RegExp(`webhook\\.port: port ${webhookPort} on 127\\.0\\.0\\.1 is already in use`));
      assertNothingLeft(path.join(dir, 'data'));
    } finally {
      blocker.close();
    }
  });

  it('lists several mistakes together: equal ports, a TLS certificate that is a folder, a missing key file', async () => {
    const dir = tempDir();
    const port = await freePort();
    fs.mkdirSync(path.join(dir, 'cert.pem'));
    const config = writeConfig(dir, {
      dataDir: path.join(dir, 'data'),
      webhook: { port, tls: { certFile: 'cert.pem', keyFile: 'missing-key.pem' } },
      admin: { port },
    });
    const r = serve(config);
    assert.equal(r.status, 3, r.output);
    assert.match(r.output, /invalid configuration \(4 problems\)/);
    assert.match(r.output, new RegExp(`admin\\.port: ${port} is also webhook\\.port`));
    assert.match(r.output, /webhook\.tls\.certFile: cannot read .*cert\.pem \(it is a folder, not a file\): point it at the PEM file/);
    assert.match(r.output, /webhook\.tls\.keyFile: cannot read .*missing-key\.pem \(there is no such file\)/);
    assert.match(r.output, /webhook\.bearerToken: the webhook can be reached from outside/, 'TLS without a token is listed with the rest');
    assert.doesNotMatch(r.output, /EISDIR: illegal operation/);
    assert.ok(await refusesConnections(port));
    assertNothingLeft(path.join(dir, 'data'));
  });

  it('lists every schema mistake of the file together', () => {
    const dir = tempDir();
    const config = writeConfig(dir, { dataDir: path.join(dir, 'data'), webhook: { port: 'eighty' }, admin: { prot: 1 }, defaultTimezone: 'Mars/Olympus' });
    const r = serve(config);
    assert.equal(r.status, 3, r.output);
    assert.match(r.output, /webhook\.port: /);
    assert.match(r.output, /admin: unknown key prot \(did you mean port\?\)/);
    assert.match(r.output, /defaultTimezone: "Mars\/Olympus" is not a canonical IANA timezone name/);
  });

  it('a read-only data folder stops start-up with exit 3 naming dataDir', needs('root (a read-only tmpfs mount)'), async () => {
    const dir = tempDir();
    const dataDir = path.join(dir, 'ro');
    fs.mkdirSync(dataDir);
    // A real read-only file system where mount is allowed (root in CI); else a folder the agent's
    // account (nobody) may not write. Mode 0700: tmpfs' default 1777 is refused first, as writable by others.
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=1m,mode=0700', 'tmpfs', dataDir]).status === 0;
    try {
      const config = writeConfig(dir, { dataDir, webhook: { port: 0 }, admin: { port: 0 }, log: { dir: path.join(dir, 'logs') } });
      let r: { status: number | null; output: string };
      if (mounted) r = serve(config);
      else {
        fs.chmodSync(dir, 0o755);
        fs.chmodSync(path.join(dir, 'config.json'), 0o644);
        fs.mkdirSync(path.join(dir, 'logs'), { mode: 0o777 });
        fs.chmodSync(path.join(dir, 'logs'), 0o777);
        const x = spawnSync('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', process.execPath, CLI, 'serve', '--config', config], { encoding: 'utf8', timeout: 60_000, cwd: '/tmp' });
        r = { status: x.status, output: `${x.stdout}${x.stderr}` };
      }
      assert.equal(r.status, 3, r.output);
      assert.match(r.output, new RegExp(`dataDir: ${dataDir.replace(/[/.]/g, '\\$&')} is not writable \\((EROFS|EACCES)\\): `));
      assert.match(r.output, mounted ? /read-only file system: choose a folder on a writable disk/ : /give the account nobody write access to it/);
    } finally {
      if (mounted) spawnSync('umount', [dataDir]);
    }
  });
});

describe('a part failing after the webhook listens (in-process startAgent)', () => {
  it('the webhook answered 503 "starting" meanwhile, and everything is stopped and unlocked after', async () => {
    const config = testConfig();
    let answered: number | null = null;
    let webhookUrl = '';
    const failing: AgentService = {
      name: 'failing',
      async start(agent: Agent) {
        webhookUrl = agent.webhook!.url;
        const res = await fetch(webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: sampleBodies()[0]!.raw });
        answered = res.status;
        throw new Error('this part cannot start');
      },
      async stop() {},
    };
    await assert.rejects(startAgent(config, silentLogger, [failing]), /this part cannot start/);
    assert.equal(answered, 503, 'no 200 before every part had started');
    assert.ok(await refusesConnections(Number(new URL(webhookUrl).port)), 'the webhook was closed again');
    assert.equal(isInstanceLocked(config.dataDir), false);
    // And a clean start on the same folder works.
    const ok = await startAgent(config, silentLogger, []);
    assert.equal(isInstanceLocked(config.dataDir), true);
    const res = await fetch(ok.agent.webhook!.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: sampleBodies()[0]!.raw });
    assert.equal(res.status, 200);
    await ok.stop();
    assert.equal(isInstanceLocked(config.dataDir), false);
  });

  it('reports configuration problems as one ConfigError', async () => {
    const port = await freePort();
    const config = testConfig({ webhook: { port }, admin: { port } });
    await assert.rejects(startAgent(config, silentLogger, []), (err: unknown) => err instanceof ConfigError && err.problems.some((p) => p.field === 'admin.port'));
  });
});

describe('a started serve', () => {
  it('answers once it has said it is receiving', async () => {
    const dir = tempDir();
    const child = await startChildAgent(writeConfig(dir, { dataDir: path.join(dir, 'data'), webhook: { port: 0 }, admin: { port: 0 } }));
    try {
      const res = await fetch(child.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: sampleBodies()[0]!.raw });
      assert.equal(res.status, 200);
      assert.equal(JSON.parse(fs.readFileSync(pidFile(path.join(dir, 'data')), 'utf8')).pid, child.child.pid);
    } finally {
      await child.kill('SIGTERM');
    }
  });
});

function selfSignedCertificate(dir: string): { certFile: string; keyFile: string } {
  const certFile = path.join(dir, 'cert.pem');
  const keyFile = path.join(dir, 'key.pem');
  const r = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  assert.equal(r.status, 0, 'openssl makes a test certificate');
  return { certFile, keyFile };
}

describe('a webhook reachable from outside needs a token (issue 10, point 1)', () => {
  it('TLS without a bearer token stops start-up with exit 3 naming webhook.bearerToken', needs('openssl'), async () => {
    const dir = tempDir();
    const port = await freePort();
    const config = writeConfig(dir, { dataDir: path.join(dir, 'data'), webhook: { port, tls: selfSignedCertificate(dir) }, admin: { port: 0 } });
    const r = serve(config);
    assert.equal(r.status, 3, r.output);
    assert.match(r.output, /webhook\.bearerToken: the webhook can be reached from outside this PC \(webhook\.tls is set\) but has no bearer token, so anyone who finds its address could change your prices/);
    assert.ok(await refusesConnections(port));
    assertNothingLeft(path.join(dir, 'data'));
  });

  it('with webhook.allowUnauthenticated it starts, and the start-up log says it is open to anyone', needs('openssl'), async () => {
    const dir = tempDir();
    const child = await startChildAgent(
      writeConfig(dir, { dataDir: path.join(dir, 'data'), webhook: { port: 0, tls: selfSignedCertificate(dir), allowUnauthenticated: true }, admin: { port: 0 } }),
    );
    try {
      assert.match(child.url, /^https:/);
      assert.match(child.output(), /webhook open to anyone: webhook\.tls is set, no bearer token, webhook\.allowUnauthenticated is true/);
    } finally {
      await child.kill('SIGTERM');
    }
  });
});

import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, it } from 'node:test';
import { operatorName } from '../../../src/core';
import { controlEndpoint, WebhookListenerReply } from '../../../src/ops/control-protocol';
import { ControlClient } from '../../../src/ops/control-request';
import { CLI, runCli, startChildAgent, withChildAgent, writeRawConfig } from '../../helpers/child-agent';
import { tempDir } from '../../helpers/fixtures';
import { needs } from '../../helpers/system';

/**
 * `dev publisher` to a loopback URL without --token-file sends the webhook token it reads from the
 * data folder. Another OS account may listen on that URL's port (the agent stopped, or listening on
 * another one); with the token it could post menu updates, prices included, to the real agent. So the
 * token goes only to the listener of the agent running on that folder, checked over its owner-only
 * control channel. Real `serve` processes, real CLI processes, a real listener in the other account's
 * place (in this process: what it receives is what such an account would).
 */

interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The CLI in a process of its own, without blocking this one (the listener here must answer it). */
function startPublisher(config: string, args: readonly string[]): { child: ChildProcess; done: Promise<Run> } {
  const child = spawn(process.execPath, [CLI, 'dev', 'publisher', ...args, '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const done = new Promise<Run>((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
  return { child, done };
}

function publish(config: string, args: readonly string[]): Promise<Run> {
  return startPublisher(config, args).done;
}

interface Squatter {
  readonly port: number;
  /** The Authorization header of each request it received (null: none sent). */
  readonly authorizations: (string | null)[];
  close(): Promise<void>;
}

/** Another account's program on a loopback port: answers every request 200, as the agent would. */
async function squat(port = 0): Promise<Squatter> {
  const authorizations: (string | null)[] = [];
  const server = http.createServer((req, res) => {
    authorizations.push(req.headers.authorization ?? null);
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    authorizations,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function site(): { dir: string; dataDir: string; config: string } {
  const dir = tempDir();
  const dataDir = path.join(dir, 'data');
  // The untouched webhook configuration: the first start makes the token, kept in the data folder.
  const config = writeRawConfig(dir, { dataDir, webhook: { port: 0 }, admin: { enabled: false }, backup: { enabled: false }, sync: { pollIntervalMs: 100, baselineSettleSeconds: 0 } });
  return { dir, dataDir, config };
}

function tokenOf(config: string): string {
  const shown = runCli(config, ['secrets', 'show', 'webhook.bearerToken']);
  assert.equal(shown.status, 0, shown.stderr);
  return shown.stdout.trim();
}

const SMALL = ['--locations', '1', '--updates', '3', '--items', '5', '--seed', '4', '--give-up-after', '2'];

const refusal = (dataDir: string, fact: RegExp | string): RegExp =>
  new RegExp(
    `^the webhook token read from ${escape(dataDir)} is sent only to the agent running on that data folder, and ${typeof fact === 'string' ? escape(fact) : fact.source}: .*, or pass --token-file FILE to send a token of your choice to http://\\S+ \\[token_not_for_url\\]\\n$`,
  );

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

describe('dev publisher sends the data folder\'s webhook token only to the agent running on it', () => {
  it('with no agent running, a program listening on the URL\'s port gets nothing, and the command says why in one line', async () => {
    const { dataDir, config } = site();
    // A data folder with its token: the agent ran once, and stopped.
    await withChildAgent(config, async () => undefined);
    assert.match(tokenOf(config), /^[A-Za-z0-9_-]{43}$/, 'the data folder holds its token');
    const squatter = await squat();
    try {
      const r = await publish(config, ['--url', `http://127.0.0.1:${squatter.port}/webhooks/menu-cycles`, ...SMALL]);
      assert.equal(r.status, 1, r.stdout + r.stderr);
      assert.match(r.stderr, refusal(dataDir, 'no agent runs on it'));
      assert.doesNotMatch(r.stdout, /Publishing/, 'refused before any delivery');
      assert.deepEqual(squatter.authorizations, [], 'not one request reached the program on the port');

      // --token-file is the user's own choice of token and URL: sent as before.
      const file = path.join(tempDir(), 'token');
      fs.writeFileSync(file, 'a-token-of-my-choice\n');
      const chosen = await publish(config, ['--url', `http://127.0.0.1:${squatter.port}/webhooks/menu-cycles`, '--token-file', file, ...SMALL]);
      assert.equal(chosen.status, 0, chosen.stdout + chosen.stderr);
      assert.ok(squatter.authorizations.length > 0);
      assert.ok(squatter.authorizations.every((a) => a === 'Bearer a-token-of-my-choice'), JSON.stringify(squatter.authorizations));
    } finally {
      await squatter.close();
    }
  });

  it('with the agent listening on another port (or the URL naming it by a host name), nothing is sent and the error names its URL', async () => {
    const { dataDir, config } = site();
    await withChildAgent(config, async (agent) => {
      const squatter = await squat();
      try {
        const r = await publish(config, ['--url', `http://127.0.0.1:${squatter.port}/webhooks/menu-cycles`, ...SMALL]);
        assert.equal(r.status, 1, r.stdout + r.stderr);
        assert.match(r.stderr, refusal(dataDir, `that agent (pid ${agent.child.pid}) listens at ${agent.url}`));
        assert.match(r.stderr, new RegExp(`: publish to ${escape(agent.url)}, or pass --token-file FILE`));
        assert.deepEqual(squatter.authorizations, []);
      } finally {
        await squatter.close();
      }
      // `localhost` may resolve to an address the agent does not listen on (::1), where another account can.
      const byName = new URL(agent.url);
      byName.hostname = 'localhost';
      const r = await publish(config, ['--url', byName.href, ...SMALL]);
      assert.equal(r.status, 1, r.stdout + r.stderr);
      assert.match(r.stderr, refusal(dataDir, `that agent (pid ${agent.child.pid}) listens at ${agent.url}`));
    });
  });

  it('to the running agent\'s own URL the token is sent by itself, and the agent says on its control channel where it listens', async () => {
    const { dataDir, config } = site();
    await withChildAgent(config, async (agent) => {
      const reply = await new ControlClient(controlEndpoint(dataDir), operatorName(), 10_000).request(WebhookListenerReply, { method: 'GET', route: '/webhook-listener' });
      assert.deepEqual(reply, { pid: agent.child.pid, url: agent.url });
      const r = await publish(config, ['--url', agent.url, ...SMALL, '--json']);
      assert.equal(r.status, 0, r.stdout + r.stderr);
      const summary = JSON.parse(r.stdout) as { acked: number; deliveries: number; statusCounts: Record<string, number> };
      assert.equal(summary.acked, summary.deliveries);
      assert.deepEqual(Object.keys(summary.statusCounts), ['200'], 'no 401: the token was sent');
    });
  });

  it('over HTTPS (webhook.tls) the same: sent to the agent\'s own listener, refused to its port over plain HTTP', needs('openssl'), async () => {
    const dir = tempDir();
    const certFile = path.join(dir, 'cert.pem');
    const keyFile = path.join(dir, 'key.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
    const dataDir = path.join(dir, 'data');
    const config = writeRawConfig(dir, { dataDir, webhook: { port: 0, tls: { certFile, keyFile } }, admin: { enabled: false }, backup: { enabled: false }, sync: { pollIntervalMs: 100, baselineSettleSeconds: 0 } });
    // A webhook over TLS takes a token the site sets (docs/operations.md, Webhook token).
    const made = runCli(config, ['secrets', 'generate', 'webhook.bearerToken']);
    assert.equal(made.status, 0, made.stderr);
    await withChildAgent(config, async (agent) => {
      assert.match(agent.url, /^https:\/\/127\.0\.0\.1:\d+\//);
      const r = await publish(config, ['--url', agent.url, '--ca', certFile, ...SMALL, '--json']);
      assert.equal(r.status, 0, r.stdout + r.stderr);
      const summary = JSON.parse(r.stdout) as { acked: number; deliveries: number; statusCounts: Record<string, number> };
      assert.equal(summary.acked, summary.deliveries);
      assert.deepEqual(Object.keys(summary.statusCounts), ['200']);
      const plain = await publish(config, ['--url', agent.url.replace(/^https:/, 'http:'), ...SMALL]);
      assert.equal(plain.status, 1, plain.stdout + plain.stderr);
      assert.match(plain.stderr, refusal(dataDir, `that agent (pid ${agent.child.pid}) listens at ${agent.url}`));
    });
  });

  it('the agent stopping between the check and the deliveries, and a program taking its port: that program never gets the token', async () => {
    const { config } = site();
    const agent = await startChildAgent(config);
    let squatter: Squatter | null = null;
    try {
      const port = Number(new URL(agent.url).port);
      const publisher = startPublisher(config, ['--url', agent.url, '--locations', '1', '--updates', '100', '--items', '3', '--concurrency', '8', '--seed', '9', '--give-up-after', '1']);
      // Held still as it starts delivering (the check passed: the agent listens at the URL)...
      await new Promise<void>((resolve, reject) => {
        let out = '';
        const onData = (c: Buffer): void => {
          out += c.toString('utf8');
          if (!/Publishing 100 deliveries/.test(out)) return;
          publisher.child.kill('SIGSTOP');
          publisher.child.stdout!.off('data', onData);
          resolve();
        };
        publisher.child.stdout!.on('data', onData);
        void publisher.done.then((r) => reject(new Error(`the publisher ended before it started delivering:\n${r.stdout}${r.stderr}`)));
      });
      // ...while the agent stops and another program listens on its port.
      await agent.kill('SIGKILL');
      squatter = await squat(port);
      publisher.child.kill('SIGCONT');
      const r = await publisher.done;
      assert.equal(r.status, 1, r.stdout + r.stderr);
      assert.match(r.stdout, /gave up on location \d+ change \d+: the webhook token read from .* is sent only to the agent running on that data folder, and no agent answers on its control channel/);
      assert.deepEqual(squatter.authorizations, [], 'not one request reached the program on the agent\'s port');
    } finally {
      await agent.kill('SIGKILL');
      await squatter?.close();
    }
  });
});

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, it } from 'node:test';
import { item, price, tempDir, update } from '../helpers/fixtures';
import { sleep, spawnAgent, waitFor, writeConfig } from '../../src/dev/child-agent';

/**
 * Issue 24, item 5: ten thousand slow connections with a wrong token (what slowhttptest's slow-body
 * mode does, from Node sockets on loopback) used to exhaust the receiver thread's heap: the thread was
 * restarted, dropping every open connection. Now the receiver holds at most webhook.maxConnections,
 * strangers' connections make room for new ones, and a refused body is waited for only briefly. The
 * agent runs in its own process (the compiled build, as installed), so its sockets and heap are its own.
 * Checked by order of events, not by time: head office's delivery is answered 200 while the slow
 * clients are still connected, and the agent never logs a receiver restart.
 */

const TOKEN = 'head-office-token-9034';
const SLOW_CLIENTS = 10_000;

/** This process's open-file limit (each client socket is one descriptor). */
function openFileLimit(): number {
  try {
    return Number(execFileSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim()) || 1024;
  } catch {
    return 1024;
  }
}

describe('a flood of slow connections', () => {
  it('leaves the receiver thread running and head office answered while the slow clients are connected', { timeout: 300_000 }, async (t) => {
    const dir = tempDir();
    const configFile = writeConfig(dir, {
      dataDir: path.join(dir, 'data'),
      webhook: { port: 0, bearerToken: TOKEN },
      admin: { enabled: false },
    });
    // The compiled build: npm run build first (as the other child-agent suites).
    assert.ok(fs.existsSync(path.join(__dirname, '..', '..', 'dist', 'src', 'agent.js')), 'run npm run build first');
    const child = await spawnAgent(configFile, { built: true, env: { CHILD_AGENT_LOG: '1' } });
    t.after(() => child.kill());
    const url = new URL(child.url);
    const port = Number(url.port);
    const clients = Math.min(SLOW_CLIENTS, openFileLimit() - 500);
    t.diagnostic(`${clients} slow clients`);

    // Each slow client sends its head with a wrong token and the start of a 1 MB body, then holds the
    // rest back; when the server closes it, it connects again (as slowhttptest does) while the flood lasts.
    let flooding = true;
    let everConnected = 0;
    const sockets = new Set<net.Socket>();
    const slowClient = (i: number): void => {
      const socket = net.connect(port, '127.0.0.1');
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('connect', () => {
        everConnected += 1;
        socket.write(`POST ${url.pathname} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wrong-${i}\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{"LocationID":`);
      });
      socket.on('close', () => {
        sockets.delete(socket);
        if (flooding) setTimeout(() => slowClient(i), 100);
      });
    };
    for (let i = 0; i < clients; i++) {
      slowClient(i);
      if (i % 500 === 499) await sleep(20);
    }
    await waitFor('every slow client to have connected once', () => everConnected >= clients, 120_000);

    // Head office's delivery, on a connection of its own, while the flood goes on.
    const body = JSON.stringify(update(7, 1, 0, [item('1', 'A', [price('2026-12-01', '9999-12-31', 'Eat In', '4.50')])]));
    const res = await fetch(child.url, { method: 'POST', body, headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` } });
    const connectedAtAnswer = [...sockets].filter((s) => !s.connecting && !s.destroyed).length;
    const answer = (await res.json()) as { status?: string };
    flooding = false;
    for (const s of sockets) s.destroy();

    assert.equal(res.status, 200, JSON.stringify(answer));
    assert.equal(answer.status, 'stored');
    // Answered while the slow clients were connected, not after they had gone.
    assert.ok(connectedAtAnswer >= 100, `only ${connectedAtAnswer} slow clients were connected when head office was answered`);
    assert.doesNotMatch(child.stderr(), /receiver thread stopped|heap out of memory/i, 'the receiver thread was restarted');
    // And the agent still answers once the flood is over.
    const health = await fetch(new URL('/healthz', child.url));
    assert.equal(health.status, 200);
    t.diagnostic(`${everConnected} connections in all; ${connectedAtAnswer} open when head office was answered`);
  });
});

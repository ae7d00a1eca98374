import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, it } from 'node:test';
import { startAdminAgent } from '../../helpers/admin';

/**
 * Issue 10, point 9: the admin server honours its header timeout. Node enforces it only when it
 * checks its connections (every 30 s by default), so a slow client used to keep a socket for up to
 * timeout + 30 s (~50 s with the 20 s default). Measured with a client that never finishes its headers;
 * the bound is generous (10× the configured 1 s) and still far below the 30 s the old server took.
 */

describe('admin server header timeout', async () => {
  const t = await startAdminAgent({ admin: { headersTimeoutMs: 1000 } });

  it('a client that never finishes its headers gets 408 and is closed within the configured time, not ~30 s later', async () => {
    // Taken before connecting, on the monotonic clock the server's own timeout check uses: the server
    // starts timing the connection when it accepts it, which is after this. So the elapsed time seen
    // here can only be longer than the server's (a slow or busy machine only adds to it); it cannot
    // come out short because this process saw 'connect' or 'close' late.
    const started = performance.now();
    const socket = net.connect(t.adminPort, new URL(t.adminUrl).hostname);
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(`GET /api/status HTTP/1.1\r\nHost: ${t.adminHost}\r\nX-Slow: `);
    let answer = '';
    socket.on('data', (c: Buffer) => (answer += c.toString('latin1')));
    const closedAfterMs = await new Promise<number>((resolve, reject) => {
      const guard = setTimeout(() => reject(new Error('still open after 15 s')), 15_000);
      socket.once('close', () => {
        clearTimeout(guard);
        resolve(performance.now() - started);
      });
    });
    // The 408 is the server's header timeout answering (not the client or another error closing it).
    assert.match(answer, /^HTTP\/1\.1 408 /);
    // Not before the configured 1000 ms (100 ms below it only for clock granularity): true however slow the machine.
    assert.ok(closedAfterMs >= 900, `closed after ${closedAfterMs} ms: before the timeout`);
    // Product promise (the fix this test is for): closed within the configured time plus a short check
    // interval, not ~30 s later. 10 s (10x the configured 1 s) is generous for a busy machine and still
    // far below those 30 s.
    assert.ok(closedAfterMs < 10_000, `closed after ${closedAfterMs} ms`);
  });
});

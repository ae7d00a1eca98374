import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ThreadClient } from '../../../src/threads/thread-client';
import type { ThrowingRequest } from '../../helpers/threads/throwing-worker';

describe('ThreadClient', () => {
  it('a thread that throws is replaced once: its late exit event does not take the new thread for itself', { timeout: 60_000 }, async () => {
    const exits: string[] = [];
    const restarted: Promise<string>[] = [];
    const client: ThreadClient<ThrowingRequest> = new ThreadClient<ThrowingRequest>({
      dir: path.join(__dirname, '..', '..', 'helpers', 'threads'),
      entry: 'throwing-worker',
      name: 'test',
      workerData: null,
      // As ReceiverHost does: start a new thread at once.
      onUnexpectedExit: (reason) => {
        exits.push(reason);
        restarted.push(client.request<string>({ type: 'ping' }));
      },
    });
    try {
      assert.equal(await client.request({ type: 'ping' }), 'pong');
      // The reply and the thread's error come over different ports: on a busy machine the error can
      // arrive first, and then the request fails as a 503 like any request the thread did not finish.
      const thrown = await client.request<string>({ type: 'throw' }).then(
        (reply) => reply,
        (err: { id?: string }) => err.id ?? String(err),
      );
      assert.ok(thrown === 'throwing' || thrown === 'test_stopped', `the throw request: ${thrown}`);
      for (const deadline = Date.now() + 20_000; exits.length === 0 && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 10));
      assert.match(exits[0] ?? '', /boom in the thread/);
      assert.equal(await restarted[0], 'pong', 'the new thread answers');
      // Give the old thread's 'exit' time to arrive; it must not count as the new thread's end.
      await new Promise((r) => setTimeout(r, 1_000));
      assert.deepEqual(exits.length, 1, `ends seen: ${exits.join(' | ')}`);
      assert.equal(await client.request({ type: 'ping' }), 'pong', 'and goes on answering');
    } finally {
      await client.stop();
    }
  });
});

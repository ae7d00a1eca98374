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

  it('a thread that rests ends after its last request, and the next request starts a new one', { timeout: 60_000 }, async () => {
    const exits: string[] = [];
    const client = new ThreadClient<ThrowingRequest>({
      dir: path.join(__dirname, '..', '..', 'helpers', 'threads'),
      entry: 'throwing-worker',
      name: 'test',
      workerData: null,
      onUnexpectedExit: (reason) => exits.push(reason),
    });
    try {
      const first = await client.request<number>({ type: 'thread' });
      assert.equal(client.running, true);
      await client.rest({ type: 'close' });
      assert.equal(client.running, false, 'rested');
      const second = await client.request<number>({ type: 'thread' });
      assert.notEqual(second, first, 'a new thread answers');
      // A request sent while the thread is resting waits for the rest, then starts the next thread.
      const resting = client.rest({ type: 'close' });
      const during = client.request<number>({ type: 'thread' });
      await resting;
      const third = await during;
      assert.ok(third !== second && third !== first, `the request sent during the rest reached a new thread (${first}, ${second}, ${third})`);
      await new Promise((r) => setTimeout(r, 500));
      assert.deepEqual(exits, [], 'a rest is not an unexpected end');
    } finally {
      await client.stop();
    }
  });
});

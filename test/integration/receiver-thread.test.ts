import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import { startTestAgent } from '../helpers/agent';
import { item, price, update } from '../helpers/fixtures';

/**
 * The webhook receiver runs on a thread of its own (issue 11): an ack and /healthz must not wait for
 * the main thread, where the status window's queries, the staff sync, backups and retention run
 * their SQLite calls. Shown by blocking the main thread outright while a client in another thread
 * posts: the answers arrive while it is still blocked (an order of events, not a timing threshold).
 */

const small = (location: number, seq: number): Record<string, unknown> => update(location, seq, seq - 1, [item('1', 'A', [price('2026-12-01', '9999-12-31', 'Eat In', '4.50')])]);

/**
 * A client on its own thread: posts each body and gets /healthz, reports each answer's status, and
 * sets `done[0]` to 1 (Atomics) once it has the last answer, so a blocked thread can see it.
 */
function clientThread(url: string, bodies: string[], healthz: string, done: Int32Array): Promise<{ status: number }[]> {
  const source = `
    const { parentPort, workerData } = require('node:worker_threads');
    (async () => {
      const out = [];
      for (const body of workerData.bodies) {
        const res = await fetch(workerData.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        await res.arrayBuffer();
        out.push({ status: res.status });
      }
      const h = await fetch(workerData.healthz);
      await h.arrayBuffer();
      out.push({ status: h.status });
      Atomics.store(workerData.done, 0, 1);
      parentPort.postMessage(out);
    })().catch((err) => parentPort.postMessage(String(err)));`;
  const worker = new Worker(source, { eval: true, workerData: { url, bodies, healthz, done } });
  return new Promise((resolve, reject) => {
    worker.once('message', (m: unknown) => (typeof m === 'string' ? reject(new Error(m)) : resolve(m as { status: number }[])));
    worker.once('error', reject);
  });
}

/**
 * Blocks this thread (busy, standing for a long synchronous SQLite call on the main thread) for at
 * least `minMs`, and on until `done[0]` is 1 or `maxMs` has passed. Returns how long it blocked and
 * whether `done` was set while it still blocked.
 */
function blockMainThread(done: Int32Array, minMs: number, maxMs: number): { blockedMs: number; doneWhileBlocked: boolean } {
  const started = Date.now();
  for (;;) {
    const elapsed = Date.now() - started;
    const isDone = Atomics.load(done, 0) === 1;
    if ((isDone && elapsed >= minMs) || elapsed >= maxMs) return { blockedMs: elapsed, doneWhileBlocked: isDone };
  }
}

describe('the webhook receiver thread', () => {
  it('acknowledges deliveries and answers /healthz while the main thread is blocked', async () => {
    const t = await startTestAgent();
    // Warm the path once (the threads' first use compiles their code).
    assert.equal((await t.post(small(5, 1))).status, 200);
    await t.settle();
    const bodies = [2, 3, 4].map((seq) => JSON.stringify(small(5, seq)));
    const done = new Int32Array(new SharedArrayBuffer(4));
    await t.agent.receiverLoopDelay('start');
    const answers = clientThread(t.webhookUrl, bodies, `${t.baseUrl}/healthz`, done);
    // Block this thread from before the client thread even starts until it has every answer (at
    // least 3 s; at most 60 s, for a machine so busy the client cannot start): an order of events,
    // not a time limit. Were acks or /healthz served from this thread, none could come until it is free.
    const block = blockMainThread(done, 3_000, 60_000);
    const got = await answers;
    const delay = (await t.agent.receiverLoopDelay('stop'))!;
    assert.ok(block.doneWhileBlocked, `the client had no answers after the main thread was blocked for ${block.blockedMs} ms: they waited for it`);
    assert.deepEqual(got.map((a) => a.status), [200, 200, 200, 200]);
    // The receiver's own loop never stood still for the block (on the main thread its delay would be
    // about the whole block; half of it, at least 1.5 s, leaves a busy machine ample room).
    assert.ok(delay.maxMs > 0 && delay.maxMs < block.blockedMs / 2, `receiver event-loop delay max ${delay.maxMs} ms during a ${block.blockedMs} ms block`);
    // The applier's cues arrive once the main thread runs again: everything is applied, in order.
    await t.settle();
    assert.equal(t.agent.core.status().find((s) => s.locationId === 5)?.lastChangeSequence, 4);
  });

  it('keeps answering after the webhook thread (receiver and inbox) ends unexpectedly', { timeout: 180_000 }, async () => {
    // Port 0 configured: a restarted receiver must take the port its predecessor had (a tunnel points at it).
    const t = await startTestAgent({ webhook: { port: 0 } });
    assert.equal((await t.post(small(6, 1))).status, 200);
    const threadOf = (o: unknown, key: string): Worker => (o as Record<string, { worker: Worker }>)[key]!.worker;
    const postUntil200 = async (seq: number): Promise<number[]> => {
      const statuses: number[] = [];
      // A new thread under the test's TypeScript loader takes a while to start on a busy machine.
      for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
        const status = await t.post(small(6, seq)).then(
          (r) => r.status,
          () => 0,
        );
        statuses.push(status);
        if (status === 200) return statuses;
        await new Promise((r) => setTimeout(r, 25));
      }
      assert.fail(`no 200 after the thread ended: ${statuses.join(', ')}`);
    };

    // Started again on the same port (a refused connection meanwhile is a retry for the sender).
    const receiver = (t.agent as unknown as Record<string, unknown>).receiver;
    await threadOf(receiver, 'thread').terminate();
    const afterReceiver = await postUntil200(2);
    assert.ok(afterReceiver.every((s) => s === 0 || s === 503 || s === 200), afterReceiver.join(', '));
    assert.equal(t.agent.webhook?.url, t.webhookUrl, 'the same address as before');
    // The main thread's imports reach the new thread's inbox.
    const imported = await t.agent.importPayload(Buffer.from(JSON.stringify(small(6, 3))), 'test');
    assert.equal(imported.outcome.kind, 'stored');
    await t.settle();
    assert.equal(t.agent.core.status().find((s) => s.locationId === 6)?.lastChangeSequence, 3);
  });
});

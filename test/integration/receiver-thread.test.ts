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

/** A client on its own thread: posts each body and gets /healthz, and reports when each answer came (epoch ms). */
function clientThread(url: string, bodies: string[], healthz: string): Promise<{ status: number; at: number }[]> {
  const source = `
    const { parentPort, workerData } = require('node:worker_threads');
    (async () => {
      const out = [];
      for (const body of workerData.bodies) {
        const res = await fetch(workerData.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        await res.arrayBuffer();
        out.push({ status: res.status, at: Date.now() });
      }
      const h = await fetch(workerData.healthz);
      await h.arrayBuffer();
      out.push({ status: h.status, at: Date.now() });
      parentPort.postMessage(out);
    })().catch((err) => parentPort.postMessage(String(err)));`;
  const worker = new Worker(source, { eval: true, workerData: { url, bodies, healthz } });
  return new Promise((resolve, reject) => {
    worker.once('message', (m: unknown) => (typeof m === 'string' ? reject(new Error(m)) : resolve(m as { status: number; at: number }[])));
    worker.once('error', reject);
  });
}

function blockMainThread(ms: number): number {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // Busy: stands for a long synchronous SQLite call on the main thread.
  }
  return Date.now();
}

describe('the webhook receiver thread', () => {
  it('acknowledges deliveries and answers /healthz while the main thread is blocked', async () => {
    const t = await startTestAgent();
    // Warm the path once (the threads' first use compiles their code).
    assert.equal((await t.post(small(5, 1))).status, 200);
    await t.settle();
    const bodies = [2, 3, 4].map((seq) => JSON.stringify(small(5, seq)));
    const answers = clientThread(t.webhookUrl, bodies, `${t.baseUrl}/healthz`);
    await t.agent.receiverLoopDelay('start');
    // Let the client thread start and send, then block this thread for 3 s.
    await new Promise((r) => setTimeout(r, 150));
    const blockEnded = blockMainThread(3_000);
    const got = await answers;
    const delay = (await t.agent.receiverLoopDelay('stop'))!;
    // The receiver's own loop never stood still for the block (it would be >= 3,000 ms on the main thread).
    assert.ok(delay.maxMs > 0 && delay.maxMs < 1_500, `receiver event-loop delay max ${delay.maxMs} ms`);
    assert.deepEqual(got.map((a) => a.status), [200, 200, 200, 200]);
    for (const a of got) assert.ok(a.at < blockEnded, `an answer came ${a.at - blockEnded} ms after the main thread was free again: it waited for it`);
    // The applier's cues arrive once the main thread runs again: everything is applied, in order.
    await t.settle();
    assert.equal(t.agent.core.status().find((s) => s.locationId === 5)?.lastChangeSequence, 4);
  });

  it('keeps answering after the inbox thread or the receiver thread itself ends unexpectedly', { timeout: 180_000 }, async () => {
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

    // The inbox thread: calls meanwhile get 503 (the sender retries), then the receiver has a new line to it.
    await threadOf(t.agent.inbox, 'thread').terminate();
    const afterInbox = await postUntil200(2);
    assert.ok(afterInbox.every((s) => s === 503 || s === 200), afterInbox.join(', '));

    // The receiver thread: started again on the same port (a refused connection meanwhile is a retry for the sender).
    const receiver = (t.agent as unknown as Record<string, unknown>).receiver;
    await threadOf(receiver, 'thread').terminate();
    const afterReceiver = await postUntil200(3);
    assert.ok(afterReceiver.every((s) => s === 0 || s === 503 || s === 200), afterReceiver.join(', '));
    assert.equal(t.agent.webhook?.url, t.webhookUrl, 'the same address as before');
    await t.settle();
    assert.equal(t.agent.core.status().find((s) => s.locationId === 6)?.lastChangeSequence, 3);
  });
});

// A worker for test/unit/threads/thread-client.test.ts: answers 'ping', and on 'throw' replies and
// then throws an uncaught error (Node then fires 'error' and, once torn down, 'exit'). 'thread' answers
// its thread's id; 'slow' answers after a while (a request in flight); 'close' as a thread's last request.
import { threadId } from 'node:worker_threads';
import { serveRequests } from '../../../src/threads/serve';

export type ThrowingRequest = { readonly type: 'ping' } | { readonly type: 'throw' } | { readonly type: 'thread' } | { readonly type: 'slow'; readonly ms: number } | { readonly type: 'close' };

serveRequests<ThrowingRequest>((request) => {
  if (request.type === 'thread') return threadId;
  if (request.type === 'close') return 'closed';
  if (request.type === 'slow') {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, request.ms);
    return 'slow done';
  }
  if (request.type === 'throw') {
    setImmediate(() => {
      throw new Error('boom in the thread');
    });
    return 'throwing';
  }
  return 'pong';
});

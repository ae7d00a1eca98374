// A worker for test/unit/threads/thread-client.test.ts: answers 'ping', and on 'throw' replies and
// then throws an uncaught error (Node then fires 'error' and, once torn down, 'exit').
import { serveRequests } from '../../../src/threads/serve';

export type ThrowingRequest = { readonly type: 'ping' } | { readonly type: 'throw' };

serveRequests<ThrowingRequest>((request) => {
  if (request.type === 'throw') {
    setImmediate(() => {
      throw new Error('boom in the thread');
    });
    return 'throwing';
  }
  return 'pong';
});

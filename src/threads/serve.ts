import { parentPort } from 'node:worker_threads';
import { serializeError, type ThreadEvent, type ThreadReply, type ThreadRequest } from './thread-client';

/**
 * The worker's end of ThreadClient: handles each request in arrival order (handlers are synchronous:
 * that is the point of the thread) and replies with its value or its error. `emit` sends an event.
 */
export function serveRequests<Request, Event = never>(
  handler: (request: Request, emit: (event: Event) => void) => unknown,
): { emit: (event: Event) => void } {
  const port = parentPort;
  if (!port) throw new Error('this module must run in a worker thread');
  const emit = (event: Event): void => port.postMessage({ kind: 'event', event } satisfies ThreadEvent);
  port.on('message', ({ id, request }: ThreadRequest) => {
    let reply: ThreadReply;
    try {
      reply = { kind: 'reply', id, ok: true, value: handler(request as Request, emit) };
    } catch (err) {
      reply = { kind: 'reply', id, ok: false, error: serializeError(err) };
    }
    port.postMessage(reply);
  });
  port.postMessage({ kind: 'ready' } satisfies ThreadEvent);
  return { emit };
}

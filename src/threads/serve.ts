import { parentPort } from 'node:worker_threads';
import { serializeError, type ThreadEvent, type ThreadReply, type ThreadRequest } from './thread-client';

type Handler<Request, Event> = (request: Request, emit: (event: Event) => void) => unknown;

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/**
 * The worker's end of ThreadClient: answers each request from the thread that started it with
 * `handler`, in arrival order, with its value or its error. A synchronous handler (the applier's: that
 * is the point of its thread) replies before the next message is read; a handler that returns a
 * promise (the webhook thread's) replies when it settles. `emit` sends an event.
 */
export function serveRequests<Request, Event = never>(handler: Handler<Request, Event>): { emit: (event: Event) => void } {
  const port = parentPort;
  if (!port) throw new Error('this module must run in a worker thread');
  const emit = (event: Event): void => port.postMessage({ kind: 'event', event } satisfies ThreadEvent);
  const reply = (message: ThreadReply): void => port.postMessage(message);
  port.on('message', ({ id, request }: ThreadRequest) => {
    try {
      const value = handler(request as Request, emit);
      if (isThenable(value)) {
        value.then(
          (v) => reply({ kind: 'reply', id, ok: true, value: v }),
          (err: unknown) => reply({ kind: 'reply', id, ok: false, error: serializeError(err) }),
        );
        return;
      }
      reply({ kind: 'reply', id, ok: true, value });
    } catch (err) {
      reply({ kind: 'reply', id, ok: false, error: serializeError(err) });
    }
  });
  port.postMessage({ kind: 'ready' } satisfies ThreadEvent);
  return { emit };
}

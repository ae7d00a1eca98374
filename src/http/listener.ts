import type { IncomingMessage, ServerResponse } from 'node:http';
import type Router from 'router';
import { notFound, type ErrorHandler, type Handler } from './errors';

/**
 * A `router` as Node's request listener (what express's app did with its final handler). The app
 * answers every request itself (its last handlers are a 404 and the error handler), so this final
 * step only covers what is left: an error passed on because its answer had begun ends the connection;
 * anything else is answered with `unmatched` or `fail`. It runs outside router's try, so it never throws.
 */
export function requestListener(app: Router.Router, fail: ErrorHandler, unmatched: Handler = notFound): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) =>
    app(req, res, (err?: unknown) => {
      try {
        if (res.headersSent) res.destroy();
        else if (err === undefined || err === null) unmatched(req, res, () => undefined);
        else fail(err, req, res, () => res.destroy());
      } catch {
        res.destroy();
      }
    });
}

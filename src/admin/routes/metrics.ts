import Router from 'router';
import { sendText } from '../../http/reply';
import { sameSecret } from '../../http/secrets';
import { checkHostHeader, windowHostNames } from '../security';

/** What GET /metrics serves (admin/metrics.ts's AgentMetrics). */
export interface MetricsEndpoint {
  /** metrics.bearerToken; null: /metrics is off and answers 404 like any unknown path. */
  readonly token: string | null;
  readonly contentType: string;
  render(): Promise<string>;
  /** Told of each refused call, so a scraper with a wrong token shows up in the figures. */
  refused(reason: 'host_not_allowed' | 'bearer_token'): void;
}

const BEARER = /^Bearer ([\x21-\x7e]+)$/;

/**
 * GET /metrics for a Prometheus scraper, with its own bearer token (metrics.bearerToken, never the
 * window's token or session: a scraper's credential must not open the window). Mounted before the
 * window's access checks; the Host check still applies (loopback only).
 */
export function metricsRoutes(endpoint: MetricsEndpoint, address: () => { readonly host: string; readonly port: number }): Router.Router {
  const router = Router();
  router.get('/metrics', (req, res, next) => {
    const token = endpoint.token;
    if (token === null) {
      next();
      return;
    }
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    const bound = address();
    const host = checkHostHeader(req.headers.host, bound.port, windowHostNames(bound.host));
    if (!host.ok) {
      endpoint.refused('host_not_allowed');
      sendText(res, host.status, 'text/plain', `${host.message}\n`);
      return;
    }
    const offered = BEARER.exec(req.headers.authorization ?? '')?.[1];
    if (offered === undefined || !sameSecret(offered, token)) {
      endpoint.refused('bearer_token');
      res.setHeader('WWW-Authenticate', 'Bearer realm="pos-sync-agent metrics"');
      sendText(res, 401, 'text/plain', 'GET /metrics needs Authorization: Bearer <metrics.bearerToken>\n');
      return;
    }
    endpoint.render().then(
      (body) => sendText(res, 200, endpoint.contentType, body),
      (err: unknown) => next(err),
    );
  });
  return router;
}

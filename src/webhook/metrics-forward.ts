import http from 'node:http';
import { AppError } from '../errors';

/**
 * GET /metrics on the webhook's listener, for a scraper that reaches the site through its tunnel
 * (metrics.throughTunnel): passed on as it came (its Authorization header only) to the status
 * window's server on loopback, which checks the metrics token and answers. Nothing else is
 * forwarded, and the window's own paths stay unreachable from here.
 */
export function forwardMetrics(req: http.IncomingMessage, res: http.ServerResponse, next: (err?: unknown) => void, adminPort: number): void {
  const headers: http.OutgoingHttpHeaders = { host: `127.0.0.1:${adminPort}` };
  if (req.headers.authorization !== undefined) headers.authorization = req.headers.authorization;
  const upstream = http.request({ host: '127.0.0.1', port: adminPort, path: '/metrics', method: 'GET', headers, timeout: 10_000 }, (answer) => {
    const status = answer.statusCode ?? 502;
    res.statusCode = status;
    for (const name of ['content-type', 'www-authenticate', 'cache-control']) {
      const value = answer.headers[name];
      if (value !== undefined) res.setHeader(name, value);
    }
    answer.pipe(res);
  });
  upstream.on('timeout', () => upstream.destroy(new Error('timeout')));
  upstream.on('error', () => {
    if (!res.headersSent) next(new AppError('metrics_unavailable', 503, 'the metrics are not available right now'));
    else res.destroy();
  });
  upstream.end();
}

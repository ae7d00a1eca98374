import { cliCommand } from '../config/invocation';
import type { Config } from '../config/schema';
import { isLoopbackHost } from './server';

/**
 * Who can reach the webhook (issue 10), as a pure decision on the configuration. The receiver is
 * reachable from outside this PC when a tunnel is configured, TLS is on (it only makes sense for
 * callers elsewhere), or it listens on anything but loopback. Then a bearer token is required, unless
 * the site opts out explicitly (webhook.allowUnauthenticated), which is logged at start and shown red.
 *
 * | tunnel, TLS or non-loopback host | bearerToken | allowUnauthenticated | result                    |
 * |----------------------------------|-------------|----------------------|---------------------------|
 * | no                               | any         | any                  | starts (loopback only)    |
 * | yes                              | set         | any                  | starts                    |
 * | yes                              | not set     | false (default)      | refuses to start (exit 3) |
 * | yes                              | not set     | true                 | starts, logged, red light |
 */

export interface Exposure {
  readonly reachableFromOutside: boolean;
  /** Why it is reachable, in the words of the configuration keys. */
  readonly because: readonly string[];
  /** Reachable, no token, and the site chose to allow it. */
  readonly openToAnyone: boolean;
}

export function webhookExposure(config: Pick<Config, 'webhook' | 'tunnel'>): Exposure {
  const because: string[] = [];
  if (config.tunnel) because.push('a tunnel is configured');
  if (config.webhook.tls) because.push('webhook.tls is set');
  if (!isLoopbackHost(config.webhook.host)) because.push(`webhook.host is ${config.webhook.host}, not loopback`);
  const reachableFromOutside = because.length > 0;
  return { reachableFromOutside, because, openToAnyone: reachableFromOutside && config.webhook.bearerToken === null && config.webhook.allowUnauthenticated };
}

export interface ExposureProblem {
  readonly field: string;
  readonly message: string;
}

/** A start-up problem when the receiver would be open to anyone without the site saying so. */
export function webhookExposureProblems(config: Pick<Config, 'webhook' | 'tunnel'>): ExposureProblem[] {
  const e = webhookExposure(config);
  if (!e.reachableFromOutside || config.webhook.bearerToken !== null || config.webhook.allowUnauthenticated) return [];
  return [
    {
      field: 'webhook.bearerToken',
      message:
        `the webhook can be reached from outside this PC (${e.because.join(', ')}) but has no bearer token, so anyone who finds its address could change your prices: ` +
        `set webhook.bearerToken to the token registered with head office (\`${cliCommand('secrets set webhook.bearerToken')}\`), ` +
        'or, only if head office cannot send one, set webhook.allowUnauthenticated to true',
    },
  ];
}

import http from 'node:http';
import type { z } from 'zod';
import { AppError } from '../errors';
import { ACTOR_HEADER, controlTarget, ErrorReply, PingReply } from './control-protocol';

/**
 * One request on the control channel (control-protocol.ts), checked against the route's reply schema.
 * Used by the CLI (cli/control-client.ts) and by the desktop app in client mode (electron/
 * service-client.ts), so it imports nothing that opens a database.
 *
 * A connection the operating system refuses (the socket's or pipe's permissions) fails with the
 * socket error as is (`EACCES`/`EPERM`), so a caller can tell "not allowed" from "nothing listens".
 */

export interface ControlRequest {
  readonly method: 'GET' | 'POST' | 'PUT';
  readonly route: string;
  readonly body?: Buffer | unknown;
}

export class ControlClient {
  constructor(
    readonly endpoint: string,
    private readonly actor: string,
    /** Give up on a request after this long (0: wait as long as it takes, as an import may). */
    private readonly timeoutMs: number = 0,
  ) {}

  request<T>(schema: z.ZodType<T>, req: ControlRequest): Promise<T> {
    const payload = req.body === undefined ? null : Buffer.isBuffer(req.body) ? req.body : Buffer.from(JSON.stringify(req.body));
    return new Promise<T>((resolve, reject) => {
      const r = http.request(
        {
          // On Windows, the pipe the agent's file names now (read here, as the connection is made).
          socketPath: controlTarget(this.endpoint),
          path: req.route,
          method: req.method,
          headers: {
            [ACTOR_HEADER]: this.actor,
            ...(payload ? { 'content-type': Buffer.isBuffer(req.body) ? 'application/octet-stream' : 'application/json', 'content-length': payload.length } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let json: unknown;
            try {
              json = JSON.parse(text);
            } catch {
              reject(new AppError('agent_reply_unreadable', 502, `the running agent answered ${res.statusCode} with something that is not JSON`));
              return;
            }
            const status = res.statusCode ?? 0;
            if (status >= 400) {
              const e = ErrorReply.safeParse(json);
              reject(e.success ? new AppError(e.data.error.id, status, e.data.error.message) : new AppError('agent_failed', status, `the running agent answered ${status}`));
              return;
            }
            const parsed = schema.safeParse(json);
            if (parsed.success) resolve(parsed.data);
            else reject(new AppError('agent_reply_unreadable', 502, `the running agent's answer to ${req.route} has an unexpected shape (is it another version?)`));
          });
        },
      );
      if (this.timeoutMs > 0) {
        r.setTimeout(this.timeoutMs, () => r.destroy(Object.assign(new Error(`no answer on ${this.endpoint} within ${this.timeoutMs} ms`), { code: 'ETIMEDOUT' })));
      }
      r.on('error', reject);
      r.end(payload ?? undefined);
    });
  }

  async ping(): Promise<z.infer<typeof PingReply>> {
    return this.request(PingReply, { method: 'GET', route: '/ping' });
  }
}

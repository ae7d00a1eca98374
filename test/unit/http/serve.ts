import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { after } from 'node:test';
import Router from 'router';
import { errorMiddleware, notFound } from '../../../src/http/errors';
import { requestListener } from '../../../src/http/listener';
import { silentLogger, type Logger } from '../../../src/log';

/** For the src/http tests: a router app on a loopback port, and requests sent byte for byte. */

/**
 * Serves `build`'s routes, then the 404 and the error handler (as the status window does), on
 * 127.0.0.1; closed when the test file ends. Returns the port.
 */
export async function serve(build: (app: Router.Router) => void, log: Logger = silentLogger): Promise<number> {
  const app = Router();
  build(app);
  app.use(notFound);
  const fail = errorMiddleware(log);
  app.use(fail);
  const server = http.createServer(requestListener(app, fail));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return (server.address() as AddressInfo).port;
}

export interface Answer {
  readonly status: number;
  /** Header names in lower case, in the order sent. */
  readonly headers: readonly [string, string][];
  readonly body: Buffer;
  /** Whether the body arrived whole: its last chunk, or as many bytes as Content-Length said. */
  readonly complete: boolean;
  header(name: string): string | undefined;
  json(): unknown;
}

/**
 * Sends `head` (the request line and headers, `\n`-separated; `Host` and `Connection: close` are
 * added) and `body` as they are, no URL normalised, then reads the answer until the server closes.
 */
export function send(target: number | { readonly host: string; readonly port: number }, head: string, body?: Buffer | string, options: { chunked?: boolean } = {}): Promise<Answer> {
  const { host, port } = typeof target === 'number' ? { host: '127.0.0.1', port: target } : target;
  const bytes = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(body);
  const lines = head.split('\n');
  if (!lines.some((l) => /^host:/i.test(l))) lines.push(`host: ${host}:${port}`);
  lines.push('connection: close');
  if (bytes !== undefined && options.chunked) lines.push('transfer-encoding: chunked');
  else if (bytes !== undefined && !lines.some((l) => /^content-length:/i.test(l))) lines.push(`content-length: ${bytes.length}`);
  const start = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
  const request =
    bytes === undefined
      ? start
      : options.chunked
        ? Buffer.concat([start, ...(bytes.length > 0 ? [Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from('\r\n')] : []), Buffer.from('0\r\n\r\n')])
        : Buffer.concat([start, bytes]);
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, host);
    const chunks: Buffer[] = [];
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer within 10 s')));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const all = Buffer.concat(chunks);
      const end = all.indexOf('\r\n\r\n');
      if (end === -1) {
        reject(new Error(`no HTTP answer: ${JSON.stringify(all.toString('latin1'))}`));
        return;
      }
      const [statusLine, ...headerLines] = all.subarray(0, end).toString('latin1').split('\r\n');
      const headers = headerLines.map((l): [string, string] => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]);
      let rest = all.subarray(end + 4);
      const length = headers.find(([k]) => k === 'content-length')?.[1];
      let complete = length === undefined || rest.length === Number(length);
      if (headers.some(([k, v]) => k === 'transfer-encoding' && v === 'chunked')) {
        const parts: Buffer[] = [];
        complete = false;
        for (let at = 0; at < rest.length; ) {
          const nl = rest.indexOf('\r\n', at);
          if (nl === -1) break;
          const size = parseInt(rest.subarray(at, nl).toString('latin1'), 16);
          if (size === 0) complete = true;
          if (!size) break;
          parts.push(rest.subarray(nl + 2, nl + 2 + size));
          at = nl + 2 + size + 2;
        }
        rest = Buffer.concat(parts);
      }
      resolve({
        status: Number(statusLine!.split(' ')[1]),
        headers,
        body: rest,
        complete,
        header: (name) => headers.find(([k]) => k === name.toLowerCase())?.[1],
        json: () => JSON.parse(rest.toString('utf8')) as unknown,
      });
    });
    // Written, not ended: a client that half-closes at once has its request aborted by Node.
    socket.write(request);
  });
}

/**
 * The "machine limit" for receiving a body over HTTP: a bare node:http server that reads the whole
 * request and answers 200, nothing else. Prints `READY <url>` like the agent child.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(`{"bytes":${body.length}}`);
  });
});
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`READY http://127.0.0.1:${port}/webhooks/menu-cycles\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));

import type { ServerResponse } from 'node:http';

/**
 * Answers with text (or bytes) of the given Content-Type, as express's res.status().type().send() did:
 * a text body without a charset in its type gets `; charset=utf-8`; Content-Length is set. For JSON
 * answers see sendJson (errors.ts).
 */
export function sendText(res: ServerResponse, status: number, contentType: string, body: string | Buffer): void {
  res.statusCode = status;
  res.setHeader('Content-Type', typeof body === 'string' && !/;\s*charset=/i.test(contentType) ? `${contentType}; charset=utf-8` : contentType);
  res.setHeader('Content-Length', typeof body === 'string' ? Buffer.byteLength(body) : body.length);
  res.end(body);
}

import type { IncomingMessage } from 'node:http';
import querystring, { type ParsedUrlQuery } from 'node:querystring';
import { splitTarget } from './target';

/**
 * What the routes read of a request besides `req.params` (which `router` sets): the query and a
 * header, as express's `req.query` (its 'simple' query parser) and `req.get()` gave them.
 */

/**
 * The query as Node's `querystring.parse` reads it: flat (`a[b]=c` is the key `a[b]`), a repeated key
 * becomes an array, values are decoded. Parsed on each call, like express's `req.query`. Inside a
 * mounted router the query is the same: mounting strips only the path.
 */
export function query(req: Pick<IncomingMessage, 'url'>): ParsedUrlQuery {
  return querystring.parse(splitTarget(req.url ?? '').query ?? '');
}

/**
 * A request header by name (any case), as one string: Node joins repeated headers with ", ",
 * except `set-cookie` (the one kept as a list; joined here too) and those it keeps once.
 */
export function header(req: Pick<IncomingMessage, 'headers'>, name: string): string | undefined {
  const value = req.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * A request target's path and query, split as express and `router` split it (the `parseurl` package):
 * the route a request matches and the file or query it names must be read from the same path.
 *
 * The usual target (`/path?query`, nothing unusual in it) is split at its first `?`. One holding a
 * `#` or one of the characters Node's legacy `url.parse` treats as white space is what `parseurl`
 * hands to `url.parse`; the parts of that which can matter here are repeated: the white space at
 * either end is trimmed, backslashes before the query become slashes, the fragment is dropped, and an
 * absolute target (`http://host/path`) keeps only its path. (`url.parse` also percent-encodes a few
 * characters, which decoding the path or the query undoes.)
 */

export interface Target {
  /** The path, still percent-encoded. */
  readonly pathname: string;
  /** What follows the first `?` (without it), or null when there is no `?`. */
  readonly query: string | null;
}

/** What makes `parseurl` leave its fast path: tab, line feed, form feed, carriage return, space, `#`, NBSP, BOM. */
const UNUSUAL = /[\t\n\f\r #\u00a0\ufeff]/;
/** The white space `url.parse` trims from either end. */
const EDGE_SPACE = /^[\t\n\f\r \u00a0\ufeff]+|[\t\n\f\r \u00a0\ufeff]+$/g;
/** An absolute target's scheme and authority. */
const ABSOLUTE = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#]*/;

export function splitTarget(url: string): Target {
  if (url.charCodeAt(0) === 0x2f && !UNUSUAL.test(url)) return atQuery(url);
  let rest = url.replace(EDGE_SPACE, '');
  const split = rest.search(/[?#]/);
  const head = split === -1 ? rest : rest.slice(0, split);
  rest = head.replace(/\\/g, '/') + (split === -1 ? '' : rest.slice(split));
  const hash = rest.indexOf('#');
  if (hash !== -1) rest = rest.slice(0, hash);
  const absolute = ABSOLUTE.exec(rest);
  if (absolute) {
    rest = rest.slice(absolute[0].length);
    if (rest === '' || rest.startsWith('?')) rest = `/${rest}`;
  }
  return atQuery(rest);
}

function atQuery(url: string): Target {
  const q = url.indexOf('?');
  return q === -1 ? { pathname: url, query: null } : { pathname: url.slice(0, q), query: url.slice(q + 1) };
}

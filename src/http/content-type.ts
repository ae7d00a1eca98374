/**
 * A request's `Content-Type`, read as express's body parsers read it (the `content-type`, `type-is`
 * and `media-typer` packages), so the same bodies are taken as JSON and the same charsets refused:
 * the type is what comes before the first `;`, without the spaces and tabs around it, in lower case,
 * and counts only when it is a well-formed `type/subtype`; the parameters are read leniently (the
 * first of a name wins, a value may be quoted, one without `=` is skipped).
 */

/** A `type/subtype` as `media-typer` accepts it (after lower-casing). */
const MEDIA_TYPE = /^ *([A-Za-z0-9][A-Za-z0-9!#$&^_-]{0,126})\/([A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}) *$/;

const SP = 0x20;
const HTAB = 0x09;
const SEMI = 0x3b;
const EQ = 0x3d;
const DQUOTE = 0x22;
const BSLASH = 0x5c;

function skipSpace(text: string, index: number): number {
  while (index < text.length && (text.charCodeAt(index) === SP || text.charCodeAt(index) === HTAB)) index++;
  return index;
}

function trimEnd(text: string, start: number, end: number): number {
  while (end > start && (text.charCodeAt(end - 1) === SP || text.charCodeAt(end - 1) === HTAB)) end--;
  return end;
}

function toSemicolon(text: string, index: number): number {
  const at = text.indexOf(';', index);
  return at === -1 ? text.length : at;
}

/** The media type (`application/json`), lower case, or null when there is none or it is malformed. */
export function mediaTypeOf(header: string | undefined): string | null {
  if (!header) return null;
  const start = skipSpace(header, 0);
  const type = header.slice(start, trimEnd(header, start, toSemicolon(header, start))).toLowerCase();
  return MEDIA_TYPE.test(type) ? type : null;
}

/** The parameters after the type; names in lower case, values as sent. */
export function parametersOf(header: string | undefined): Map<string, string> {
  const params = new Map<string, string>();
  if (!header) return params;
  const len = header.length;
  let index = toSemicolon(header, skipSpace(header, 0));
  parameter: while (index < len) {
    index = skipSpace(header, index + 1);
    const keyStart = index;
    while (index < len) {
      const code = header.charCodeAt(index);
      if (code === SEMI) continue parameter;
      if (code === EQ) {
        const key = header.slice(keyStart, trimEnd(header, keyStart, index)).toLowerCase();
        index = skipSpace(header, index + 1);
        if (index < len && header.charCodeAt(index) === DQUOTE) {
          index++;
          let value = '';
          while (index < len) {
            const c = header.charCodeAt(index++);
            if (c === DQUOTE) {
              index = toSemicolon(header, index);
              if (!params.has(key)) params.set(key, value);
              break;
            }
            if (c === BSLASH && index < len) {
              value += header[index++];
              continue;
            }
            value += String.fromCharCode(c);
          }
          continue parameter;
        }
        const valueStart = index;
        index = toSemicolon(header, index);
        if (!params.has(key)) params.set(key, header.slice(valueStart, trimEnd(header, valueStart, index)));
        continue parameter;
      }
      index++;
    }
  }
  return params;
}

/** The `charset` parameter in lower case; undefined when absent (an empty one is ''). */
export function charsetOf(header: string | undefined): string | undefined {
  return parametersOf(header).get('charset')?.toLowerCase();
}

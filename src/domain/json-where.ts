import { parseExact } from './json-scan';

/**
 * Where and why a JSON text does not parse, as "<what was expected> at line L, column C", without
 * quoting any of it: the configuration and secrets files hold tokens and passwords, and the native
 * JSON.parse's message quotes the text around the error, which then reaches the journal or a
 * service's log. The reason comes from parseExact (held to accept exactly what JSON.parse accepts),
 * whose messages are fixed words. Pure.
 */
export function jsonErrorWhere(text: string): string {
  const at = (pos: number): string => {
    const before = text.slice(0, pos);
    return `line ${before.split('\n').length}, column ${pos - before.lastIndexOf('\n')}`;
  };
  try {
    parseExact(text);
  } catch (err) {
    const m = /^(.*) at position (\d+)$/.exec(err instanceof Error ? err.message : '');
    if (m) return `${m[1]} at ${at(Number(m[2]))}`;
  }
  // parseExact reads a string with escapes through JSON.parse, whose error names the string's own
  // offset: the whole text's position comes from JSON.parse itself, its words kept only when they
  // quote nothing ("Bad escaped character in JSON at position …").
  try {
    JSON.parse(text);
  } catch (err) {
    const m = /^(.*?)(?: in JSON)? at position (\d+)/.exec(err instanceof Error ? err.message : '');
    if (m) return `${/['"]/.test(m[1]!) ? 'not valid here' : m[1]!.toLowerCase()} at ${at(Number(m[2]))}`;
  }
  return 'it does not parse';
}

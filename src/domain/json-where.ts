import { parseExact } from './json-scan';

/**
 * Where and why a JSON text does not parse, as "<what was expected> at line L, column C", without
 * quoting any of it: the configuration and secrets files hold tokens and passwords, and the native
 * JSON.parse's message quotes the text around the error, which then reaches the journal or a
 * service's log. The reason comes from parseExact (held to accept exactly what JSON.parse accepts),
 * whose messages are fixed words. Pure.
 */
export function jsonErrorWhere(text: string): string {
  try {
    parseExact(text);
  } catch (err) {
    const m = /^(.*) at position (\d+)$/.exec(err instanceof Error ? err.message : '');
    if (m) {
      const pos = Number(m[2]);
      const before = text.slice(0, pos);
      const line = before.split('\n').length;
      const column = pos - before.lastIndexOf('\n');
      return `${m[1]} at line ${line}, column ${column}`;
    }
  }
  return 'it does not parse';
}

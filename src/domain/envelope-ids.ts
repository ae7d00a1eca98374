import { MAX_MEMBER_BYTES } from './body';
import { BACKSLASH, bomLength, CLOSE_BRACE, CLOSE_BRACKET, COLON, COMMA, isWhitespace, OPEN_BRACE, OPEN_BRACKET, parseExact, QUOTE } from './json-scan';
import { SCAN_BLOCK_BYTES, type ByteSource } from './json-scan-stream';
import { envelopeInteger } from './payload';
import { runSteps, type Steps } from './steps';

/**
 * Which update a refused body was: its envelope's LocationID and ChangeSequence, read from the top
 * level of the bytes as sent, whatever else in the body was refused (an item nested too deep, too
 * many values, bytes that are not UTF-8 in an item...). The delivery's row then names the update, so
 * `status` can say that the update a gap waits for arrived and was refused (src/store/queries.ts),
 * rather than that it has not arrived.
 *
 * Constant memory whatever the body: one pass over the bytes counting nesting, strings skipped byte by
 * byte, and only the two members' values kept (each at most MAX_MEMBER_BYTES). Each value is read
 * exactly as an accepted body's is (parseExact, then envelopeInteger: a number or a string of
 * digits). Null when the body is not an object, either member is missing or unreadable, or one is sent
 * more than once with different values (which one head office meant is not known). The top level of a
 * body that is not JSON is read as far as it goes: what it names before it breaks is what was sent.
 */
export interface EnvelopeIds {
  readonly locationId: number;
  readonly changeSequence: number;
}

const KEYS = ['LocationID', 'ChangeSequence'] as const;
type Key = (typeof KEYS)[number];

/** Longer than either key, even written with \u escapes throughout. */
const MAX_KEY_BYTES = 1024;

/** Bytes kept across pieces, up to a limit (past it, only that it overflowed). */
class Capture {
  private readonly parts: Buffer[] = [];
  private bytes = 0;
  overflow = false;
  constructor(private readonly limit: number) {}
  add(piece: Buffer): void {
    if (this.overflow) return;
    this.bytes += piece.length;
    if (this.bytes > this.limit) {
      this.overflow = true;
      this.parts.length = 0;
      return;
    }
    if (piece.length > 0) this.parts.push(Buffer.from(piece));
  }
  text(): string | null {
    return this.overflow ? null : Buffer.concat(this.parts).toString('utf8');
  }
}

/** The identifiers of the body in `raw` (see EnvelopeIds). */
export function envelopeIdsOf(raw: Buffer): EnvelopeIds | null {
  return runSteps(envelopeIdsSteps({ length: raw.length, read: (start, end) => raw.subarray(start, end) }, Math.max(1, raw.length)));
}

/** envelopeIdsOf of the bytes `source` holds, `block` bytes at a time, in steps: one after each piece. */
export function* envelopeIdsSteps(source: ByteSource, block: number = SCAN_BLOCK_BYTES): Steps<EnvelopeIds | null> {
  // The values each of the two members was sent with (null: one that cannot be an identifier).
  const found = new Map<Key, (string | null)[]>(KEYS.map((k) => [k, []]));
  let started = false;
  let depth = 0;
  let inString = false;
  let escaped = false;
  // At the top level: what comes next.
  let expect: 'key' | 'colon' | 'value' | 'in-value' | 'comma' = 'key';
  let keyCapture: Capture | null = null;
  let member: Key | null = null;
  let valueCapture: Capture | null = null;
  let done = false;

  const endValue = (): void => {
    if (member !== null && valueCapture !== null) found.get(member)!.push(valueCapture.text());
    valueCapture = null;
    member = null;
  };

  let pos = bomLength(source.read(0, Math.min(3, source.length)));
  while (pos < source.length && !done) {
    const end = Math.min(source.length, pos + Math.max(1, block));
    const piece = source.read(pos, end);
    let keyFrom = 0;
    let valueFrom = 0;
    for (let i = 0; i < piece.length && !done; i++) {
      const c = piece[i]!;
      if (!started) {
        if (isWhitespace(c)) continue;
        if (c !== OPEN_BRACE) return null;
        started = true;
        depth = 1;
        continue;
      }
      if (inString) {
        if (escaped) escaped = false;
        else if (c === BACKSLASH) escaped = true;
        else if (c === QUOTE) {
          inString = false;
          if (keyCapture !== null) {
            keyCapture.add(piece.subarray(keyFrom, i + 1));
            const text = keyCapture.text();
            keyCapture = null;
            let key: unknown = null;
            try {
              key = text === null ? null : parseExact(text);
            } catch {
              key = null;
            }
            member = typeof key === 'string' && (KEYS as readonly string[]).includes(key) ? (key as Key) : null;
            expect = 'colon';
          }
        }
        continue;
      }
      if (depth > 1) {
        if (c === QUOTE) inString = true;
        else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
        else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
        continue;
      }
      // The top level, outside strings.
      if (isWhitespace(c)) continue;
      if (expect === 'key') {
        if (c === QUOTE) {
          inString = true;
          keyCapture = new Capture(MAX_KEY_BYTES);
          keyFrom = i;
        } else if (c === CLOSE_BRACE) done = true;
        else done = true; // not JSON from here: what was read so far stands
        continue;
      }
      if (expect === 'colon') {
        if (c === COLON) expect = 'value';
        else done = true;
        continue;
      }
      if (expect === 'value' || expect === 'in-value') {
        if (expect === 'value') {
          if (c === COMMA || c === CLOSE_BRACE) {
            done = true;
            continue;
          }
          expect = 'in-value';
          if (member !== null) {
            valueCapture = new Capture(MAX_MEMBER_BYTES);
            valueFrom = i;
          }
        }
        if (c === COMMA || c === CLOSE_BRACE) {
          valueCapture?.add(piece.subarray(valueFrom, i));
          endValue();
          expect = 'key';
          if (c === CLOSE_BRACE) done = true;
        } else if (c === QUOTE) inString = true;
        else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
          depth++;
          // An object or an array is no identifier.
          if (member !== null) {
            found.get(member)!.push(null);
            member = null;
            valueCapture = null;
          }
        }
        continue;
      }
    }
    if (!done) {
      keyCapture?.add(piece.subarray(keyFrom));
      valueCapture?.add(piece.subarray(valueFrom));
    }
    pos = end;
    yield;
  }
  // A body cut short after a value: the value as far as it went (parsed below, so a cut one is refused).
  if (!done && !inString && depth === 1 && expect === 'in-value') endValue();
  const read = (key: Key): number | null => {
    const values = found.get(key)!;
    if (values.length === 0) return null;
    let id: number | null = null;
    for (const text of values) {
      if (text === null) return null;
      let value: unknown;
      try {
        value = parseExact(text);
      } catch {
        return null;
      }
      const n = envelopeInteger(value);
      if (n === null || (id !== null && n !== id)) return null;
      id = n;
    }
    return id;
  };
  const locationId = read('LocationID');
  const changeSequence = read('ChangeSequence');
  return locationId === null || changeSequence === null ? null : { locationId, changeSequence };
}

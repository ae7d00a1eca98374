/**
 * Reads a JSON object body without building it whole: the top-level members are located (their keys
 * decoded, their values as byte spans), and the elements of one array member (the update's
 * ScheduledItems) as byte spans too. Each span is then parsed on its own, so a large publication is
 * never one whole string and one object graph at once: the receiver validates item by item and the
 * applier plans item by item.
 *
 * The scanner checks the structure it walks (object and array punctuation, string quoting and
 * escapes, where values start and end); whatever lies inside a value is checked by the parser that
 * reads the span (JSON.parse), so together they accept exactly what JSON.parse accepts. A UTF-8
 * byte-order mark before the body is skipped (files saved on Windows often carry one).
 */

export interface Span {
  readonly start: number;
  readonly end: number;
}

export interface ScannedObject {
  /** Each top-level member's value, by key; a repeated key keeps its last value, as JSON.parse does. */
  readonly members: ReadonlyMap<string, Span>;
  /** The keys sent more than once with different values (repeatedTopLevel), in the order found. */
  readonly repeated: ReadonlySet<string>;
  /** The elements of the array member named by `arrayMember`, when that member is an array. */
  readonly elements: readonly Span[] | null;
}

/**
 * A body past a limit its reader set (too many elements in the array member, the other members too
 * long to parse, arrays and objects nested too deep, or too many values in one element): balanced as
 * far as it was read, too large to read further.
 */
export class JsonLimitError extends Error {
  constructor(
    readonly kind: 'elements' | 'members' | 'depth' | 'values',
    /**
     * Where: the array's name (elements), the member whose bytes passed the limit (members), the
     * path of the value nested too deep, e.g. `ScheduledItems[2].PriceUpdates[0].PriceModel[0]...`
     * (depth), or the element with too many values, e.g. `ScheduledItems[2]` (values).
     */
    readonly key: string,
    readonly limit: number,
    /**
     * The body's byte offset of the bracket one level too deep (depth), or of the ',' or opening
     * bracket just before the first value past the limit (values); else -1.
     */
    readonly offset = -1,
  ) {
    super(
      kind === 'elements'
        ? `${key} has more than ${limit} elements`
        : kind === 'members'
          ? `the members other than the array member take more than ${limit} bytes together (past it at ${key})`
          : kind === 'depth'
            ? `${key} is nested more than ${limit} levels deep at byte ${offset}`
            : `${key} holds more than ${limit} values (past it at byte ${offset})`,
    );
  }
}

/** Limits on what scanObject and parseLazily read (none by default). */
export interface ScanLimits {
  /** The most elements the array member may hold. */
  readonly maxElements?: number;
  /** The most bytes the other members may take together (each is parsed whole, and all are kept). */
  readonly maxMemberBytes?: number;
  /**
   * The most levels of arrays and objects, the body's own object being the first. Parsing costs
   * memory by the level as well as by the byte, so a deep value costs far more than its size.
   */
  readonly maxDepth?: number;
  /**
   * The most values one element of the array member may hold, itself included: every number,
   * string, true, false and null, and every array and object (a member's name is not a value).
   * Parsing costs memory by the value as well as by the byte, so an element of many small values
   * costs far more than its size.
   */
  readonly maxElementValues?: number;
}

export class JsonScanError extends SyntaxError {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(`${message} at byte ${offset}`);
  }
}

export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;

export function isWhitespace(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

export function bomLength(bytes: Uint8Array): number {
  return bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
}

/** Just after the closing quote of the string whose content starts at `pos`; -1 when unterminated. */
function stringEnd(b: Uint8Array, pos: number): number {
  const n = b.length;
  for (let i = pos; i < n; i++) {
    const c = b[i]!;
    if (c === QUOTE) return i + 1;
    if (c === BACKSLASH) i++;
  }
  return -1;
}

/** Why containerEnd last failed: see there. */
const MISMATCHED_OR_UNTERMINATED = 0;
const TOO_DEEP = 1;
const TOO_MANY_VALUES = 2;
let containerFailure = MISMATCHED_OR_UNTERMINATED;

function containerFailed(why: number, offset: number): number {
  containerFailure = why;
  return -(offset + 1);
}

/**
 * Just after the bracket that closes the object or array opening at `pos` (brackets inside strings
 * ignored), when it holds no more than `levels` levels of arrays and objects, itself the first, and
 * no more than `values` values besides itself. On failure, -(offset + 1), and containerFailure says
 * why: MISMATCHED_OR_UNTERMINATED (offset: the mismatched bracket, or the end, b.length), TOO_DEEP
 * (the bracket that opens one level too many) or TOO_MANY_VALUES (the ',' or opening bracket just
 * before the first value past `values`). Values are counted without telling them apart: a container
 * holds one more after each ',' and, unless it is empty, one after its opening bracket. A tight loop
 * over local variables: it walks every byte of the largest publication, so the count costs a
 * decrement per ',' and per bracket.
 */
function containerEnd(b: Uint8Array, pos: number, levels: number, values: number): number {
  const n = b.length;
  const stack: number[] = [];
  let left = values;
  let i = pos;
  while (i < n) {
    const d = b[i]!;
    if (d === QUOTE) {
      const after = stringEnd(b, i + 1);
      if (after < 0) return containerFailed(MISMATCHED_OR_UNTERMINATED, n);
      i = after;
      continue;
    }
    if (d === COMMA) {
      if (--left < 0) return containerFailed(TOO_MANY_VALUES, i);
    } else if (d === OPEN_BRACE || d === OPEN_BRACKET) {
      if (stack.push(d === OPEN_BRACE ? CLOSE_BRACE : CLOSE_BRACKET) > levels) return containerFailed(TOO_DEEP, i);
      // Its first value, unless it closes at once: decided by the first byte after the whitespace,
      // so a window that ends before that byte (json-scan-stream.ts) reads on instead of deciding.
      const open = i;
      i++;
      while (i < n && isWhitespace(b[i]!)) i++;
      if (i < n && b[i] !== CLOSE_BRACE && b[i] !== CLOSE_BRACKET && --left < 0) return containerFailed(TOO_MANY_VALUES, open);
      continue;
    } else if (d === CLOSE_BRACE || d === CLOSE_BRACKET) {
      if (stack.pop() !== d) return containerFailed(MISMATCHED_OR_UNTERMINATED, i);
      if (stack.length === 0) return i + 1;
    }
    i++;
  }
  return containerFailed(MISMATCHED_OR_UNTERMINATED, n);
}

/**
 * A member's name as part of a path: `.Name`, or `["odd name"]` for one that is not a plain word
 * (JSON-escaped, so a path is always plain, well-formed text).
 */
function namePart(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`;
}

/** How much of the path inside a value too deep its refusal names; the rest is written `...`. */
const SHOWN_PATH_PARTS = 4;

/**
 * The path from the value opening at `start` to the bracket at `at` (one level too deep), as
 * `.Name` and `[index]` parts: a refusal names where the nesting is, not just the top-level member
 * or item. Only called to word a refusal; the bytes before `at` are balanced (containerEnd walked
 * them), and whatever else is wrong with them is the parser's to say, so a name that does not
 * decode ends the path.
 */
function pathWithin(b: Uint8Array, start: number, at: number): string {
  const parts: (string | number)[] = [];
  const inArray: boolean[] = [];
  let i = start;
  while (i < at) {
    const d = b[i]!;
    if (d === QUOTE) {
      const after = stringEnd(b, i + 1);
      if (after < 0 || after > at) break;
      let j = after;
      while (j < at && isWhitespace(b[j]!)) j++;
      if (inArray.length > 0 && !inArray[inArray.length - 1] && b[j] === COLON) {
        let key: unknown;
        try {
          key = JSON.parse(Buffer.from(b.buffer, b.byteOffset + i, after - i).toString('utf8'));
        } catch {
          key = undefined;
        }
        if (typeof key !== 'string') break;
        parts[parts.length - 1] = key;
      }
      i = after;
      continue;
    }
    if (d === OPEN_BRACE || d === OPEN_BRACKET) {
      inArray.push(d === OPEN_BRACKET);
      parts.push(d === OPEN_BRACKET ? 0 : '');
    } else if (d === CLOSE_BRACE || d === CLOSE_BRACKET) {
      inArray.pop();
      parts.pop();
    } else if (d === COMMA && inArray[inArray.length - 1] === true) {
      parts[parts.length - 1] = (parts[parts.length - 1] as number) + 1;
    }
    i++;
  }
  const shown = parts.slice(0, SHOWN_PATH_PARTS).map((part) => (typeof part === 'number' ? `[${part}]` : namePart(part)));
  return shown.join('') + (parts.length > SHOWN_PATH_PARTS || i < at ? '...' : '');
}

/**
 * Walks the structure of bytes `b`. `origin` is where `b` starts in the whole body (a window of it, read
 * piece by piece: json-scan-stream.ts), so an error names the body's byte offset either way.
 */
export class Scanner {
  pos: number;

  constructor(
    readonly b: Uint8Array,
    start: number,
    private readonly origin = 0,
    /** ScanLimits.maxDepth: the most levels of arrays and objects, the body's own object the first. */
    private readonly maxDepth = Number.POSITIVE_INFINITY,
    /** ScanLimits.maxElementValues: the most values one element of the array member may hold. */
    private readonly maxElementValues = Number.POSITIVE_INFINITY,
  ) {
    this.pos = start;
  }

  fail(message: string): never {
    throw new JsonScanError(this.pos >= this.b.length ? `${message}: unexpected end of input` : message, this.pos + this.origin);
  }

  ws(): void {
    const b = this.b;
    while (this.pos < b.length && isWhitespace(b[this.pos]!)) this.pos++;
  }

  expect(byte: number, what: string): void {
    if (this.b[this.pos] !== byte) this.fail(`expected ${what}`);
    this.pos++;
  }

  /** From an opening quote to just after its closing quote. */
  string(): void {
    this.expect(QUOTE, 'a string');
    this.pos = stringEnd(this.b, this.pos);
    if (this.pos < 0) {
      this.pos = this.b.length;
      this.fail('unterminated string');
    }
  }

  /**
   * Refuses the bracket here, the array member's own, when its level `depth` is past maxDepth (its
   * elements are then each checked by value()).
   */
  level(depth: number, key: string): void {
    if (depth > this.maxDepth) throw new JsonLimitError('depth', key, this.maxDepth, this.pos + this.origin);
  }

  /**
   * Skips one value; nested content is only balanced here (its parser checks the rest), no deeper
   * than maxDepth, and, for an element of the array member, holding no more than maxElementValues
   * values. `depth` is the value's own level (the body's object is the first); `key` (and `index`, for
   * an element of the array member: only then are its values counted) names it in a refusal.
   */
  value(depth = 1, key = '', index = -1): void {
    const b = this.b;
    const c = b[this.pos];
    if (c === undefined) this.fail('expected a value');
    const counted = index >= 0;
    if (counted && this.maxElementValues < 1) throw new JsonLimitError('values', `${key}[${index}]`, this.maxElementValues, this.pos + this.origin);
    if (c === QUOTE) {
      this.string();
      return;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      // Uncounted, a value can hold no more values than the window has bytes: a small integer, which
      // keeps the count in the loop a small integer too.
      const end = containerEnd(b, this.pos, this.maxDepth - depth + 1, counted ? Math.min(this.maxElementValues - 1, b.length) : b.length);
      if (end < 0) {
        const at = -end - 1;
        if (containerFailure === TOO_DEEP) {
          const where = `${key}${counted ? `[${index}]` : ''}${pathWithin(b, this.pos, at)}`;
          throw new JsonLimitError('depth', where, this.maxDepth, at + this.origin);
        }
        if (containerFailure === TOO_MANY_VALUES) throw new JsonLimitError('values', `${key}[${index}]`, this.maxElementValues, at + this.origin);
        this.pos = at;
        this.fail(this.pos >= b.length ? 'unterminated object or array' : 'mismatched bracket');
      }
      this.pos = end;
      return;
    }
    // A number or a literal: up to the next delimiter.
    const start = this.pos;
    while (this.pos < b.length) {
      const d = b[this.pos]!;
      if (d === COMMA || d === CLOSE_BRACE || d === CLOSE_BRACKET || isWhitespace(d)) break;
      this.pos++;
    }
    if (this.pos === start) this.fail('expected a value');
  }
}

/**
 * Scans a body that must be one JSON object. Throws JsonScanError (a SyntaxError) where the structure
 * is wrong; the spans still have to be parsed to know their content is valid.
 */
export function scanObject(bytes: Uint8Array, arrayMember: string, decodeKey: (span: Span) => string, limits: ScanLimits = {}): ScannedObject {
  const maxElements = limits.maxElements ?? Number.POSITIVE_INFINITY;
  const s = new Scanner(bytes, bomLength(bytes), 0, limits.maxDepth, limits.maxElementValues);
  const members = new Map<string, Span>();
  const repeated = new Set<string>();
  let elements: Span[] | null = null;
  s.ws();
  s.expect(OPEN_BRACE, 'a JSON object');
  s.ws();
  if (bytes[s.pos] === CLOSE_BRACE) s.pos++;
  else {
    for (;;) {
      s.ws();
      const keyStart = s.pos;
      s.string();
      const key = decodeKey({ start: keyStart, end: s.pos });
      s.ws();
      s.expect(COLON, "':' after a key");
      s.ws();
      const valueStart = s.pos;
      if (key === arrayMember && bytes[s.pos] === OPEN_BRACKET) {
        const found: Span[] = [];
        s.level(2, arrayMember);
        s.pos++;
        s.ws();
        if (bytes[s.pos] === CLOSE_BRACKET) s.pos++;
        else {
          for (;;) {
            s.ws();
            const elementStart = s.pos;
            s.value(3, arrayMember, found.length);
            if (found.length >= maxElements) throw new JsonLimitError('elements', arrayMember, maxElements);
            found.push({ start: elementStart, end: s.pos });
            s.ws();
            const sep = bytes[s.pos];
            if (sep === COMMA) {
              s.pos++;
              continue;
            }
            s.expect(CLOSE_BRACKET, "',' or ']' in an array");
            break;
          }
        }
        elements = found;
      } else {
        s.value(2, key);
        if (key === arrayMember) elements = null;
      }
      const earlier = members.get(key);
      if (earlier !== undefined && repeatedTopLevel(key, arrayMember, earlier, { start: valueStart, end: s.pos }, (span) => bytes.subarray(span.start, span.end))) repeated.add(key);
      members.set(key, { start: valueStart, end: s.pos });
      s.ws();
      const sep = bytes[s.pos];
      if (sep === COMMA) {
        s.pos++;
        continue;
      }
      s.expect(CLOSE_BRACE, "',' or '}' in an object");
      break;
    }
  }
  s.ws();
  if (s.pos !== bytes.length) s.fail('unexpected content after the JSON object');
  return { members, elements, repeated };
}

/** Above this, a repeated top-level member's two values are not compared: they count as different. */
const REPEAT_COMPARED_BYTES = 64 * 1024;

/**
 * Whether a top-level key seen again marks the body as repeating it: the array member always (two
 * lists of items), any other when its two values' bytes differ (or are too long to compare). The
 * same rule in scanObject and scanObjectSteps, so both readers refuse the same bodies.
 */
export function repeatedTopLevel(key: string, arrayMember: string, earlier: Span, later: Span, bytesOf: (span: Span) => Uint8Array): boolean {
  if (key === arrayMember) return true;
  const length = earlier.end - earlier.start;
  if (length !== later.end - later.start || length > REPEAT_COMPARED_BYTES) return true;
  return Buffer.compare(bytesOf(earlier), bytesOf(later)) !== 0;
}

export interface LazyBody {
  /** Every top-level member parsed, except the array member's elements (see `elements`). */
  readonly head: Record<string, unknown>;
  /** Where each member of `head` is, by key (the source of `head`, for reading it again later). */
  readonly headSpans: ReadonlyMap<string, Span>;
  /** The array member's elements as spans (null when it is absent or not an array: then `head` has it). */
  readonly elements: readonly Span[] | null;
  /** The top-level keys sent more than once with different values (ScannedObject.repeated). */
  readonly repeated: ReadonlySet<string>;
  /** Parses one element. */
  element(span: Span): unknown;
}

/**
 * A body read lazily: its structure scanned, its members other than `arrayMember` parsed, and that
 * member's elements left as spans to parse one at a time. Throws a SyntaxError where JSON.parse would.
 * `parse` reads one value's text (JSON.parse, or a reader that keeps numbers' source text).
 */
export function parseLazily(
  bytes: Buffer,
  arrayMember: string,
  parse: (text: string) => unknown = JSON.parse,
  /** Where the elements' text comes from later (default: `bytes`), so `bytes` can be released after this returns. */
  elementText?: (span: Span) => string,
  limits: ScanLimits = {},
): LazyBody {
  const text = (span: Span): string => bytes.toString('utf8', span.start, span.end);
  const scanned = scanObject(bytes, arrayMember, (span) => {
    const key = parse(text(span));
    if (typeof key !== 'string') throw new JsonScanError('expected a string key', span.start);
    return key;
  }, limits);
  const head: Record<string, unknown> = {};
  const headSpans = new Map<string, Span>();
  const limit = membersLimit(limits);
  for (const [key, span] of scanned.members) {
    if (key === arrayMember && scanned.elements !== null) continue;
    limit(key, span);
    setMember(head, key, parse(text(span)));
    headSpans.set(key, span);
  }
  const read = elementText ?? text;
  return { head, headSpans, elements: scanned.elements, repeated: scanned.repeated, element: (span) => parse(read(span)) };
}

/**
 * Counts the bytes of the members other than the array member, in the order they are parsed (each
 * span passed in turn), and throws JsonLimitError once together they take more than maxMemberBytes:
 * each is parsed whole and all are kept while the body is read, so their count must not multiply
 * the memory one may take.
 */
export function membersLimit(limits: ScanLimits): (key: string, span: Span) => void {
  const max = limits.maxMemberBytes;
  let total = 0;
  return (key, span) => {
    total += span.end - span.start;
    if (max !== undefined && total > max) throw new JsonLimitError('members', key, max);
  };
}

/**
 * A JSON number as head office wrote it. JSON.parse turns every number into a binary float, so
 * `11.499999999999999999` became 11.5 and `12345678901234567890` lost its last digits before the domain
 * could see them. `parseExact` keeps the text instead, and the domain reads money and identifiers from
 * it (src/domain/numbers.ts). A JSON.parse reviver could recover the same text through its
 * `context.source`, with the same results, but it calls back for every value of the large
 * documents head office sends, which this scanner does not (`npm run bench:parse` compares
 * parseExact with JSON.parse).
 */
export class JsonNumber {
  constructor(readonly source: string) {}

  /** For messages that quote a sent value: the number as a number where that is exact, else its text. */
  toJSON(): number | string {
    const n = Number(this.source);
    return String(n) === this.source ? n : this.source;
  }
}

/**
 * Arrays shorter than this are copied at their ']' to their exact length. An array grown by push
 * reserves room for more values than it holds, as much as this many for its first one, so an item
 * of many short arrays took more memory than JSON.parse takes for it; a longer array keeps
 * its room (a smaller share of its size), and is not copied, as a real item's price and schedule
 * lists are not (test/unit/domain/json-values.test.ts compares the two parsers).
 */
const SHORT_ARRAY = 17;

interface Frame {
  readonly container: unknown[] | Record<string, unknown>;
  readonly isArray: boolean;
  key: string;
}

function fail(text: string, pos: number, message: string): never {
  throw new SyntaxError(`${pos >= text.length ? `${message}: unexpected end of input` : message} at position ${pos}`);
}

function skipWhitespace(text: string, pos: number): number {
  const n = text.length;
  while (pos < n) {
    const c = text.charCodeAt(pos);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
    pos++;
  }
  return pos;
}

/**
 * Where the string opening at `open` ends: the index of its closing quote, or -(index + 1) when it
 * has an escape (the caller decodes it with JSON.parse then). Throws where the string is unterminated
 * or holds a raw control character.
 */
function stringClose(text: string, open: number): number {
  const n = text.length;
  let pos = open + 1;
  let escaped = false;
  while (pos < n) {
    const c = text.charCodeAt(pos);
    if (c === QUOTE) return escaped ? -(pos + 1) : pos;
    if (c === BACKSLASH) {
      escaped = true;
      pos += 2;
      continue;
    }
    if (c < 0x20) fail(text, pos, 'unescaped control character in a string');
    pos++;
  }
  return fail(text, pos, 'unterminated string');
}

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;

/**
 * Just after the JSON number starting at `pos` (-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?, the longest
 * match), or -1 when none starts there.
 */
function numberEnd(text: string, pos: number): number {
  let i = pos;
  if (text.charCodeAt(i) === 0x2d) i++;
  const first = text.charCodeAt(i);
  if (first === 0x30) i++;
  else if (first >= 0x31 && first <= 0x39) {
    i++;
    while (isDigit(text.charCodeAt(i))) i++;
  } else return -1;
  if (text.charCodeAt(i) === 0x2e && isDigit(text.charCodeAt(i + 1))) {
    i += 2;
    while (isDigit(text.charCodeAt(i))) i++;
  }
  const e = text.charCodeAt(i);
  if (e === 0x65 || e === 0x45) {
    let j = i + 1;
    const sign = text.charCodeAt(j);
    if (sign === 0x2b || sign === 0x2d) j++;
    if (isDigit(text.charCodeAt(j))) {
      i = j + 1;
      while (isDigit(text.charCodeAt(i))) i++;
    }
  }
  return i;
}

/**
 * A member name at `pos` (after whitespace) and the ':' after it; returns the name, and moves `at.pos`
 * past the colon. `previous` is the name before it in the same object (FIRST_MEMBER for the first).
 */
function readKey(text: string, at: { pos: number }, previous: string): string {
  const n = text.length;
  let pos = skipWhitespace(text, at.pos);
  if (text.charCodeAt(pos) !== QUOTE) fail(text, pos, 'expected a string');
  // The name that followed `previous` last time, if it is here: checked in place, to its closing quote.
  const guess = NEXT_NAME.get(previous);
  let key: string;
  if (guess !== undefined && text.startsWith(guess, pos + 1) && text.charCodeAt(pos + 1 + guess.length) === QUOTE) {
    key = guess;
    pos += guess.length + 2;
  } else {
    // A name without escapes is compared in place with the names seen before (no new string for
    // the same few names read a million times); anything else takes the general path.
    let end = pos + 1;
    for (let c = text.charCodeAt(end); end < n && c !== QUOTE && c !== BACKSLASH && c >= 0x20; c = text.charCodeAt(++end));
    if (end < n && text.charCodeAt(end) === QUOTE) {
      key = knownKeyAt(text, pos + 1, end) ?? canonicalKey(text.slice(pos + 1, end));
      pos = end + 1;
      // Only a name read in place (no quote, backslash or control character in it) is ever a guess,
      // so a guess that matches is exactly the name the general path would read.
      if (previous.length <= MAX_KEY_LENGTH && key.length <= MAX_KEY_LENGTH && (NEXT_NAME.size < MAX_KEYS || NEXT_NAME.has(previous))) NEXT_NAME.set(previous, key);
    } else {
      const close = stringClose(text, pos);
      key = canonicalKey(close < 0 ? (JSON.parse(text.slice(pos, -close)) as string) : text.slice(pos + 1, close));
      pos = (close < 0 ? -close - 1 : close) + 1;
    }
  }
  pos = skipWhitespace(text, pos);
  if (text.charCodeAt(pos) !== COLON) fail(text, pos, "expected ':' after a key");
  at.pos = skipWhitespace(text, pos + 1);
  return key;
}

/**
 * Which name followed each name last time (and which came first in an object, under FIRST_MEMBER).
 * The elements of a publication repeat one layout thousands of times, so the next name is nearly
 * always the one guessed, and is then only compared in place. Bounded like KEYS.
 */
const NEXT_NAME = new Map<string, string>();
/** The "name before" the first member of an object. A body may use it as a name too; a guess is only ever a hint, checked against the text. */
const FIRST_MEMBER = '\u0000{';

/**
 * JSON.parse, except that every number becomes a JsonNumber holding its source text. Accepts exactly
 * what JSON.parse accepts (property-tested against it) and throws a SyntaxError otherwise. Iterative,
 * not recursive, so deep nesting that JSON.parse reads is read here too instead of overflowing the stack.
 * The position is a local, and the helpers are plain functions of (text, position): the applier
 * parses every item of a publication with it, and a position shared with closures made every step a
 * memory access, measurably slower (bench:parse). A short array is copied at its close to its exact
 * length (SHORT_ARRAY).
 */
export function parseExact(text: string): unknown {
  const n = text.length;
  const at = { pos: 0 };
  let pos = skipWhitespace(text, 0);
  const stack: Frame[] = [];
  for (;;) {
    let value: unknown;
    const c = text.charCodeAt(pos);
    if (c === QUOTE) {
      const close = stringClose(text, pos);
      if (close >= 0) {
        value = text.slice(pos + 1, close);
        pos = close + 1;
      } else {
        // Escapes are rare in menu data: JSON.parse decodes (and checks) them for us.
        value = JSON.parse(text.slice(pos, -close)) as string;
        pos = -close;
      }
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      pos = skipWhitespace(text, pos + 1);
      const isArray = c === OPEN_BRACKET;
      const container: unknown[] | Record<string, unknown> = isArray ? [] : {};
      if (text.charCodeAt(pos) === (isArray ? CLOSE_BRACKET : CLOSE_BRACE)) {
        pos++;
        value = container;
      } else {
        let key = '';
        if (!isArray) {
          at.pos = pos;
          key = readKey(text, at, FIRST_MEMBER);
          pos = at.pos;
        }
        stack.push({ container, isArray, key });
        continue;
      }
    } else if (c === 0x74 && text.startsWith('true', pos)) {
      pos += 4;
      value = true;
    } else if (c === 0x66 && text.startsWith('false', pos)) {
      pos += 5;
      value = false;
    } else if (c === 0x6e && text.startsWith('null', pos)) {
      pos += 4;
      value = null;
    } else {
      const end = numberEnd(text, pos);
      if (end < 0) return fail(text, pos, 'expected a value');
      value = new JsonNumber(text.slice(pos, end));
      pos = end;
    }
    // Hand the value to its container; close every container that ends here.
    for (;;) {
      const top = stack[stack.length - 1];
      if (top === undefined) {
        pos = skipWhitespace(text, pos);
        if (pos !== n) fail(text, pos, 'unexpected content after the JSON value');
        return value;
      }
      if (top.isArray) (top.container as unknown[]).push(value);
      else {
        const object = top.container as Record<string, unknown>;
        const prior = object[top.key];
        // A member name sent twice: the later value is kept, as JSON.parse keeps it, and the name is
        // marked when the two differ, for the plan to skip what it cannot tell apart (repeatedMembers).
        if (prior !== undefined && Object.prototype.hasOwnProperty.call(object, top.key) && !sameParsed(prior, value)) markRepeated(object, top.key);
        setMember(object, top.key, value);
      }
      pos = skipWhitespace(text, pos);
      const d = text.charCodeAt(pos);
      if (d === COMMA) {
        pos = skipWhitespace(text, pos + 1);
        if (!top.isArray) {
          at.pos = pos;
          top.key = readKey(text, at, top.key);
          pos = at.pos;
        }
        break;
      }
      if (d !== (top.isArray ? CLOSE_BRACKET : CLOSE_BRACE)) fail(text, pos, top.isArray ? "expected ',' or ']' in an array" : "expected ',' or '}' in an object");
      pos++;
      stack.pop();
      const container = top.container;
      value = top.isArray && (container as unknown[]).length < SHORT_ARRAY ? (container as unknown[]).slice() : container;
    }
  }
}

/**
 * One string per distinct member name. A key sliced from the text is a new string each time, and
 * storing a property under a new string makes V8 look it up in its string table first; the same few
 * names (ItemID, DateFrom, SellPrice, ...) repeat hundreds of thousands of times in a large
 * publication. Handing back the first copy spares V8 that lookup for every member after the first
 * (`npm run bench` and `npm run bench:profile` time reading and planning). Bounded in count and
 * length: other names are used as they come.
 */
const KEYS = new Map<string, string>();
/** The same names by length and first character, to find one in the text without slicing it out. */
const KEYS_BY_SHAPE = new Map<number, string[]>();
const MAX_KEYS = 4096;
const MAX_KEY_LENGTH = 64;
/**
 * Names compared in place per length and first character. A publication uses a few dozen names, so
 * groups stay small; a crafted body with thousands of names of one shape would otherwise make every
 * member compare against thousands of candidates, for seconds on end. Names past the limit
 * are still made canonical, after slicing, through KEYS.
 */
export const MAX_NAMES_PER_SHAPE = 8;
const shapeOf = (length: number, first: number): number => length * 0x10000 + first;
function canonicalKey(key: string): string {
  const known = KEYS.get(key);
  if (known !== undefined) return known;
  if (KEYS.size < MAX_KEYS && key.length <= MAX_KEY_LENGTH) {
    KEYS.set(key, key);
    const shape = shapeOf(key.length, key.length === 0 ? 0 : key.charCodeAt(0));
    const same = KEYS_BY_SHAPE.get(shape);
    if (!same) KEYS_BY_SHAPE.set(shape, [key]);
    else if (same.length < MAX_NAMES_PER_SHAPE) same.push(key);
  }
  return key;
}

/** The most names any length and first character is compared against (for tests). */
export function largestNameShapeGroup(): number {
  let largest = 0;
  for (const group of KEYS_BY_SHAPE.values()) largest = Math.max(largest, group.length);
  return largest;
}

/** The known name equal to text[start, end), or undefined. */
function knownKeyAt(text: string, start: number, end: number): string | undefined {
  const same = KEYS_BY_SHAPE.get(shapeOf(end - start, end === start ? 0 : text.charCodeAt(start)));
  if (same) for (const key of same) if (text.startsWith(key, start)) return key;
  return undefined;
}

/** As JSON.parse does: `__proto__` is an own member, never the object's prototype. */
const REPEATED = Symbol('repeated members');

/**
 * The member names an object parsed by parseExact had more than once with values that differ (in
 * their text: two ways of writing one number differ), or undefined when none. RFC 8259 leaves such an object's
 * meaning open (parsers differ on which value they keep), so the plan does not guess.
 */
export function repeatedMembers(value: object): ReadonlySet<string> | undefined {
  return (value as { [REPEATED]?: Set<string> })[REPEATED];
}

function markRepeated(object: Record<string, unknown>, key: string): void {
  const held = object as { [REPEATED]?: Set<string> };
  // Not enumerable: neither Object.entries, JSON.stringify nor a spread carries it.
  if (held[REPEATED] === undefined) Object.defineProperty(object, REPEATED, { value: new Set<string>(), enumerable: false });
  held[REPEATED]!.add(key);
}

/** Whether two values parseExact made are the same JSON text, up to whitespace and member order. */
function sameParsed(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a instanceof JsonNumber || b instanceof JsonNumber) return a instanceof JsonNumber && b instanceof JsonNumber && a.source === b.source;
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameParsed(x, b[i]));
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && sameParsed((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

export function setMember(object: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
  else object[key] = value;
}

import { runSteps, type Steps } from './steps';
import { bomLength, CLOSE_BRACE, CLOSE_BRACKET, COLON, COMMA, JsonLimitError, JsonScanError, OPEN_BRACE, OPEN_BRACKET, repeatedTopLevel, Scanner, type ScanLimits, type ScannedObject, type Span } from './json-scan';

/**
 * scanObject (json-scan.ts) over a body read piece by piece instead of held whole: a large body kept in
 * a file of its own is checked with a window of about one block in memory (issue 29). The result and
 * every error (its words and byte offset) are exactly scanObject's on the whole bytes; a property test
 * holds the two together over every way of cutting a body into pieces.
 *
 * How: the scan is a sequence of small steps (the opening brace, a member's key and colon, a value, an
 * array element, a separator, the end), each run by scanObject's own Scanner on the bytes held. A step
 * whose outcome could depend on bytes not yet read (it reached the end of the window before the end of
 * the body) is run again after reading more; the window then holds at least twice as much, so even
 * one huge value costs a few passes, not one per block. Bytes before the current step are dropped.
 */

/**
 * A body's bytes by offset: its whole length known, any range read when needed (a file). What `read`
 * returns may be overwritten by the next read (a file source reuses one buffer): use it at once.
 */
export interface ByteSource {
  readonly length: number;
  read(start: number, end: number): Buffer;
}

/** How much is read at a time. */
export const SCAN_BLOCK_BYTES = 1 << 20;

/**
 * The bytes held: [base, end) of the body, in one buffer reused from step to step (a new buffer only
 * when a step needs more than it holds), so scanning a large body leaves no trail of garbage blocks.
 */
class Window {
  base = 0;
  private buffer: Buffer = Buffer.alloc(0);
  private from = 0;
  private to = 0;

  constructor(
    private readonly source: ByteSource,
    private readonly block: number,
    private readonly maxDepth?: number,
    private readonly maxElementValues?: number,
  ) {}

  get bytes(): Buffer {
    return this.buffer.subarray(this.from, this.to);
  }

  get end(): number {
    return this.base + this.to - this.from;
  }

  get atEnd(): boolean {
    return this.end >= this.source.length;
  }

  dropBefore(from: number): void {
    if (from <= this.base) return;
    this.from += from - this.base;
    this.base = from;
  }

  /** Reads on: a block, or as much again as is held if that is more. */
  more(): void {
    const held = this.to - this.from;
    const want = Math.min(this.source.length - this.end, Math.max(this.block, held));
    if (this.to + want > this.buffer.length) {
      if (held + want <= this.buffer.length) this.buffer.copyWithin(0, this.from, this.to);
      else {
        const bigger = Buffer.allocUnsafe(Math.max(held + want, 2 * this.buffer.length));
        this.buffer.copy(bigger, 0, this.from, this.to);
        this.buffer = bigger;
      }
      this.from = 0;
      this.to = held;
    }
    this.source.read(this.end, this.end + want).copy(this.buffer, this.to);
    this.to += want;
  }

  /**
   * Runs one step from byte `from` (absolute) with a Scanner on the window; returns its value and where
   * it ended. Run again with more bytes while its outcome may depend on bytes not read yet: it failed at
   * the end of the window, or ended there (the byte after a step decides what comes next). A value
   * nested too deep or holding too many values (JsonLimitError) is refused at once: the bracket one
   * level too deep, or the ',' before the value one too many (or that value's first byte, when it
   * is an array's or object's first), is in the window, and only the bytes up to it decided that.
   */
  step<T>(from: number, run: (s: Scanner) => T): { value: T; pos: number } {
    this.dropBefore(from);
    for (;;) {
      const bytes = this.bytes;
      const s = new Scanner(bytes, from - this.base, this.base, this.maxDepth, this.maxElementValues);
      try {
        const value = run(s);
        if (s.pos < bytes.length || this.atEnd) return { value, pos: this.base + s.pos };
      } catch (err) {
        if (!(err instanceof JsonScanError) || this.atEnd || err.offset < this.end) throw err;
      }
      this.more();
    }
  }

  /** The text of bytes [start, end) of the window (absolute offsets). */
  text(start: number, end: number): string {
    return this.buffer.toString('utf8', this.from + start - this.base, this.from + end - this.base);
  }
}

/**
 * scanObject of the bytes `source` holds, read `block` bytes at a time. `decodeKey` reads a member's
 * name from its text (quotes included) and where it is.
 */
export function scanObjectFrom(source: ByteSource, arrayMember: string, decodeKey: (text: string, span: Span) => string, block = SCAN_BLOCK_BYTES, limits: ScanLimits = {}): ScannedObject {
  return runSteps(scanObjectSteps(source, arrayMember, decodeKey, block, limits));
}

/** scanObjectFrom in steps: one after each array element and each member (src/domain/steps.ts). */
export function* scanObjectSteps(source: ByteSource, arrayMember: string, decodeKey: (text: string, span: Span) => string, block = SCAN_BLOCK_BYTES, limits: ScanLimits = {}): Steps<ScannedObject> {
  const maxElements = limits.maxElements ?? Number.POSITIVE_INFINITY;
  const w = new Window(source, Math.max(1, block), limits.maxDepth, limits.maxElementValues);
  // A byte-order mark is three bytes: hold them before looking for one.
  while (w.bytes.length < 3 && !w.atEnd) w.more();
  const members = new Map<string, Span>();
  const repeated = new Set<string>();
  let elements: Span[] | null = null;
  let { value: empty, pos } = w.step(bomLength(w.bytes), (s) => {
    s.ws();
    s.expect(OPEN_BRACE, 'a JSON object');
    s.ws();
    if (s.b[s.pos] !== CLOSE_BRACE) return false;
    s.pos++;
    return true;
  });
  while (!empty) {
    const head = w.step(pos, (s) => {
      s.ws();
      const keyStart = w.base + s.pos;
      s.string();
      const key = decodeKey(w.text(keyStart, w.base + s.pos), { start: keyStart, end: w.base + s.pos });
      s.ws();
      s.expect(COLON, "':' after a key");
      s.ws();
      return { key, valueStart: w.base + s.pos, array: key === arrayMember && s.b[s.pos] === OPEN_BRACKET };
    });
    const { key, valueStart } = head.value;
    if (head.value.array) {
      const found: Span[] = [];
      const open = w.step(valueStart, (s) => {
        s.level(2, arrayMember);
        s.pos++;
        s.ws();
        if (s.b[s.pos] !== CLOSE_BRACKET) return false;
        s.pos++;
        return true;
      });
      pos = open.pos;
      let more = !open.value;
      while (more) {
        // The element, then the limit, then what follows it: in scanObject's order, so that both
        // refuse the same body the same way.
        const element = w.step(pos, (s) => {
          s.ws();
          const start = w.base + s.pos;
          s.value(3, arrayMember, found.length);
          return { start, end: w.base + s.pos };
        });
        if (found.length >= maxElements) throw new JsonLimitError('elements', arrayMember, maxElements);
        found.push(element.value);
        const sep = w.step(element.pos, (s) => {
          s.ws();
          if (s.b[s.pos] === COMMA) {
            s.pos++;
            return true;
          }
          s.expect(CLOSE_BRACKET, "',' or ']' in an array");
          return false;
        });
        pos = sep.pos;
        more = sep.value;
        yield;
      }
      elements = found;
    } else {
      pos = w.step(valueStart, (s) => s.value(2, key)).pos;
      if (key === arrayMember) elements = null;
    }
    const earlier = members.get(key);
    if (earlier !== undefined && repeatedTopLevel(key, arrayMember, earlier, { start: valueStart, end: pos }, (span) => source.read(span.start, span.end))) repeated.add(key);
    members.set(key, { start: valueStart, end: pos });
    const sep = w.step(pos, (s) => {
      s.ws();
      if (s.b[s.pos] === COMMA) {
        s.pos++;
        return false;
      }
      s.expect(CLOSE_BRACE, "',' or '}' in an object");
      return true;
    });
    pos = sep.pos;
    empty = sep.value;
    yield;
  }
  w.step(pos, (s) => {
    s.ws();
    if (s.pos < s.b.length) s.fail('unexpected content after the JSON object');
  });
  return { members, elements, repeated };
}

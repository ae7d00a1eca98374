import { isUtf8 } from 'node:buffer';
import { parseExact, parseLazily, setMember, type Span } from './json-scan';
import { streamUpdate, validateEnvelope, type Envelope, type EnvelopeError, type UpdatePlan } from './payload';
import { sameJson } from './sequence';

/**
 * A webhook body read without building it whole (src/domain/json-scan.ts): the envelope is validated
 * from the top-level members, and the items are parsed one at a time when they are needed. The
 * receiver checks every item parses (so a body it answers 200 for can always be applied); the applier
 * plans and writes item by item, so neither holds a large publication as one object.
 */

export type EnvelopeHeader = Omit<Envelope, 'ScheduledItems'>;

/**
 * Where a body's parts are, by byte offset: each top-level member other than the items, and each
 * item. Stored with the body (agent.db inbox_body_layout), it lets the applier read the envelope and
 * the items straight from the stored bytes without loading or scanning the whole body again.
 */
export interface BodyLayout {
  readonly members: readonly (readonly [key: string, start: number, end: number])[];
  /** Null when the body has no items array (such a body never validates, so none is stored). */
  readonly items: readonly Span[] | null;
}

export interface ReadBody {
  readonly ok: true;
  readonly envelope: EnvelopeHeader;
  /** The top-level members other than the items (for messages that quote them). */
  readonly head: Record<string, unknown>;
  readonly layout: BodyLayout;
  readonly itemCount: number;
  /** Each item, parsed when reached. */
  items(): Iterable<unknown>;
  /** The item at an index, parsed again. */
  item(index: number): unknown;
}

export type ReadBodyResult = ReadBody | { readonly ok: false; readonly error: EnvelopeError };

export interface ReadBodyOptions {
  /** Parse every item now (the receiver: a body answered 200 must be appliable). */
  readonly checkItems: boolean;
  /**
   * Where items' bytes are read from when they are parsed later (default: `raw`). With it, `raw` is not
   * needed once readBody returns (the applier releases it and reads items back from agent.db).
   */
  readonly itemBytes?: (start: number, end: number) => Buffer;
}

export function readBody(raw: Buffer, options: ReadBodyOptions): ReadBodyResult {
  // Decoding bytes that are not UTF-8 would silently store U+FFFD in place of what was sent: refuse.
  if (!isUtf8(raw)) return { ok: false, error: { id: 'invalid_encoding', field: '(body)', message: `not valid UTF-8 (at byte ${firstInvalidUtf8(raw)})` } };
  let lazy;
  try {
    // Numbers keep their source text (JsonNumber): money and identifiers are read exactly.
    const itemBytes = options.itemBytes;
    lazy = parseLazily(raw, 'ScheduledItems', parseExact, itemBytes ? (span) => itemBytes(span.start, span.end).toString('utf8') : undefined);
    if (options.checkItems && lazy.elements) for (const span of lazy.elements) checkElement(raw, span, lazy.element);
  } catch (err) {
    return invalidJson(err);
  }
  const layout: BodyLayout = { members: [...lazy.headSpans].map(([key, span]) => [key, span.start, span.end] as const), items: lazy.elements };
  return checkedBody(lazy.head, layout, lazy.element);
}

/**
 * A stored body read through its layout (see BodyLayout): the envelope's members and each item are
 * read from their bytes with `bytes(start, end)` when needed; the body is never loaded whole. It was
 * checked when it was stored (UTF-8, JSON, every item parses), and is checked again here exactly as
 * readBody checks it, envelope included.
 */
export function readStoredBody(layout: BodyLayout, bytes: (start: number, end: number) => Buffer): ReadBodyResult {
  const text = (span: Span): string => bytes(span.start, span.end).toString('utf8');
  const head: Record<string, unknown> = {};
  try {
    for (const [key, start, end] of layout.members) setMember(head, key, parseExact(text({ start, end })));
  } catch (err) {
    return invalidJson(err);
  }
  return checkedBody(head, layout, (span) => parseExact(text(span)));
}

/**
 * Throws where parsing the element later would. parseExact accepts exactly what JSON.parse accepts
 * (property-tested, test/unit/domain/json-scan.test.ts), so the receiver checks with the native parser,
 * the faster of the two (npm run bench:parse compares them), and only an element that
 * fails is parsed again by parseExact, so the error names the same position in the same words as
 * before.
 */
function checkElement(raw: Buffer, span: Span, parse: (span: Span) => unknown): void {
  try {
    JSON.parse(raw.toString('utf8', span.start, span.end));
  } catch {
    parse(span);
    // Unreachable while the two parsers agree; if they ever did not, refusing is the safe side.
    throw new SyntaxError(`an item at byte ${span.start} is not valid JSON`);
  }
}

function invalidJson(err: unknown): ReadBodyResult {
  return { ok: false, error: { id: 'invalid_json', field: '(body)', message: `not valid JSON: ${(err as Error).message}` } };
}

function checkedBody(head: Record<string, unknown>, layout: BodyLayout, element: (span: Span) => unknown): ReadBodyResult {
  const elements = layout.items;
  // The envelope schema sees an array of the right length; the items themselves are read lazily.
  const checked = validateEnvelope(elements ? { ...head, ScheduledItems: new Array<null>(elements.length).fill(null) } : head);
  if (!checked.ok) return checked;
  const { ScheduledItems: _placeholders, ...envelope } = checked.envelope;
  return {
    ok: true,
    envelope,
    head,
    layout,
    itemCount: elements?.length ?? 0,
    *items() {
      for (const span of elements ?? []) yield element(span);
    },
    item(index: number) {
      const span = elements?.[index];
      return span === undefined ? undefined : element(span);
    },
  };
}

/** The plan of a body read lazily: items parsed, planned and written one at a time. */
export function planBody(body: ReadBody): UpdatePlan {
  return streamUpdate({ ...body.envelope, ScheduledItems: body.items() }, body.head, (index) => body.item(index));
}

/**
 * Whether two bodies mean the same update: the same envelope and, item by item, the same plan and the
 * same warnings after the documented normalisation (identifiers `"118"` and `118` are one identifier,
 * `11.5` and `"11.50"` one price, key order and spacing do not matter, unknown fields are ignored).
 * A redelivery that only re-encodes is then a duplicate, not a conflict. Both plans are walked in
 * step, one item at a time, so two large publications are never held whole.
 */
export function sameMeaning(a: Buffer, b: Buffer): boolean {
  const x = readBody(a, { checkItems: false });
  const y = readBody(b, { checkItems: false });
  if (!x.ok || !y.ok) return false;
  let px: UpdatePlan;
  let py: UpdatePlan;
  try {
    px = planBody(x);
    py = planBody(y);
    const keys = ['locationId', 'locationName', 'currency', 'changeSequence', 'parentChangeSequence'] as const;
    if (keys.some((k) => px[k] !== py[k])) return false;
    const ix = px.items[Symbol.iterator]();
    const iy = py.items[Symbol.iterator]();
    for (;;) {
      const nx = ix.next();
      const ny = iy.next();
      if (nx.done === true || ny.done === true) {
        if (nx.done !== ny.done) return false;
        break;
      }
      if (!sameJson(nx.value, ny.value)) return false;
    }
  } catch {
    // An item that no longer parses (the stored body was checked when received): not provably the same.
    return false;
  }
  return sameJson(px.warnings, py.warnings);
}

/** Offset of the first byte that does not start a well-formed UTF-8 sequence (for the refusal message). */
export function firstInvalidUtf8(b: Uint8Array): number {
  let i = 0;
  while (i < b.length) {
    const c = b[i]!;
    if (c < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let min: number;
    if (c >= 0xc2 && c <= 0xdf) [need, min] = [1, 0x80];
    else if (c >= 0xe0 && c <= 0xef) [need, min] = [2, 0x800];
    else if (c >= 0xf0 && c <= 0xf4) [need, min] = [3, 0x10000];
    else return i;
    let cp = c & (0x3f >> need);
    for (let k = 1; k <= need; k++) {
      const d = b[i + k];
      if (d === undefined || (d & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (d & 0x3f);
    }
    // Overlong forms, UTF-16 surrogates and code points past U+10FFFF are not UTF-8.
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += need + 1;
  }
  return -1;
}

import { isUtf8 } from 'node:buffer';
import { JsonLimitError, JsonScanError, membersLimit, parseExact, parseLazily, setMember, type Span } from './json-scan';
import { SCAN_BLOCK_BYTES, scanObjectSteps, type ByteSource } from './json-scan-stream';
import { runSteps, type Steps } from './steps';
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

/**
 * The most one item of a body may take, in bytes: far beyond any menu item (its fields and its price
 * and schedule rows). One this large is refused (item_too_large) before it is parsed, because parsing it could take more memory than the
 * webhook's and the applier's threads are given (src/webhook/receiver-host.ts,
 * src/sync/applier-host.ts), and a thread that runs out would end with every call it was serving.
 */
export const MAX_ITEM_BYTES = 8 * 1024 * 1024;

/**
 * The most items one update may hold: far above any location's menu. Each item costs the webhook's
 * and the applier's threads memory while a body is checked and applied (its place in the body, and
 * what is planned from it), whatever its size, so a body of tiny elements well under maxBodyBytes
 * could take more than those threads have and end them (too_many_items instead).
 */
export const MAX_ITEMS = 100_000;

/**
 * The most bytes the members other than ScheduledItems may take together. The envelope's other
 * members (the location's ID and name, the sequences, the currency) are short values, parsed whole
 * and kept while the body is read; an unknown member is parsed and kept too, so a body of many large
 * members would take their sum (member_too_large instead, naming the member that passes it).
 */
export const MAX_MEMBER_BYTES = 1024 * 1024;

/**
 * The most levels of arrays and objects in a body, its own object being the first. A real update
 * nests only the body, its items, an item, its price and schedule lists and their elements; this
 * leaves room for unknown fields nested many levels below those, and is as deep as
 * common JSON serialisers (.NET's System.Text.Json and Json.NET) read or write unless told
 * otherwise. Each level costs the parsers memory whatever its bytes, so a value nested deeper is
 * refused (too_deep) before anything is parsed: nested far deeper, a body well within every other
 * limit took more memory than the webhook's and the applier's threads have.
 */
export const MAX_DEPTH = 64;

/**
 * The most values one item may hold, the item itself included: each number, string, true, false and
 * null, and each array and object (a member's name is not a value). A real item holds its fields, a
 * price per tariff and date range and its meal-period schedules, well within it, even the largest
 * the publisher generates (src/dev/publisher; test/unit/domain/json-values.test.ts checks it). Each value costs the parsers
 * memory whatever its bytes, so an item of many small arrays, objects or values well under
 * MAX_ITEM_BYTES was answered 200 and then ran the applier's thread out of memory on every retry,
 * blocking its location; one with more values is refused (too_many_values) before anything is
 * parsed. The costliest item this allows parses in a small part of the applier's heap
 * (test/unit/domain/json-values.test.ts parses it there).
 */
export const MAX_ITEM_VALUES = 100_000;

const LIMITS = { maxElements: MAX_ITEMS, maxMemberBytes: MAX_MEMBER_BYTES, maxDepth: MAX_DEPTH, maxElementValues: MAX_ITEM_VALUES } as const;

/**
 * A body past MAX_ITEMS, MAX_MEMBER_BYTES, MAX_DEPTH or MAX_ITEM_VALUES, refused with the member (and
 * path) or the item named.
 */
function overLimit(err: JsonLimitError): ReadBodyResult {
  // ScheduledItems that is not an array, too large to parse: what the envelope's check would say of it.
  if (err.kind === 'members' && err.key === 'ScheduledItems') return { ok: false, error: { id: 'invalid_envelope', field: 'ScheduledItems', message: 'expected an array' } };
  if (err.kind === 'elements') return { ok: false, error: { id: 'too_many_items', field: err.key, message: `more than the ${err.limit} items one update may hold` } };
  if (err.kind === 'depth') {
    return { ok: false, error: { id: 'too_deep', field: err.key, message: `arrays and objects nested more than ${err.limit} levels deep (the body's own object is the first), at byte ${err.offset}` } };
  }
  if (err.kind === 'values') {
    return {
      ok: false,
      error: {
        id: 'too_many_values',
        field: err.key,
        message: `more than the ${err.limit} values one item may hold (each number, string, true, false, null, array and object, the item itself included), past it at byte ${err.offset}`,
      },
    };
  }
  return { ok: false, error: { id: 'member_too_large', field: err.key, message: `the members other than ScheduledItems take more than the ${err.limit} bytes they may take together` } };
}

/** The members of the body the chain and the till depend on: sent twice, the update cannot be placed. */
const ENVELOPE_MEMBERS = ['LocationID', 'ChangeSequence', 'ParentChangeSequence', 'CurrencyIsoCode', 'ScheduledItems'] as const;

/**
 * The refusal of a body that sends a member of its envelope more than once with different values
 * (ChangeSequence sent twice, with two numbers), or null. JSON.parse keeps the last, other parsers the
 * first (RFC 8259 leaves it open): which location and place in its chain head office meant is not known.
 */
function envelopeRepeated(repeated: ReadonlySet<string>): ReadBodyResult | null {
  const key = ENVELOPE_MEMBERS.find((m) => repeated.has(m));
  if (key === undefined) return null;
  return { ok: false, error: { id: 'duplicate_member', field: key, message: 'sent more than once with different values: which one head office meant is not known' } };
}

/** The refusal of the item at `index` that takes `bytes`, or null when it fits. */
function itemTooLarge(index: number, bytes: number): ReadBodyResult | null {
  if (bytes <= MAX_ITEM_BYTES) return null;
  return { ok: false, error: { id: 'item_too_large', field: `ScheduledItems[${index}]`, message: `${bytes} bytes, more than the ${MAX_ITEM_BYTES} one item may take` } };
}

export function readBody(raw: Buffer, options: ReadBodyOptions): ReadBodyResult {
  // Decoding bytes that are not UTF-8 would silently store U+FFFD in place of what was sent: refuse.
  if (!isUtf8(raw)) return { ok: false, error: { id: 'invalid_encoding', field: '(body)', message: `not valid UTF-8 (at byte ${firstInvalidUtf8(raw)})` } };
  let lazy;
  try {
    // Numbers keep their source text (JsonNumber): money and identifiers are read exactly.
    const itemBytes = options.itemBytes;
    lazy = parseLazily(raw, 'ScheduledItems', parseExact, itemBytes ? (span) => itemBytes(span.start, span.end).toString('utf8') : undefined, LIMITS);
    if (options.checkItems) {
      const repeated = envelopeRepeated(lazy.repeated);
      if (repeated) return repeated;
    }
    if (options.checkItems && lazy.elements) {
      for (const [index, span] of lazy.elements.entries()) {
        const tooLarge = itemTooLarge(index, span.end - span.start);
        if (tooLarge) return tooLarge;
        const refused = checkElement(index, (start, end) => raw.toString('utf8', start, end), span, lazy.element);
        if (refused) return refused;
      }
    }
  } catch (err) {
    if (err instanceof JsonLimitError) return overLimit(err);
    return invalidJson(err);
  }
  const layout: BodyLayout = { members: [...lazy.headSpans].map(([key, span]) => [key, span.start, span.end] as const), items: lazy.elements };
  return checkedBody(lazy.head, layout, lazy.element);
}

/**
 * readBody of the bytes `source` holds, read piece by piece (a large body in a file of its own): the
 * same checks in the same order, with the same result and the same refusal, but never the whole body
 * in memory at once. Three passes over the source: UTF-8, the structure (json-scan-stream.ts), then the
 * envelope's members and each item; `block` is how much each reads at a time.
 */
export function readBodyFrom(source: ByteSource, options: ReadBodyOptions & { readonly block?: number }): ReadBodyResult {
  return runSteps(readBodyFromSteps(source, options));
}

/**
 * readBodyFrom in steps (src/domain/steps.ts): one after each piece read for the UTF-8 check, each
 * element and member of the structure, and each item checked, so whoever runs it can answer other
 * requests between them.
 */
export function* readBodyFromSteps(source: ByteSource, options: ReadBodyOptions & { readonly block?: number }): Steps<ReadBodyResult> {
  const block = options.block ?? SCAN_BLOCK_BYTES;
  const invalidAt = yield* firstInvalidUtf8Steps(source, block);
  if (invalidAt >= 0) return { ok: false, error: { id: 'invalid_encoding', field: '(body)', message: `not valid UTF-8 (at byte ${invalidAt})` } };
  const text = (start: number, end: number): string => source.read(start, end).toString('utf8');
  const element = (span: Span): unknown => parseExact(text(span.start, span.end));
  const head: Record<string, unknown> = {};
  let layout: BodyLayout;
  try {
    const scanned = yield* scanObjectSteps(
      source,
      'ScheduledItems',
      (keyText, span) => {
        const key = parseExact(keyText);
        if (typeof key !== 'string') throw new JsonScanError('expected a string key', span.start);
        return key;
      },
      block,
      LIMITS,
    );
    const members: [string, number, number][] = [];
    // As parseLazily reads them, in the same order: readBody's answer, limit by limit.
    const limit = membersLimit(LIMITS);
    for (const [key, span] of scanned.members) {
      if (key === 'ScheduledItems' && scanned.elements !== null) continue;
      limit(key, span);
      setMember(head, key, parseExact(text(span.start, span.end)));
      members.push([key, span.start, span.end]);
    }
    if (options.checkItems) {
      const repeated = envelopeRepeated(scanned.repeated);
      if (repeated) return repeated;
    }
    if (options.checkItems && scanned.elements) {
      for (const [index, span] of scanned.elements.entries()) {
        const tooLarge = itemTooLarge(index, span.end - span.start);
        if (tooLarge) return tooLarge;
        const refused = checkElement(index, text, span, element);
        if (refused) return refused;
        yield;
      }
    }
    layout = { members, items: scanned.elements };
  } catch (err) {
    if (err instanceof JsonLimitError) return overLimit(err);
    return invalidJson(err);
  }
  return checkedBody(head, layout, element);
}

/** firstInvalidUtf8 of the bytes `source` holds (-1: all valid), reading `block` bytes at a time. */
export function firstInvalidUtf8From(source: ByteSource, block: number = SCAN_BLOCK_BYTES): number {
  return runSteps(firstInvalidUtf8Steps(source, block));
}

/** firstInvalidUtf8From in steps: one after each piece. */
function* firstInvalidUtf8Steps(source: ByteSource, block: number): Steps<number> {
  // At least four bytes a piece, so a piece always ends past the start of its last whole sequence.
  const size = Math.max(4, block);
  for (let pos = 0; pos < source.length; ) {
    const end = Math.min(source.length, pos + size);
    const piece = source.read(pos, end);
    // A sequence cut by the end of the piece is checked with the next piece, from its lead byte.
    let cut = piece.length;
    if (end < source.length) {
      let i = piece.length - 1;
      for (let k = 0; k < 3 && i > 0 && (piece[i]! & 0xc0) === 0x80; k++) i--;
      const lead = piece[i]!;
      const need = lead >= 0xf0 ? 3 : lead >= 0xe0 ? 2 : lead >= 0xc0 ? 1 : 0;
      if (need > piece.length - 1 - i) cut = i;
    }
    const checked = piece.subarray(0, cut);
    if (!isUtf8(checked)) return pos + firstInvalidUtf8(checked);
    pos += cut;
    yield;
  }
  return -1;
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
 * Throws where parsing the element later would. A lone surrogate in a string is no reason to refuse
 * the update: the plan skips the item or element whose text the till would get has one, with a
 * warning, and ignores it elsewhere (unreadableText, src/domain/payload.ts), as for a NUL character.
 * parseExact accepts exactly what JSON.parse accepts
 * (property-tested, test/unit/domain/json-scan.test.ts), so the receiver checks with the native parser,
 * the faster of the two (npm run bench:parse compares them), and only an element that
 * fails is parsed again by parseExact, so the error names the same position in the same words as
 * before.
 */
function checkElement(index: number, text: (start: number, end: number) => string, span: Span, parse: (span: Span) => unknown): ReadBodyResult | null {
  const source = text(span.start, span.end);
  try {
    JSON.parse(source);
  } catch {
    parse(span);
    // Unreachable while the two parsers agree; if they ever did not, refusing is the safe side.
    throw new SyntaxError(`an item at byte ${span.start} is not valid JSON`);
  }
  return null;
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
  return runSteps(sameMeaningSteps(x, y));
}

/**
 * sameMeaning of two bodies already read, in steps (src/domain/steps.ts): one after each pair of items
 * compared, so whoever runs it can answer other requests between them.
 */
export function* sameMeaningSteps(x: ReadBody, y: ReadBody): Steps<boolean> {
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
      yield;
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

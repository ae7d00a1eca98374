import { parseLazily } from './json-scan';
import { streamUpdate, validateEnvelope, type Envelope, type EnvelopeError, type UpdatePlan } from './payload';

/**
 * A webhook body read without building it whole (src/domain/json-scan.ts): the envelope is validated
 * from the top-level members, and the items are parsed one at a time when they are needed. The
 * receiver checks every item parses (so a body it answers 200 for can always be applied); the applier
 * plans and writes item by item, so neither holds a 43 MB publication as one object.
 */

export type EnvelopeHeader = Omit<Envelope, 'ScheduledItems'>;

export interface ReadBody {
  readonly ok: true;
  readonly envelope: EnvelopeHeader;
  /** The top-level members other than the items (for messages that quote them). */
  readonly head: Record<string, unknown>;
  readonly itemCount: number;
  /** Each item, parsed when reached. */
  items(): Iterable<unknown>;
}

export type ReadBodyResult = ReadBody | { readonly ok: false; readonly error: EnvelopeError };

export function readBody(raw: Buffer, options: { readonly checkItems: boolean }): ReadBodyResult {
  let lazy;
  try {
    lazy = parseLazily(raw, 'ScheduledItems');
    if (options.checkItems && lazy.elements) for (const span of lazy.elements) lazy.element(span);
  } catch (err) {
    return { ok: false, error: { field: '(body)', message: `not valid JSON: ${(err as Error).message}` } };
  }
  const { elements, element } = lazy;
  // The envelope schema sees an array of the right length; the items themselves are read lazily.
  const checked = validateEnvelope(elements ? { ...lazy.head, ScheduledItems: new Array<null>(elements.length).fill(null) } : lazy.head);
  if (!checked.ok) return checked;
  const { ScheduledItems: _placeholders, ...envelope } = checked.envelope;
  return {
    ok: true,
    envelope,
    head: lazy.head,
    itemCount: elements?.length ?? 0,
    *items() {
      for (const span of elements ?? []) yield element(span);
    },
  };
}

/** The plan of a body read lazily: items parsed, planned and written one at a time. */
export function planBody(body: ReadBody): UpdatePlan {
  return streamUpdate({ ...body.envelope, ScheduledItems: body.items() }, body.head);
}

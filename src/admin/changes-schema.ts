import { z } from 'zod';
import type { ComingUpReply, UpcomingChange } from '../store/read-models';

/**
 * The reply of GET /api/changes (the window's Coming up tab). The server checks every reply against
 * it and the tests read replies with it; the renderer uses the same shape (ComingUpReply in
 * src/store/read-models.ts, which this schema must satisfy) without bundling zod.
 */
const nullableText = z.string().nullable();

export const UpcomingChangeSchema = z.strictObject({
  date: z.iso.date(),
  locationId: z.number().int(),
  itemId: z.string(),
  plu: z.string(),
  itemName: z.string(),
  kind: z.enum(['price', 'availability']),
  tariffName: nullableText,
  mealPeriod: nullableText,
  // Money stays text (sell_price); a status is AVAILABLE or UNAVAILABLE.
  before: nullableText,
  after: nullableText,
  currency: nullableText,
  taxBefore: nullableText,
  taxAfter: nullableText,
  cause: z.strictObject({ inboxId: z.number().int(), changeSequence: z.number().int(), appliedAt: z.string() }).nullable(),
}) satisfies z.ZodType<UpcomingChange>;

export const ComingUpReplySchema = z.strictObject({
  days: z.number().int().min(1),
  search: z.string(),
  windows: z.array(z.strictObject({ locationId: z.number().int(), from: z.iso.date(), to: z.iso.date() })),
  total: z.number().int().min(0),
  changes: z.array(UpcomingChangeSchema),
}) satisfies z.ZodType<ComingUpReply>;

export type { ComingUpReply };

/** Rows sent to the window at most: a first publication can start thousands of prices on one day. */
export const COMING_UP_LIMIT = 500;

/** Name (any part, any case) or PLU (from its start). Pure, shared with tests. */
export function matchesSearch(change: Pick<UpcomingChange, 'itemName' | 'plu'>, search: string): boolean {
  const q = search.trim().toLowerCase();
  if (q === '') return true;
  return change.itemName.toLowerCase().includes(q) || change.plu.toLowerCase().startsWith(q);
}

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { AgentCore } from '../../src/core';
import { silentLogger } from '../../src/log';
import { dayRangeArb, edgeHits, FIRST_DAY, isoOf, LAST_DAY } from '../helpers/date-arbitraries';
import { item, price, schedule, testConfig, update } from '../helpers/fixtures';

/**
 * The store over the whole date domain, edges weighted (issue 9): random updates of price and
 * availability ranges, many open-ended or starting at 0001-01-01, applied through the real store and
 * compared with an interval model at every boundary day (each range's ends and the days either side):
 * between two consecutive boundaries nothing changes, so those days decide everything.
 */
interface Edit {
  readonly kind: 'price' | 'schedule';
  readonly item: 'A' | 'B';
  readonly key: string;
  readonly from: number;
  readonly to: number;
  readonly value: number;
}

const editArb: fc.Arbitrary<Edit> = fc
  .record({ kind: fc.constantFrom('price' as const, 'schedule' as const), item: fc.constantFrom('A' as const, 'B' as const), slot: fc.constantFrom(0, 1), value: fc.integer({ min: 0, max: 5000 }), range: dayRangeArb })
  .map((e) => ({ kind: e.kind, item: e.item, key: e.kind === 'price' ? ['Eat In', 'Take Away'][e.slot]! : ['Lunch', 'Dinner'][e.slot]!, from: e.range.from, to: e.range.to, value: e.value }));

function body(seq: number, edits: readonly Edit[]): Buffer {
  const items = (['A', 'B'] as const)
    .map((id) =>
      item(
        `PLU-${id}`,
        id,
        edits.filter((e) => e.kind === 'price' && e.item === id).map((e) => price(isoOf(e.from), isoOf(e.to), e.key, `${Math.floor(e.value / 100)}.${String(e.value % 100).padStart(2, '0')}`)),
        edits.filter((e) => e.kind === 'schedule' && e.item === id).map((e) => schedule(isoOf(e.from), isoOf(e.to), e.key, e.value % 2 === 0 ? 'AVAILABLE' : 'UNAVAILABLE')),
      ),
    )
    .filter((i) => (i.PriceUpdates as unknown[]).length + (i.ScheduleUpdates as unknown[]).length > 0);
  return Buffer.from(JSON.stringify(update(9, seq, seq - 1, items)));
}

/** The model: the last edit (in delivery order, then element order) covering the day wins. */
function modelAt(updates: readonly (readonly Edit[])[], kind: Edit['kind'], itemId: string, key: string, d: number): string | null {
  let value: string | null = null;
  for (const edits of updates) {
    for (const e of edits) {
      if (e.kind !== kind || e.item !== itemId || e.key !== key || d < e.from || d > e.to) continue;
      value = kind === 'price' ? String(e.value) : e.value % 2 === 0 ? 'AVAILABLE' : 'UNAVAILABLE';
    }
  }
  return value;
}

describe('the store over the whole date domain', () => {
  it('matches an interval model at every boundary, with ranges touching 0001-01-01 and 9999-12-31', () => {
    const core = new AgentCore(testConfig(), silentLogger);
    let sequence = 0;
    const seen: { from: number; to: number }[] = [];
    const price = core.tillDb.prepare("SELECT sell_price_minor AS v FROM pos_prices WHERE location_id = 9 AND item_id = ? AND tariff_name = ? AND ? BETWEEN date_from AND date_to");
    const avail = core.tillDb.prepare('SELECT status AS v FROM pos_availability WHERE location_id = 9 AND item_id = ? AND meal_period = ? AND ? BETWEEN date_from AND date_to');
    try {
      fc.assert(
        fc.property(fc.array(fc.array(editArb, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 6 }), (updates) => {
          core.tillDb.exec('DELETE FROM price_ranges; DELETE FROM availability_ranges; DELETE FROM items; DELETE FROM locations; DELETE FROM applied_updates;');
          core.agentDb.exec('DELETE FROM update_warnings; DELETE FROM deliveries; DELETE FROM inbox; DELETE FROM known_locations;');
          for (const edits of updates) {
            seen.push(...edits);
            const { applied } = core.importPayload(body(++sequence, edits), 'property-test');
            assert.equal(applied.length, 1);
          }
          const probes = new Set<number>([FIRST_DAY, LAST_DAY]);
          for (const e of updates.flat()) for (const d of [e.from - 1, e.from, e.to, e.to + 1]) if (d >= FIRST_DAY && d <= LAST_DAY) probes.add(d);
          for (const [kind, keys] of [['price', ['Eat In', 'Take Away']], ['schedule', ['Lunch', 'Dinner']]] as const) {
            for (const itemId of ['A', 'B']) {
              for (const key of keys) {
                for (const d of probes) {
                  const rows = (kind === 'price' ? price : avail).all(itemId, key, isoOf(d)) as { v: number | string }[];
                  assert.ok(rows.length <= 1, `${rows.length} rows for ${kind} ${itemId}/${key} on ${isoOf(d)}`);
                  assert.equal(rows.length === 0 ? null : String(rows[0]!.v), modelAt(updates, kind, itemId, key, d), `${kind} ${itemId}/${key} on ${isoOf(d)}`);
                }
              }
            }
          }
        }),
        { numRuns: 200 },
      );
    } finally {
      core.close();
    }
    // The generator reached the edges often (it is what found the 9999-12-31 defect).
    const hits = edgeHits(seen);
    for (const [edge, n] of Object.entries(hits)) assert.ok(n >= 20, `only ${n} ranges touched ${edge}: ${JSON.stringify(hits)}`);
  });
});

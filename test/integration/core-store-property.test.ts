import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { AgentCore } from '../../src/core';
import { fromDayNumber, toDayNumber, type IsoDate } from '../../src/domain/dates';
import { silentLogger } from '../../src/log';
import { item, price, schedule, testConfig, update } from '../helpers/fixtures';

const BASE = toDayNumber('2026-12-01' as IsoDate);
const ITEMS = ['A', 'B'];
const TARIFFS = ['Eat In', 'Take Away'];
const MEALS = ['Lunch', 'Dinner'];

interface PriceEdit { kind: 'price'; item: string; tariff: string; from: number; to: number; pence: number; taxCode: string }
interface ScheduleEdit { kind: 'schedule'; item: string; meal: string; from: number; to: number; status: 'AVAILABLE' | 'UNAVAILABLE' }
type Edit = PriceEdit | ScheduleEdit;

const span = fc.tuple(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 20 })).map(([s, len]) => ({ from: BASE + s, to: BASE + s + len }));
const editArb: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ kind: fc.constant('price' as const), item: fc.constantFrom(...ITEMS), tariff: fc.constantFrom(...TARIFFS), pence: fc.integer({ min: 0, max: 3000 }), taxCode: fc.constantFrom('S', 'Z') }).chain((e) => span.map((s) => ({ ...e, ...s }))),
  fc.record({ kind: fc.constant('schedule' as const), item: fc.constantFrom(...ITEMS), meal: fc.constantFrom(...MEALS), status: fc.constantFrom('AVAILABLE' as const, 'UNAVAILABLE' as const) }).chain((e) => span.map((s) => ({ ...e, ...s }))),
);

/** Simple reference: one map entry per (key, day), overwritten in delivery order. */
function model(updates: Edit[][]): Map<string, string> {
  const days = new Map<string, string>();
  for (const edits of updates) {
    for (const e of edits) {
      for (let d = e.from; d <= e.to; d++) {
        if (e.kind === 'price') days.set(`P|${e.item}|${e.tariff}|${fromDayNumber(d)}`, `${e.pence}|${e.taxCode}`);
        else days.set(`S|${e.item}|${e.meal}|${fromDayNumber(d)}`, e.status);
      }
    }
  }
  return days;
}

function storeDays(core: AgentCore): Map<string, string> {
  const days = new Map<string, string>();
  const prices = core.tillDb.prepare('SELECT item_id, tariff_name, date_from, date_to, sell_price_minor, tax_code FROM pos_prices').all() as {
    item_id: string; tariff_name: string; date_from: IsoDate; date_to: IsoDate; sell_price_minor: number; tax_code: string;
  }[];
  for (const p of prices) {
    for (let d = toDayNumber(p.date_from); d <= toDayNumber(p.date_to); d++) {
      const key = `P|${p.item_id}|${p.tariff_name}|${fromDayNumber(d)}`;
      assert.ok(!days.has(key), `two price rows cover ${key}`);
      days.set(key, `${p.sell_price_minor}|${p.tax_code}`);
    }
  }
  const availability = core.tillDb.prepare('SELECT item_id, meal_period, date_from, date_to, status FROM pos_availability').all() as {
    item_id: string; meal_period: string; date_from: IsoDate; date_to: IsoDate; status: string;
  }[];
  for (const a of availability) {
    for (let d = toDayNumber(a.date_from); d <= toDayNumber(a.date_to); d++) {
      const key = `S|${a.item_id}|${a.meal_period}|${fromDayNumber(d)}`;
      assert.ok(!days.has(key), `two availability rows cover ${key}`);
      days.set(key, a.status);
    }
  }
  return days;
}

function body(seq: number, edits: Edit[]): Buffer {
  const items = ITEMS.map((id) =>
    item(`PLU-${id}`, id,
      edits.filter((e): e is PriceEdit => e.kind === 'price' && e.item === id).map((e) => price(fromDayNumber(e.from), fromDayNumber(e.to), e.tariff, (e.pence / 100).toFixed(2), e.taxCode, e.taxCode === 'S' ? 20 : 0)),
      edits.filter((e): e is ScheduleEdit => e.kind === 'schedule' && e.item === id).map((e) => schedule(fromDayNumber(e.from), fromDayNumber(e.to), e.meal, e.status)),
    ),
  ).filter((i) => (i.PriceUpdates as unknown[]).length + (i.ScheduleUpdates as unknown[]).length > 0);
  return Buffer.from(JSON.stringify(update(5, seq, seq - 1, items)));
}

describe('the store against a day-by-day model', () => {
  it('random sequences of overlapping price and availability ranges, applied through the real store, match the model', () => {
    const config = testConfig();
    const core = new AgentCore(config, silentLogger);
    let sequence = 1000;
    try {
      fc.assert(
        fc.property(fc.array(fc.array(editArb, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 8 }), (updates) => {
          // Each run starts from an empty menu: a fresh location id keeps runs apart in one database file.
          core.tillDb.exec('DELETE FROM price_ranges; DELETE FROM availability_ranges; DELETE FROM items; DELETE FROM locations; DELETE FROM applied_updates;');
          core.agentDb.exec('DELETE FROM update_warnings; DELETE FROM deliveries; DELETE FROM inbox; DELETE FROM known_locations;');
          for (const edits of updates) {
            sequence += 1;
            const { outcome, applied } = core.importPayload(body(sequence, edits), 'property-test');
            assert.equal(outcome.kind, 'stored');
            assert.equal(applied.length, 1);
          }
          assert.deepEqual(storeDays(core), model(updates));
          // The _today views (till migration 3) start from a location's `locations` row: an item
          // without one would be invisible to the till. The row commits with the items.
          const orphans = core.tillDb.prepare('SELECT count(*) AS n FROM items WHERE location_id NOT IN (SELECT location_id FROM locations)').get() as { n: number };
          assert.equal(orphans.n, 0);
        }),
        { numRuns: 150 },
      );
      // Touching ranges with equal values were merged: no two adjacent rows say the same thing.
      const fragments = core.tillDb
        .prepare(
          `SELECT count(*) AS n FROM price_ranges a JOIN price_ranges b ON a.location_id = b.location_id AND a.item_id = b.item_id
           AND a.tariff_name = b.tariff_name AND date(a.date_to, '+1 day') = b.date_from AND a.sell_price_minor = b.sell_price_minor
           AND a.tax_code = b.tax_code AND a.tax_rate = b.tax_rate AND coalesce(a.price_model, '') = coalesce(b.price_model, '')`,
        )
        .get() as { n: number };
      assert.equal(fragments.n, 0);
    } finally {
      core.close();
    }
  });

  it('edits of one key far apart in one update are read as separate windows: a long range they both cut is split once', () => {
    const core = new AgentCore(testConfig(), silentLogger);
    try {
      const p = (from: number, to: number, pence: number): Edit => ({ kind: 'price', item: 'A', tariff: 'Eat In', from: BASE + from, to: BASE + to, pence, taxCode: 'S' });
      // The second update cuts the long range at 10 and at 90 (windows apart), the third at 20 and 22
      // (windows that touch once widened by a day), with an equal value on 21 to merge across them.
      const updates: Edit[][] = [[p(0, 100, 500)], [p(10, 10, 600), p(90, 90, 700)], [p(20, 20, 800), p(22, 22, 800), p(21, 21, 800)]];
      updates.forEach((edits, i) => {
        const { outcome, applied } = core.importPayload(body(2000 + i, edits), 'windows-test');
        assert.equal(outcome.kind, 'stored');
        assert.equal(applied.length, 1);
      });
      assert.deepEqual(storeDays(core), model(updates));
      const rows = core.tillDb.prepare("SELECT date_from, date_to, sell_price_minor FROM price_ranges WHERE item_id = 'A' ORDER BY date_from").all();
      const d = (n: number): string => fromDayNumber(BASE + n);
      assert.deepEqual(rows, [
        { date_from: d(0), date_to: d(9), sell_price_minor: 500 },
        { date_from: d(10), date_to: d(10), sell_price_minor: 600 },
        { date_from: d(11), date_to: d(19), sell_price_minor: 500 },
        { date_from: d(20), date_to: d(22), sell_price_minor: 800 },
        { date_from: d(23), date_to: d(89), sell_price_minor: 500 },
        { date_from: d(90), date_to: d(90), sell_price_minor: 700 },
        { date_from: d(91), date_to: d(100), sell_price_minor: 500 },
      ]);
    } finally {
      core.close();
    }
  });
});

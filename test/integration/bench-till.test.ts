import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTillProcess } from '../../bench/till-process';
import { openTill, parseTillBinding, TILL_BINDINGS } from '../../bench/till-statements';
import { AgentCore } from '../../src/core';
import { dateOf, dayOf, encode, generateChains, todayInZone } from '../../src/dev/publisher';
import { silentLogger } from '../../src/log';
import { openReadOnly, storeFilePath } from '../../src/store/database';
import { locationToday } from '../../src/store/location-time';
import { tempDir, testConfig } from '../helpers/fixtures';

/**
 * The benchmarks' till (bench/till-statements.ts) reads the POS views through node:sqlite by default
 * and through better-sqlite3 on request; the figures of either mean something only if both answer
 * every lookup as the contract says. A menu like the bench's L one, smaller: three tariffs and three
 * meal periods per item, twelve ranges per key around today.
 */
function menu(): { dataDir: string; location: number; plus: string[] } {
  const dataDir = tempDir('pos-sync-bench-till-');
  const today = todayInZone(Intl.DateTimeFormat().resolvedOptions().timeZone);
  const [chain] = generateChains({ seed: 11, locations: 1, updatesPerLocation: 1, startDate: dateOf(dayOf(today) - 30), days: 365, itemsPerLocation: 60, tariffs: 3, mealPeriods: 3, scheduling: 'all', rangesPerKey: 12 });
  const update = chain!.updates[0]!;
  const core = new AgentCore(testConfig({ dataDir }), silentLogger);
  try {
    assert.equal(core.importPayload(encode(update), 'test').applied.length, 1);
  } finally {
    core.close();
  }
  const plus = (update.body.ScheduledItems as { PLU: unknown }[]).map((i) => String(i.PLU));
  return { dataDir, location: update.locationId, plus };
}

const sorted = (rows: unknown[]): string[] => rows.map((r) => JSON.stringify(r)).sort();

describe("the benchmarks' till", () => {
  it('answers every PLU alike on node:sqlite and better-sqlite3, as the views with the date written in do', () => {
    const { dataDir, location, plus } = menu();
    const file = storeFilePath(dataDir, 'till');
    const direct = openReadOnly(file);
    const tills = TILL_BINDINGS.map((binding) => ({ binding, till: openTill(file, binding) }));
    try {
      for (const { binding, till } of tills) assert.match(till.sqliteVersion, /^3\.\d+\.\d+$/, `${binding} names its SQLite`);
      const date = locationToday(direct, location);
      assert.ok(date, 'the location has a day row for now');
      const prices = direct.prepare(`SELECT plu, item_name, tariff_name, sell_price_minor, tax_code FROM pos_prices WHERE location_id = ? AND plu = ? AND ? BETWEEN date_from AND date_to`);
      const availability = direct.prepare(`SELECT meal_period, status FROM pos_availability WHERE location_id = ? AND plu = ? AND ? BETWEEN date_from AND date_to`);
      let withPrices = 0;
      // Twice over: the second time every statement runs with values bound over the last ones.
      for (const plu of [...plus, ...plus, 'no-such-plu']) {
        const wantPrices = sorted(prices.all(location, plu, date));
        const wantAvailability = sorted(availability.all(location, plu, date));
        if (wantPrices.length > 0) withPrices++;
        for (const { binding, till } of tills) {
          assert.deepEqual(sorted(till.prices(location, plu)), wantPrices, `${binding}: prices of ${plu}`);
          assert.deepEqual(sorted(till.availability(location, plu)), wantAvailability, `${binding}: meal periods of ${plu}`);
        }
      }
      // Not a comparison of empty answers: most items have prices today.
      assert.ok(withPrices > plus.length, `only ${withPrices} lookups found prices`);
    } finally {
      for (const { till } of tills) till.close();
      direct.close();
    }
  });

  it('names the bindings it knows when given another', () => {
    assert.equal(parseTillBinding(undefined, 'node:sqlite'), 'node:sqlite');
    assert.equal(parseTillBinding('better-sqlite3', 'node:sqlite'), 'better-sqlite3');
    assert.throws(() => parseTillBinding('sqlite3', 'node:sqlite'), /--till-binding must be one of node:sqlite, better-sqlite3, not sqlite3/);
  });

  for (const binding of TILL_BINDINGS) {
    it(`in a process of its own (${binding}) times lookups until stopped`, async () => {
      const { dataDir, location, plus } = menu();
      const till = await startTillProcess({ work: tempDir('pos-sync-bench-till-work-'), tillFile: storeFilePath(dataDir, 'till'), locations: [location], plus, reader: binding });
      assert.match(till.sqliteVersion, /^3\.\d+\.\d+$/, 'the till process names its SQLite when ready');
      const startedAt = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 300));
      const samples = await till.stop();
      assert.ok(samples.length > 0, 'no lookups timed');
      for (const sample of samples) {
        assert.ok(sample.ms >= 0 && Number.isFinite(sample.ms), `a lookup took ${sample.ms} ms`);
        assert.ok(sample.atEpochMs >= startedAt - 60_000 && sample.atEpochMs <= Date.now(), 'a lookup timed outside the run');
      }
    });
  }
});

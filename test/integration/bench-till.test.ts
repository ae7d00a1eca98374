import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTillProcess } from '../../bench/till-process';
import Database from 'better-sqlite3';
import { openTill, parseTillBinding, replansBoundLookups, TILL_BINDINGS, type TillBinding } from '../../bench/till-statements';
import { AgentCore } from '../../src/core';
import { dateOf, dayOf, encode, generateChains, todayInZone } from '../../src/dev/publisher';
import { silentLogger } from '../../src/log';
import { openReadOnly, storeFilePath } from '../../src/store/database';
import { locationToday } from '../../src/till/location-time';
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

/** What each binding links, asked of the binding itself, not through bench/till-statements.ts. */
function linkedSqlite(binding: TillBinding): string {
  if (binding === 'better-sqlite3') {
    const db = new Database(':memory:');
    try {
      return (db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;
    } finally {
      db.close();
    }
  }
  const { DatabaseSync } = process.getBuiltinModule('node:sqlite') as { DatabaseSync: new (file: string) => { prepare(sql: string): { get(): unknown }; close(): void } };
  const db = new DatabaseSync(':memory:');
  try {
    return (db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;
  } finally {
    db.close();
  }
}

describe("the benchmarks' till", () => {
  it('answers every PLU alike on node:sqlite and better-sqlite3, as the views with the date written in do', () => {
    const { dataDir, location, plus } = menu();
    const file = storeFilePath(dataDir, 'till');
    const direct = openReadOnly(file);
    const tills = TILL_BINDINGS.map((binding) => ({ binding, till: openTill(file, binding) }));
    try {
      // Each reads through the binding asked for (the two link different SQLite builds here).
      for (const { binding, till } of tills) assert.equal(till.sqliteVersion, linkedSqlite(binding), binding);
      const date = locationToday(direct, location);
      assert.ok(date, 'the location has a day row for now');
      const prices = direct.prepare(`SELECT plu, item_name, tariff_name, sell_price_minor, tax_code FROM pos_prices WHERE location_id = ? AND plu = ? AND ? BETWEEN date_from AND date_to`);
      const availability = direct.prepare(`SELECT meal_period, status FROM pos_availability WHERE location_id = ? AND plu = ? AND ? BETWEEN date_from AND date_to`);
      let withPrices = 0;
      // Twice over, as a till asks again for what it asked before.
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

  it('knows which SQLite plans every bound lookup through a join again once its bindings are cleared', () => {
    for (const version of ['3.31.1', '3.40.1', '3.53.4', '3.9.2']) assert.equal(replansBoundLookups(version), false, version);
    for (const version of ['3.54.0', '3.54.1', '3.60.0', '4.0.0']) assert.equal(replansBoundLookups(version), true, version);
  });

  for (const binding of TILL_BINDINGS) {
    it(`in a process of its own (${binding}) reads the menu and times lookups until stopped`, async () => {
      const { dataDir, location, plus } = menu();
      const calledAt = Date.now();
      const till = await startTillProcess({ work: tempDir('pos-sync-bench-till-work-'), tillFile: storeFilePath(dataDir, 'till'), locations: [location], plus, reader: binding });
      assert.equal(till.sqliteVersion, linkedSqlite(binding), 'the till process names the SQLite of its binding');
      // Its warm-up looked every PLU up once, and most items have prices today (as the test above shows).
      assert.equal(till.warmUp.lookups, plus.length);
      assert.ok(till.warmUp.priced > plus.length / 2 && till.warmUp.priced <= plus.length, `${till.warmUp.priced} of ${plus.length} priced`);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const samples = await till.stop();
      const stoppedAt = Date.now();
      assert.ok(samples.length > 0, 'no lookups timed');
      for (const sample of samples) {
        assert.ok(sample.ms > 0 && sample.ms < 10_000, `a lookup took ${sample.ms} ms`);
        // Timed after READY and before the stop (50 ms for two clocks read in two processes).
        assert.ok(sample.atEpochMs >= calledAt - 50 && sample.atEpochMs <= stoppedAt + 50, 'a lookup timed outside the run');
      }
    });
  }
});

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import { addDays, todayIn, type IsoDate } from '../../src/domain/dates';
import { offsetIntervals, sqliteUtc } from '../../src/domain/utc-offsets';
import { Agent } from '../../src/agent';
import { silentLogger } from '../../src/log';
import { openDatabase, openReadOnly, storeFilePath } from '../../src/store/database';
import { appliedMigrations } from '../../src/store/database';
import { ensureAllLocationOffsets, LOCAL_DAYS_FROM_OFFSETS_SQL, localDayMatchSql, locationToday, OFFSETS_YEARS_AHEAD, writeLocationOffsets } from '../../src/till/location-time';
import { TILL_MIGRATIONS } from '../../src/store/migrations';
import { startAdminAgent } from '../helpers/admin';
import { startTestAgent } from '../helpers/agent';
import { REPO_ROOT, writeConfig } from '../helpers/child-agent';
import { item, price, schedule, tempDir, testConfig } from '../helpers/fixtures';
import { needs } from '../helpers/system';

/**
 * "Today" per location (till migrations 002 and 003): the _today views, `lookup` and the status window's API
 * agree on each location's own date whatever the reading process's timezone. Locations 1 and 2 are
 * 25 hours apart (UTC+14 and UTC-11), so at every instant they are on different dates and no single
 * reader-local date (what the views used before) can be right for both.
 */
const ZONES: Record<number, string> = { 1: 'Pacific/Kiritimati', 2: 'Pacific/Pago_Pago', 3: 'America/New_York' };
const READER_ZONES = ['UTC', 'Pacific/Kiritimati', 'America/Los_Angeles', 'Asia/Kolkata', 'Pacific/Pago_Pago'];

/** Each location's date when its day-by-day menu was built (dayByDay). */
const postedOn: Record<number, IsoDate> = {};

/**
 * What a _today view gives for a location on `today`: the posted day's price and lunch, or the next
 * day's if the location's midnight passed since its menu was posted (the test runs for a minute or two).
 */
function expectedOn(locationId: number, today: string): { price: string; lunch: 'AVAILABLE' | 'UNAVAILABLE' } {
  const posted = postedOn[locationId]!;
  if (today === posted) return { price: '2.00', lunch: 'AVAILABLE' };
  if (today === addDays(posted, 1)) return { price: '3.00', lunch: 'UNAVAILABLE' };
  throw new Error(`location ${locationId}: menu posted for ${posted}, checked on ${today}`);
}

/** One-day prices and meal periods around the location's today: the row a _today view returns names its date. */
function dayByDay(locationId: number, changeSequence: number): unknown {
  const today = todayIn(ZONES[locationId]!);
  postedOn[locationId] = today;
  const days = [-1, 0, 1].map((d) => addDays(today, d));
  return {
    ChangeSequence: changeSequence,
    ParentChangeSequence: 0,
    LocationID: locationId,
    LocationName: `Location ${locationId}`,
    CurrencyIsoCode: 'GBP',
    ScheduledItems: [
      item('P', 'x', days.map((d, i) => price(d, d, 'Eat in', `${i + 1}.00`)), days.map((d, i) => schedule(d, d, 'Lunch', i === 1 ? 'AVAILABLE' : 'UNAVAILABLE'))),
    ],
  };
}

/**
 * Runs `check` with each location's date as the node process computes it from the IANA database; if a
 * location's midnight passed during the check, runs it again (the dates it compared were both right).
 */
function atStableDates(check: (today: Record<number, string>) => void): void {
  for (let attempt = 0; ; attempt++) {
    const before = Object.fromEntries(Object.entries(ZONES).map(([id, zone]) => [Number(id), todayIn(zone)]));
    try {
      check(before);
      return;
    } catch (err) {
      const after = Object.fromEntries(Object.entries(ZONES).map(([id, zone]) => [Number(id), todayIn(zone)]));
      if (attempt >= 2 || JSON.stringify(before) === JSON.stringify(after)) throw err;
    }
  }
}

/** Offsets as the agent wrote them before till migration 004 (no location_days table yet). */
function writeOffsetsBefore004(db: ReturnType<typeof openDatabase>, locationId: number, timeZone: string, fromMs: number, toMs: number): void {
  const insert = db.prepare('INSERT INTO location_utc_offsets (location_id, from_utc, to_utc, offset_minutes, timezone) VALUES (?, ?, ?, ?, ?)');
  for (const i of offsetIntervals(timeZone, fromMs, toMs)) insert.run(locationId, sqliteUtc(i.fromMs), sqliteUtc(i.toMs), i.offsetMinutes, timeZone);
}

function sqlite3(file: string, tz: string, sql: string): unknown[] {
  const r = spawnSync('sqlite3', ['-readonly', '-json', file, sql], { encoding: 'utf8', env: { ...process.env, TZ: tz } });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim() === '' ? [] : (JSON.parse(r.stdout) as unknown[]);
}

describe("the _today views use each location's own date", () => {
  it('for readers in five timezones, and lookup and the window agree with them', needs('the sqlite3 shell'), async () => {
    // Location 3 is not configured: it follows defaultTimezone (and the site accepts other locations).
    const running = await startAdminAgent({ locations: { 1: { timezone: ZONES[1] }, 2: { timezone: ZONES[2] } }, defaultTimezone: ZONES[3], sync: { acceptOtherLocations: true } });
    for (const id of [1, 2, 3]) assert.equal((await running.post(dayByDay(id, 10 + id))).status, 200);
    await running.settle();
    const file = storeFilePath(running.config.dataDir, 'till');

    for (const tz of READER_ZONES) {
      atStableDates((today) => {
        const prices = sqlite3(file, tz, 'SELECT location_id, date_from, sell_price FROM pos_prices_today ORDER BY location_id');
        assert.deepEqual(prices, [1, 2, 3].map((id) => ({ location_id: id, date_from: today[id], sell_price: expectedOn(id, today[id]!).price })), `reader in ${tz}`);
        const lunch = sqlite3(file, tz, 'SELECT location_id, date_from, status FROM pos_availability_today ORDER BY location_id');
        assert.deepEqual(lunch, [1, 2, 3].map((id) => ({ location_id: id, date_from: today[id], status: expectedOn(id, today[id]!).lunch })), `reader in ${tz}`);
        // What the views did before (the reader's local date) is wrong for location 1 or 2 in every zone.
        const local = (sqlite3(file, tz, "SELECT date('now', 'localtime') AS d")[0] as { d: string }).d;
        assert.ok(local !== today[1] || local !== today[2], `${tz}: ${local}`);
      });
    }

    // The status window's lookup (admin API) and the CLI's, with no date given, use the same date.
    const config = writeConfig(tempDir('pos-sync-today-cli-'), { dataDir: running.config.dataDir, locations: { 1: { timezone: ZONES[1] }, 2: { timezone: ZONES[2] } }, defaultTimezone: ZONES[3], sync: { acceptOtherLocations: true } });
    for (const id of [1, 2, 3]) {
      const res = await fetch(`${running.adminUrl}api/lookup?plu=P&location=${id}`, { headers: { authorization: `Bearer ${running.token}` } });
      assert.equal(res.status, 200);
      const window = (await res.json()) as { date: string; items: { prices: { sellPrice: string }[] }[] };
      const cli = spawnSync(process.execPath, [path.join(REPO_ROOT, 'bin', 'pos-sync-agent.cjs'), 'lookup', '--plu', 'P', '--location', String(id), '--json', '--config', config], {
        encoding: 'utf8',
        env: { ...process.env, TZ: 'Asia/Kolkata' },
        timeout: 60_000,
      });
      assert.equal(cli.status, 0, cli.stderr);
      const answer = JSON.parse(cli.stdout) as { date: string; items: { prices: { sellPrice: string }[] }[] };
      atStableDates((today) => {
        const view = sqlite3(file, 'UTC', `SELECT date_from FROM pos_prices_today WHERE location_id = ${id}`) as { date_from: string }[];
        assert.equal(window.date, today[id]);
        assert.equal(answer.date, today[id]);
        assert.deepEqual(view, [{ date_from: today[id] }]);
      });
      assert.deepEqual(window.items[0]!.prices.map((p) => p.sellPrice), [expectedOn(id, window.date).price]);
      assert.deepEqual(answer.items[0]!.prices.map((p) => p.sellPrice), [expectedOn(id, answer.date).price]);
    }

    // With no location named, every location is answered for its own today (Kiritimati and Pago Pago are
    // always a calendar day apart), never the default timezone's date for all of them.
    const all = spawnSync(process.execPath, [path.join(REPO_ROOT, 'bin', 'pos-sync-agent.cjs'), 'lookup', '--plu', 'P', '--json', '--config', config], {
      encoding: 'utf8',
      env: { ...process.env, TZ: 'UTC' },
      timeout: 60_000,
    });
    assert.equal(all.status, 0, all.stderr);
    const everywhere = JSON.parse(all.stdout) as { items: { locationId: number; date: string; prices: { sellPrice: string }[] }[] };
    atStableDates((today) => {
      assert.deepEqual(
        everywhere.items.map((i) => [i.locationId, i.date, i.prices.map((p) => p.sellPrice)]),
        [1, 2, 3].map((id) => [id, today[id], [expectedOn(id, today[id]!).price]]),
      );
    });

    // The applier wrote each location's offsets from its configured timezone, years ahead.
    const db = openDatabase(file);
    try {
      const rows = db.prepare('SELECT location_id, min(timezone) AS timezone, max(to_utc) AS until FROM location_utc_offsets GROUP BY location_id').all() as { location_id: number; timezone: string; until: string }[];
      assert.deepEqual(rows.map((r) => [r.location_id, r.timezone]), [[1, ZONES[1]], [2, ZONES[2]], [3, ZONES[3]]]);
      const fourYears = new Date(Date.now() + (OFFSETS_YEARS_AHEAD - 1) * 365 * 86_400_000).toISOString().slice(0, 10);
      for (const r of rows) assert.ok(r.until > fourYears, `${r.location_id} reaches ${r.until}`);
    } finally {
      db.close();
    }
  });

  it('changes date at the location\'s midnight across DST changes (an explicit instant, the views\' own SQL)', () => {
    const db = openDatabase(storeFilePath(tempDir('pos-sync-today-dst-'), 'till'));
    try {
      writeLocationOffsets(db, 3, 'America/New_York', Date.parse('2030-01-01T00:00:00Z'), Date.parse('2031-01-01T00:00:00Z'));
      writeLocationOffsets(db, 4, 'Europe/London', Date.parse('2030-01-01T00:00:00Z'), Date.parse('2031-01-01T00:00:00Z'));
      const cases: [number, string, string][] = [
        // New York: EST (-5) until 2030-03-10 07:00 UTC, EDT (-4) until 2030-11-03 06:00 UTC.
        [3, '2030-03-10T04:59:00Z', '2030-03-09'],
        [3, '2030-03-10T05:00:00Z', '2030-03-10'],
        [3, '2030-03-11T03:59:00Z', '2030-03-10'], // EDT now: midnight is 04:00 UTC
        [3, '2030-03-11T04:00:00Z', '2030-03-11'],
        [3, '2030-11-03T03:59:00Z', '2030-11-02'],
        [3, '2030-11-04T04:59:00Z', '2030-11-03'], // EST again: midnight is 05:00 UTC
        [3, '2030-11-04T05:00:00Z', '2030-11-04'],
        // London: BST from 2030-03-31 01:00 UTC to 2030-10-27 01:00 UTC.
        [4, '2030-03-31T23:30:00Z', '2030-04-01'],
        [4, '2030-03-30T23:30:00Z', '2030-03-30'],
        [4, '2030-10-26T23:30:00Z', '2030-10-27'],
        [4, '2030-10-27T23:30:00Z', '2030-10-27'],
      ];
      for (const [location, instant, date] of cases) assert.equal(locationToday(db, location, new Date(instant)), date, `${location} at ${instant}`);
      // And at every half hour of the year, as Intl says.
      for (let t = Date.parse('2030-01-01T00:00:00Z'); t < Date.parse('2031-01-01T00:00:00Z'); t += 1_800_000) {
        const got = locationToday(db, 3, new Date(t));
        if (got !== todayIn('America/New_York', new Date(t))) assert.fail(`${new Date(t).toISOString()}: ${got}`);
      }
      assert.equal(locationToday(db, 99, new Date()), null, 'no offsets: null (callers fall back to the timezone)');

      // The views run exactly this SQL at 'now' (the migration's text is checked, not trusted).
      const normalise = (s: string): string => s.replace(/\s+/g, ' ');
      for (const view of ['pos_prices_today', 'pos_availability_today']) {
        const text = (db.prepare("SELECT sql FROM sqlite_master WHERE name = ?").get(view) as { sql: string }).sql;
        assert.ok(normalise(text).includes(`LEFT JOIN location_days d ON ${normalise(localDayMatchSql('i.location_id', "'now'"))}`), view);
      }
    } finally {
      db.close();
    }
  });

  it('location_days: contiguous local days that agree with Intl at every boundary and at random instants, in 15 zones', () => {
    // Zones with DST, half-hour and 45-minute offsets, DST of 30 minutes (Lord Howe), negative DST in
    // the IANA data (Dublin), Ramadan changes (Casablanca), the dateline extremes; over a window that
    // holds a year end and 29 February 2028.
    const zones = [
      'UTC', 'Europe/London', 'Europe/Dublin', 'America/New_York', 'America/St_Johns', 'America/Santiago', 'Africa/Casablanca', 'Asia/Kolkata',
      'Asia/Kathmandu', 'Asia/Tehran', 'Australia/Lord_Howe', 'Pacific/Chatham', 'Pacific/Kiritimati', 'Pacific/Pago_Pago', 'Pacific/Apia',
    ];
    const from = Date.parse('2027-12-20T00:00:00Z');
    const to = Date.parse('2029-01-10T00:00:00Z');
    const db = openDatabase(storeFilePath(tempDir('pos-sync-today-days-'), 'till'));
    const formatters = new Map(zones.map((z) => [z, new Intl.DateTimeFormat('en-CA', { timeZone: z, year: 'numeric', month: '2-digit', day: '2-digit' })]));
    const intlDate = (zone: string, ms: number): string => formatters.get(zone)!.format(new Date(ms));
    const ms = (utc: string): number => Date.parse(`${utc.replace(' ', 'T')}Z`);
    const at = db.prepare<[{ location: number; now: string }], { today: string | null }>(
      `SELECT (SELECT d.local_date FROM location_days d WHERE ${localDayMatchSql('@location', '@now')}) AS today`,
    );
    const viewDate = (location: number, instant: number): string | null => at.get({ location, now: sqliteUtc(instant) })?.today ?? null;
    let seed = 11;
    const random = (): number => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    try {
      let leapDayRows = 0;
      zones.forEach((zone, index) => {
        const location = 100 + index;
        writeLocationOffsets(db, location, zone, from, to);
        const offsets = db.prepare('SELECT from_utc, to_utc FROM location_utc_offsets WHERE location_id = ? ORDER BY from_utc').all(location) as { from_utc: string; to_utc: string }[];
        const days = db.prepare('SELECT utc_from, utc_to, local_date FROM location_days WHERE location_id = ? ORDER BY utc_from').all(location) as { utc_from: string; utc_to: string; local_date: string }[];
        assert.equal(days[0]!.utc_from, offsets[0]!.from_utc, zone);
        assert.equal(days.at(-1)!.utc_to, offsets.at(-1)!.to_utc, zone);
        for (let i = 0; i < days.length; i++) {
          const day = days[i]!;
          const start = ms(day.utc_from);
          const end = ms(day.utc_to);
          assert.ok(end - start <= 25 * 3_600_000, `${zone} ${JSON.stringify(day)}: longer than 25 hours`);
          if (i > 0) {
            assert.equal(day.utc_from, days[i - 1]!.utc_to, `${zone}: a gap or overlap before ${day.utc_from}`);
            // A new row starts a new local date, or continues the same one across an offset change.
            assert.ok(day.local_date === days[i - 1]!.local_date || day.local_date === addDays(days[i - 1]!.local_date as never, 1), `${zone} ${day.utc_from}`);
          }
          if (day.local_date === '2028-02-29') leapDayRows++;
          // The row's first and last second, and the query the views run at both, say the same as Intl.
          for (const instant of [start, end - 1000, start + Math.floor(random() * (end - start))]) {
            const want = intlDate(zone, instant);
            assert.equal(day.local_date, want, `${zone} at ${new Date(instant).toISOString()}`);
            const got = viewDate(location, instant);
            if (got !== want) assert.fail(`${zone} at ${new Date(instant).toISOString()}: views ${got}, Intl ${want}`);
          }
        }
        // Random instants anywhere in the window.
        for (let k = 0; k < 300; k++) {
          const instant = from + Math.floor(random() * (to - from - 60_000)) + 60_000;
          assert.equal(viewDate(location, instant), intlDate(zone, instant), `${zone} at ${new Date(instant).toISOString()}`);
        }
        // Outside the rows: no day, and the views use the reading PC's date.
        assert.equal(viewDate(location, from - 1000), null, zone);
        assert.equal(viewDate(location, ms(days.at(-1)!.utc_to)), null, zone);
        assert.equal(viewDate(location, ms(days.at(-1)!.utc_to) + 400 * 86_400_000), null, zone);
      });
      assert.equal(leapDayRows >= zones.length, true, '29 February 2028 is in every zone');
      // Rewriting replaces a location's days, never adds to them.
      const count = (): number => (db.prepare('SELECT count(*) AS n FROM location_days WHERE location_id = 100').get() as { n: number }).n;
      const before = count();
      writeLocationOffsets(db, 100, 'UTC', from, to);
      assert.equal(count(), before);
      assert.equal(before, (to - from) / 86_400_000);
    } finally {
      db.close();
    }
  });

  it('till migration 004 derives the days with the same statement the applier runs', () => {
    const migration = TILL_MIGRATIONS.find((m) => m.version === 4)!;
    const normalise = (text: string): string => text.replace(/\s+/g, ' ').trim();
    assert.ok(normalise(migration.sql).includes(`${normalise(LOCAL_DAYS_FROM_OFFSETS_SQL.replace(' WHERE location_id = @location', ''))};`), 'migration 004 and LOCAL_DAYS_FROM_OFFSETS_SQL differ');
    // And on a file with offsets written under 003, the migration's days are those the writer derives.
    const file = storeFilePath(tempDir('pos-sync-today-004-'), 'till');
    const old = openDatabase(file, { migrations: TILL_MIGRATIONS.slice(0, 3) });
    try {
      writeOffsetsBefore004(old, 1, 'Pacific/Chatham', Date.now() - 7 * 86_400_000, Date.now() + 2 * 365 * 86_400_000);
      writeOffsetsBefore004(old, 2, 'America/St_Johns', Date.now() - 7 * 86_400_000, Date.now() + 2 * 365 * 86_400_000);
    } finally {
      old.close();
    }
    const upgraded = openDatabase(file);
    try {
      const days = (): unknown[] => upgraded.prepare('SELECT * FROM location_days ORDER BY location_id, utc_from').all();
      const migrated = days();
      assert.ok(migrated.length > 2 * 700, `${migrated.length} day rows`);
      const offsets = upgraded.prepare('SELECT location_id, min(from_utc) AS f, max(to_utc) AS t, min(timezone) AS z FROM location_utc_offsets GROUP BY location_id').all() as { location_id: number; f: string; t: string; z: string }[];
      for (const o of offsets) writeLocationOffsets(upgraded, o.location_id, o.z, Date.parse(`${o.f.replace(' ', 'T')}Z`), Date.parse(`${o.t.replace(' ', 'T')}Z`));
      assert.deepEqual(days(), migrated);
    } finally {
      upgraded.close();
    }
  });

  it('a till file made under migration 002 answers the same rows after 003 and 004 (offsets, none, open-ended, readers in three zones)', needs('the sqlite3 shell'), () => {
    const file = storeFilePath(tempDir('pos-sync-today-003-'), 'till');
    // Locations 1 and 2 have offsets; 5 has none (a file an older agent wrote), so both views fall back
    // to the reader's local date for it. Each has yesterday's, today's and an open-ended range from
    // tomorrow to 9999-12-31, per tariff and per meal period, so "today" picks exactly one of three.
    const old = openDatabase(file, { migrations: TILL_MIGRATIONS.slice(0, 2) });
    try {
      assert.deepEqual(appliedMigrations(old).map((m) => m.version), [1, 2]);
      writeOffsetsBefore004(old, 1, ZONES[1]!, Date.now() - 7 * 86_400_000, Date.now() + 365 * 86_400_000);
      writeOffsetsBefore004(old, 2, ZONES[2]!, Date.now() - 7 * 86_400_000, Date.now() + 365 * 86_400_000);
      const price = old.prepare(
        `INSERT INTO price_ranges (location_id, item_id, tariff_name, date_from, date_to, tax_code, tax_rate, sell_price_minor, sell_price, currency, source_inbox_id)
         VALUES (?, ?, ?, ?, ?, 'S', 20, ?, ?, 'GBP', 1)`,
      );
      const meal = old.prepare(`INSERT INTO availability_ranges (location_id, item_id, meal_period, date_from, date_to, status, source_inbox_id) VALUES (?, ?, ?, ?, ?, ?, 1)`);
      for (const id of [1, 2, 5]) {
        old.prepare('INSERT INTO locations (location_id, location_name, currency, last_change_sequence) VALUES (?, ?, ?, 1)').run(id, `Location ${id}`, 'GBP');
        // Wide enough for every reader below and every location's own date.
        const around = addDays(todayIn('UTC'), -3);
        for (const itemId of ['a', 'b']) {
          old.prepare("INSERT INTO items (location_id, item_id, plu, item_name, item_type, updated_by) VALUES (?, ?, 'P', ?, 'MENU', 1)").run(id, itemId, `Item ${itemId}`);
          for (let d = 0; d < 6; d++) {
            const day = addDays(around, d);
            for (const tariff of ['Eat in', 'Take out']) price.run(id, itemId, tariff, day, day, 100 + d, `${1 + d / 100}`);
            for (const period of ['Lunch', 'Dinner']) meal.run(id, itemId, period, day, day, d % 2 === 0 ? 'AVAILABLE' : 'UNAVAILABLE');
          }
          const from = addDays(around, 6);
          for (const tariff of ['Eat in', 'Take out']) price.run(id, itemId, tariff, from, '9999-12-31', 999, '9.99');
          for (const period of ['Lunch', 'Dinner']) meal.run(id, itemId, period, from, '9999-12-31', 'AVAILABLE');
        }
      }
    } finally {
      old.close();
    }
    const queries = [
      'SELECT * FROM pos_prices_today ORDER BY location_id, item_id, tariff_name',
      'SELECT * FROM pos_availability_today ORDER BY location_id, item_id, meal_period',
      "SELECT * FROM pos_prices_today WHERE location_id = 5 AND plu = 'P' ORDER BY item_id, tariff_name",
      "SELECT * FROM pos_availability_today WHERE location_id = 1 AND plu = 'P' ORDER BY item_id, meal_period",
      "SELECT * FROM pos_prices_today WHERE tax_code = 'S' ORDER BY location_id, item_id, tariff_name",
    ];
    const readers = ['UTC', 'Pacific/Kiritimati', 'Pacific/Pago_Pago'];
    const answers = (): unknown[][] => readers.flatMap((tz) => queries.map((q) => sqlite3(file, tz, q)));
    // Dates may roll over between the two reads: retry when any date involved changed meanwhile.
    for (let attempt = 0; ; attempt++) {
      const dates = (): string => JSON.stringify([...readers, ...Object.values(ZONES)].map((z) => todayIn(z)));
      const startDates = dates();
      const before = answers();
      const upgraded = openDatabase(file);
      try {
        assert.deepEqual(appliedMigrations(upgraded).map((m) => m.version), TILL_MIGRATIONS.map((m) => m.version));
      } finally {
        upgraded.close();
      }
      const after = answers();
      if (dates() !== startDates && attempt < 2) continue;
      assert.deepEqual(after, before);
      // And they are the right rows: each location's own date (5: the reader's), one row per tariff or meal period and item.
      readers.forEach((tz, r) => {
        const prices = after[r * queries.length] as { location_id: number; date_from: string; date_to: string }[];
        const expected = (id: number): string => todayIn(id === 5 ? tz : ZONES[id]!);
        assert.equal(prices.length, 3 * 2 * 2, tz);
        for (const row of prices) assert.ok(row.date_from <= expected(row.location_id) && expected(row.location_id) <= row.date_to, `${tz}: ${JSON.stringify(row)}`);
        assert.equal((after[r * queries.length + 1] as unknown[]).length, 3 * 2 * 2, tz);
        assert.equal((after[r * queries.length + 2] as unknown[]).length, 2 * 2, tz);
        assert.equal((after[r * queries.length + 3] as unknown[]).length, 2 * 2, tz);
        assert.deepEqual(after[r * queries.length + 4], prices, tz);
      });
      break;
    }
  });

  it('the agent rewrites a location\'s offsets at start when its configured timezone changed', async () => {
    const dataDir = tempDir('pos-sync-today-restart-');
    const first = new Agent(testConfig({ dataDir }), silentLogger);
    await first.start();
    try {
      const res = await fetch(first.webhook!.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(dayByDay(3, 1)) });
      assert.equal(res.status, 200);
      await first.drainNow();
    } finally {
      await first.stop();
    }
    const zones = (): unknown[] => {
      const db = openReadOnly(storeFilePath(dataDir, 'till'));
      try {
        return db.prepare('SELECT DISTINCT timezone FROM location_utc_offsets WHERE location_id = 3').all();
      } finally {
        db.close();
      }
    };
    assert.deepEqual(zones(), [{ timezone: 'Europe/London' }], 'written at the first apply, from defaultTimezone');
    // IT sets the location's timezone; the agent starts again and receives nothing.
    await startTestAgent({ dataDir, locations: { 3: { timezone: 'Asia/Tokyo' } } });
    assert.deepEqual(zones(), [{ timezone: 'Asia/Tokyo' }]);
  });

  it('writes offsets again when a location\'s configured timezone changes, and not otherwise', () => {
    const db = openDatabase(storeFilePath(tempDir('pos-sync-today-tz-'), 'till'));
    try {
      db.prepare('INSERT INTO locations (location_id) VALUES (5)').run();
      assert.equal(ensureAllLocationOffsets(db, () => 'Europe/London'), 1);
      assert.equal(ensureAllLocationOffsets(db, () => 'Europe/London'), 0, 'fresh: left alone');
      // Offsets without their days (a file where they were lost or cut short): written again, both.
      db.prepare("DELETE FROM location_days WHERE location_id = 5 AND utc_from > date('now', '+1 year')").run();
      assert.equal(ensureAllLocationOffsets(db, () => 'Europe/London'), 1, 'days cut short: written again');
      assert.equal(ensureAllLocationOffsets(db, () => 'Europe/London'), 0);
      assert.equal(ensureAllLocationOffsets(db, () => 'Asia/Tokyo'), 1);
      const rows = db.prepare('SELECT DISTINCT timezone, offset_minutes FROM location_utc_offsets WHERE location_id = 5').all();
      assert.deepEqual(rows, [{ timezone: 'Asia/Tokyo', offset_minutes: 540 }]);
      // Years later, with less than the margin left, they are written again from then.
      assert.equal(ensureAllLocationOffsets(db, () => 'Asia/Tokyo', Date.now() + 2 * 365 * 86_400_000), 1);
    } finally {
      db.close();
    }
  });
});

import assert from 'node:assert/strict';
import { TODAY_STATEMENT } from '../../src/domain/today';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { startTestAgent, type RunningTestAgent } from '../helpers/agent';
import { REPO_ROOT, writeConfig } from '../helpers/child-agent';
import { item, price, tempDir, update } from '../helpers/fixtures';

/**
 * Issue 9, defects 2 to 7: inputs at the edges of what head office sends, each through real HTTP on
 * loopback and the real store, read back from the till's views and the agent's records.
 */

interface Warning {
  readonly path: string;
  readonly message: string;
}

function warnings(t: RunningTestAgent): Warning[] {
  return t.agent.core.agentDb.prepare('SELECT path, message FROM update_warnings ORDER BY id').all() as Warning[];
}

function prices(t: RunningTestAgent): { item_id: string; plu: string; sell_price: string; sell_price_minor: number }[] {
  return t.agent.core.tillDb.prepare('SELECT item_id, plu, sell_price, sell_price_minor FROM pos_prices ORDER BY item_id, date_from').all() as never;
}

/** A body as text, with the placeholders `"@name@"` replaced by raw JSON (numbers JSON.stringify cannot write). */
function rawBody(value: unknown, raw: Record<string, string>): string {
  let text = JSON.stringify(value);
  for (const [name, json] of Object.entries(raw)) text = text.replace(`"@${name}@"`, json);
  return text;
}

describe('defect 2: numbers are read from their source text', () => {
  it('a SellPrice with too many decimals sent as a JSON number is skipped with the same warning as the same text in a string', async () => {
    const t = await startTestAgent();
    const body = update(1, 1, 0, [item('1', 'A', [price('2027-01-01', '2027-12-31', 'Eat In', '@p1@')]), item('2', 'B', [price('2027-01-01', '2027-12-31', 'Eat In', '11.499999999999999999')])]);
    assert.equal((await t.post(rawBody(body, { p1: '11.499999999999999999' }))).status, 200);
    await t.settle();
    assert.deepEqual(prices(t), []);
    assert.deepEqual(warnings(t), [
      { path: 'ScheduledItems[0].PriceUpdates[0].SellPrice', message: 'SellPrice 11.499999999999999999 has more decimals than GBP allows (2); element skipped' },
      { path: 'ScheduledItems[1].PriceUpdates[0].SellPrice', message: 'SellPrice 11.499999999999999999 has more decimals than GBP allows (2); element skipped' },
    ]);
  });

  it('a large SellPrice number is stored exactly, and an ItemID beyond 2^53 keeps its exact digits', async () => {
    const t = await startTestAgent();
    const body = update(1, 1, 0, [item('@plu@', '@id@', [price('2027-01-01', '2027-12-31', 'Eat In', '@p@')])]);
    const text = rawBody(body, { p: '90071992547409.91', id: '12345678901234567890', plu: '98765432109876543210' });
    assert.match(text, /"ItemID":12345678901234567890/);
    assert.equal((await t.post(text)).status, 200);
    await t.settle();
    // Stored exactly; past 32 bits, so a till reading sell_price_minor as a 32-bit integer is warned about (issue 28).
    assert.deepEqual(warnings(t), [
      {
        path: 'ScheduledItems[0].PriceUpdates[0].SellPrice',
        message: 'SellPrice 90071992547409.91 (9007199254740991 minor units) is beyond 2147483647, the largest 32-bit integer; stored, but a till that reads sell_price_minor as a 32-bit integer misreads it',
      },
    ]);
    assert.deepEqual(prices(t), [{ item_id: '12345678901234567890', plu: '98765432109876543210', sell_price: '90071992547409.91', sell_price_minor: 9007199254740991 }]);
  });

  it('an exponent only moves the decimal point; a price past 2^53 minor units is refused, not rounded', async () => {
    const t = await startTestAgent();
    const body = update(1, 1, 0, [item('1', 'A', [price('2027-01-01', '2027-12-31', 'Eat In', '@p1@')]), item('2', 'B', [price('2027-01-01', '2027-12-31', 'Eat In', '@p2@')])]);
    assert.equal((await t.post(rawBody(body, { p1: '1.150E1', p2: '90071992547409.92' }))).status, 200);
    await t.settle();
    assert.deepEqual(prices(t).map((p) => [p.item_id, p.sell_price]), [['A', '11.50']]);
    assert.deepEqual(warnings(t), [{ path: 'ScheduledItems[1].PriceUpdates[0].SellPrice', message: 'SellPrice 90071992547409.92 is too large; element skipped' }]);
  });
});

describe('defect 3: byte-order mark and UTF-8', () => {
  const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

  const withBom = (body: unknown): Buffer => Buffer.concat([BOM, Buffer.from(JSON.stringify(body))]);

  it('a body starting with a UTF-8 BOM is accepted by the webhook', async () => {
    const t = await startTestAgent();
    const res = await t.post(withBom(update(1, 1, 0, [item('1', 'Café', [price('2027-01-01', '2027-12-31', 'Eat In', '2.50')])])));
    assert.equal(res.status, 200, JSON.stringify(res.json));
    await t.settle();
    assert.deepEqual(prices(t).map((p) => [p.item_id, p.sell_price]), [['Café', '2.50']]);
  });

  it('a file starting with a UTF-8 BOM is accepted by `import` (the CLI, as support runs it)', () => {
    const dir = tempDir();
    const config = writeConfig(dir, { dataDir: path.join(dir, 'data') });
    const file = path.join(dir, 'update.json');
    fs.writeFileSync(file, withBom(update(1, 1, 0, [item('1', 'A', [price('2027-01-01', '2027-12-31', 'Eat In', '3.00')])])));
    const result = spawnSync(process.execPath, [path.join(REPO_ROOT, 'bin', 'pos-sync-agent.cjs'), 'import', file, '--config', config], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(result.status, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /Applied location 1 ChangeSequence 1 as baseline \(0 warnings\)/);
  });

  it('a body that is not UTF-8 is refused with 400 invalid_encoding and quarantined byte for byte', async () => {
    const t = await startTestAgent();
    const text = JSON.stringify(update(1, 1, 0, [item('1', '@name@', [price('2027-01-01', '2027-12-31', 'Eat In', '2.50')])]));
    const [before, after] = text.split('@name@') as [string, string];
    // "Café" in Latin-1: 0xE9 alone is not UTF-8 (decoding would store U+FFFD instead).
    const raw = Buffer.concat([Buffer.from(before), Buffer.from([0x43, 0x61, 0x66, 0xe9]), Buffer.from(after)]);
    const res = await t.post(raw);
    assert.equal(res.status, 400);
    const error = (res.json as { error: { id: string; message: string; quarantineId: number } }).error;
    assert.equal(error.id, 'invalid_encoding');
    assert.match(error.message, new RegExp(`not valid UTF-8 \\(at byte ${before.length + 3}\\)`));
    const kept = t.agent.core.agentDb.prepare('SELECT body, error_id FROM quarantine WHERE id = ?').get(error.quarantineId) as { body: Buffer; error_id: string };
    assert.equal(kept.error_id, 'invalid_encoding');
    assert.ok(Buffer.compare(kept.body, raw) === 0, 'the quarantine keeps the exact bytes');
    await t.settle();
    assert.deepEqual(prices(t), []);
    assert.equal((t.agent.core.agentDb.prepare('SELECT count(*) AS n FROM inbox').get() as { n: number }).n, 0);
  });
});

describe('defect 4: a redelivery that only re-encodes is the same update', () => {
  function inboxStates(t: RunningTestAgent): string[] {
    return (t.agent.core.agentDb.prepare('SELECT state FROM inbox ORDER BY id').all() as { state: string }[]).map((r) => r.state);
  }

  it('"LocationID": "118" then 118 (and ItemID, PLU, SellPrice, TaxRate re-encoded, keys reordered) is a duplicate; a changed price is still a conflict', async () => {
    const t = await startTestAgent();
    const first = update('118', 5, 4, [item('1001', '77', [price('2027-01-01', '2027-12-31', 'Eat In', '11.50', 'S', 20)])]);
    assert.equal((await t.post(first)).status, 200);
    await t.settle();
    const reencoded = {
      ScheduledItems: [{ ItemID: 77, PLU: 1001, ItemType: 'recipe', ItemName: ' Item 77 ', PriceUpdates: [{ SellPrice: 11.5, TaxRate: '20', TaxCode: 'S', TariffName: 'Eat In', PriceModel: 'Standard', DateTo: '2027-12-31', DateFrom: '2027-01-01' }], ScheduleUpdates: [] }],
      CurrencyIsoCode: 'gbp',
      LocationName: 'Location 118',
      LocationID: 118,
      ParentChangeSequence: '4',
      ChangeSequence: 5,
    };
    const again = await t.post(JSON.stringify(reencoded, null, 2));
    assert.equal(again.status, 200);
    assert.equal((again.json as { status: string }).status, 'duplicate');
    assert.deepEqual(inboxStates(t), ['applied']);
    const status = t.agent.core.status().find((l) => l.locationId === 118);
    assert.equal(status?.conflicts, 0);

    const changed = await t.post(update(118, 5, 4, [item(1001, 77, [price('2027-01-01', '2027-12-31', 'Eat In', 11.51, 'S', 20)])]));
    assert.equal((changed.json as { status: string }).status, 'conflict');
    assert.deepEqual(inboxStates(t), ['applied', 'conflict']);
  });
});

describe('defect 6: no silent truncation', () => {
  it('descriptive text is stored as sent however long; a key over its limit is skipped with a warning naming the field and the limit', async () => {
    const t = await startTestAgent();
    const longModel = `Model ${'m'.repeat(300)}`;
    const longName = `Name ${'n'.repeat(800)}`;
    const longLocation = `Location ${'l'.repeat(1500)}`;
    const items = [
      item('1', 'A', [{ ...price('2027-01-01', '2027-12-31', 'Eat In', '1.00'), PriceModel: longModel }, price('2027-01-01', '2027-12-31', 'T'.repeat(201), '2.00'), price('2027-01-01', '2027-12-31', 'Take Away', '3.00', 'X'.repeat(51))], [
        { DateFrom: '2027-01-01', DateTo: '2027-12-31', Status: 'AVAILABLE', MealPeriodName: `😀${'M'.repeat(199)}` },
        { DateFrom: '2027-01-01', DateTo: '2027-12-31', Status: 'AVAILABLE', MealPeriodName: 'M'.repeat(201) },
      ], { ItemName: longName }),
      item('2', 'I'.repeat(101)),
      item('P'.repeat(101), '3'),
    ];
    assert.equal((await t.post(update(1, 1, 0, items, { LocationName: longLocation }))).status, 200);
    await t.settle();
    const till = t.agent.core.tillDb;
    assert.deepEqual(till.prepare('SELECT item_name, tariff_name, price_model, sell_price FROM pos_prices').all(), [{ item_name: longName, tariff_name: 'Eat In', price_model: longModel, sell_price: '1.00' }]);
    // 200 characters as a person counts them (the emoji is one), though 201 UTF-16 code units.
    assert.deepEqual(till.prepare('SELECT meal_period FROM pos_availability').all(), [{ meal_period: `😀${'M'.repeat(199)}` }]);
    assert.deepEqual(till.prepare('SELECT location_name FROM pos_sync_state').all(), [{ location_name: longLocation }]);
    assert.deepEqual(warnings(t), [
      { path: 'ScheduledItems[0].PriceUpdates[1].TariffName', message: 'TariffName is 201 characters long; the limit is 200; element skipped' },
      { path: 'ScheduledItems[0].PriceUpdates[2].TaxCode', message: 'TaxCode is 51 characters long; the limit is 50; element skipped' },
      { path: 'ScheduledItems[0].ScheduleUpdates[1].MealPeriodName', message: 'MealPeriodName is 201 characters long; the limit is 200; element skipped' },
      { path: 'ScheduledItems[1].ItemID', message: 'ItemID is 101 characters long; the limit is 100; item skipped' },
      { path: 'ScheduledItems[2].PLU', message: 'PLU is 101 characters long; the limit is 100; item skipped' },
    ]);
  });

  it('a LocationName that is not text is reported, not dropped silently', async () => {
    const t = await startTestAgent();
    assert.equal((await t.post(update(1, 1, 0, [], { LocationName: ['Riverside'] }))).status, 200);
    await t.settle();
    assert.deepEqual(warnings(t), [{ path: 'LocationName', message: 'expected text, got ["Riverside"]; ignored' }]);
  });
});

describe('defect 7: the same key twice in one update', () => {
  it('the later element wins on the overlap, and a warning names the item, the tariff or meal period, and the dates', async () => {
    const t = await startTestAgent();
    const body = update(1, 1, 0, [
      item('1', 'A', [price('2027-01-01', '2027-01-31', 'Eat In', '10.00'), price('2027-01-15', '2027-02-15', 'Eat In', '12.00'), price('2027-01-01', '2027-01-31', 'Take Away', '9.00'), price('2027-01-10', '2027-01-12', 'Take Away', '9.00')], [
        { DateFrom: '2027-01-01', DateTo: '2027-01-31', Status: 'AVAILABLE', MealPeriodName: 'Lunch' },
        { DateFrom: '2027-01-20', DateTo: '2027-01-25', Status: 'UNAVAILABLE', MealPeriodName: 'Lunch' },
      ]),
      // The same item again later in the body: its element overlaps both earlier Eat In elements.
      item('1', 'A', [price('2027-01-30', '2027-02-01', 'Eat In', '11.00')]),
    ]);
    assert.equal((await t.post(body)).status, 200);
    await t.settle();
    const till = t.agent.core.tillDb;
    assert.deepEqual(
      till.prepare("SELECT date_from, date_to, sell_price FROM pos_prices WHERE tariff_name = 'Eat In' ORDER BY date_from").all(),
      [
        { date_from: '2027-01-01', date_to: '2027-01-14', sell_price: '10.00' },
        { date_from: '2027-01-15', date_to: '2027-01-29', sell_price: '12.00' },
        { date_from: '2027-01-30', date_to: '2027-02-01', sell_price: '11.00' },
        { date_from: '2027-02-02', date_to: '2027-02-15', sell_price: '12.00' },
      ],
    );
    assert.deepEqual(till.prepare("SELECT date_from, date_to, sell_price FROM pos_prices WHERE tariff_name = 'Take Away'").all(), [{ date_from: '2027-01-01', date_to: '2027-01-31', sell_price: '9.00' }]);
    assert.deepEqual(till.prepare('SELECT date_from, date_to, status FROM pos_availability ORDER BY date_from').all(), [
      { date_from: '2027-01-01', date_to: '2027-01-19', status: 'AVAILABLE' },
      { date_from: '2027-01-20', date_to: '2027-01-25', status: 'UNAVAILABLE' },
      { date_from: '2027-01-26', date_to: '2027-01-31', status: 'AVAILABLE' },
    ]);
    assert.deepEqual(warnings(t), [
      {
        path: 'ScheduledItems[0].PriceUpdates[1]',
        message: 'item "A", tariff "Eat In": 2027-01-15..2027-02-15 overlaps ScheduledItems[0].PriceUpdates[0] (2027-01-01..2027-01-31) on 2027-01-15..2027-01-31 with a different value in the same update; the later element wins where they overlap',
      },
      {
        path: 'ScheduledItems[0].ScheduleUpdates[1]',
        message: 'item "A", meal period "Lunch": 2027-01-20..2027-01-25 overlaps ScheduledItems[0].ScheduleUpdates[0] (2027-01-01..2027-01-31) on 2027-01-20..2027-01-25 with a different value in the same update; the later element wins where they overlap',
      },
      {
        path: 'ScheduledItems[1].PriceUpdates[0]',
        message: 'item "A", tariff "Eat In": 2027-01-30..2027-02-01 overlaps ScheduledItems[0].PriceUpdates[0] (2027-01-01..2027-01-31) on 2027-01-30..2027-01-31 with a different value in the same update (and 1 more earlier element); the later element wins where they overlap',
      },
    ]);
    const state = till.prepare('SELECT warnings FROM pos_sync_state').get() as { warnings: number };
    assert.equal(state.warnings, 3);
  });
});

describe('defect 5: timezone advice in `status` follows the site\'s locations', () => {
  function cli(config: string, tz: string, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
    const result = spawnSync(process.execPath, [path.join(REPO_ROOT, 'bin', 'pos-sync-agent.cjs'), ...args, '--config', config], {
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, TZ: tz },
    });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  }

  it('an Auckland site on an Auckland PC is not told to move to Europe/London; on a London PC it is told to move to Auckland', () => {
    const dir = tempDir();
    // defaultTimezone left at its default (Europe/London); the one location is configured for Auckland.
    const config = writeConfig(dir, { dataDir: path.join(dir, 'data'), locations: { '7': { timezone: 'Pacific/Auckland' } } });
    const file = path.join(dir, 'update.json');
    fs.writeFileSync(file, JSON.stringify(update(7, 1, 0, [item('1', 'A', [price('2027-01-01', '2027-12-31', 'Eat In', '3.00')])])));
    assert.equal(cli(config, 'Pacific/Auckland', 'import', file).status, 0);

    const inAuckland = cli(config, 'Pacific/Auckland', 'status');
    assert.equal(inAuckland.status, 0, inAuckland.stderr);
    assert.match(inAuckland.stdout, /last applied ChangeSequence 1/);
    assert.doesNotMatch(inAuckland.stdout, /Clock:|Europe\/London/);
    const json = JSON.parse(cli(config, 'Pacific/Auckland', 'status', '--json').stdout) as { ops: { clock: { machineTimezone: string; warnings: string[] } } };
    assert.deepEqual([json.ops.clock.machineTimezone, json.ops.clock.warnings], ['Pacific/Auckland', []]);

    const inLondon = cli(config, 'Europe/London', 'ops', 'status');
    assert.equal(inLondon.status, 0, inLondon.stderr);
    assert.match(inLondon.stdout, /Clock: this PC's timezone Europe\/London .* set this PC to Pacific\/Auckland/);
    assert.doesNotMatch(inLondon.stdout, /set this PC to Europe\/London/);
    assert.match(inLondon.stdout, new RegExp(`\nToday: ${TODAY_STATEMENT.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\n`));
  });

  it('a London site on a UTC PC in November gets no clock advice (UTC shows London time then), nor does a site in two timezones', () => {
    const dir = tempDir();
    const config = writeConfig(dir, { dataDir: path.join(dir, 'data'), locations: { '7': { timezone: 'Europe/London' } } });
    const file = path.join(dir, 'update.json');
    fs.writeFileSync(file, JSON.stringify(update(7, 1, 0, [item('1', 'A', [price('2027-01-01', '2027-12-31', 'Eat In', '3.00')])])));
    assert.equal(cli(config, 'UTC', 'import', file).status, 0);
    // The advice is about now: a fixed instant through the machine's clock is not available, so the
    // test asks only when London keeps UTC's time (from the last Sunday of October to the last of March).
    const london = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/London', timeZoneName: 'shortOffset' }).formatToParts(new Date()).find((p) => p.type === 'timeZoneName')!.value;
    if (london === 'GMT') assert.doesNotMatch(cli(config, 'UTC', 'status').stdout, /Clock:/);
    const two = writeConfig(dir, { dataDir: path.join(dir, 'data'), locations: { '7': { timezone: 'Europe/London' }, '8': { timezone: 'Pacific/Auckland' } } });
    for (const tz of ['UTC', 'Europe/London', 'Pacific/Auckland', 'America/New_York']) assert.doesNotMatch(cli(two, tz, 'status').stdout, /Clock:|set this PC to/, tz);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cappedWarnings, MAX_WARNINGS, parseEnvelope, planUpdate, validateEnvelope, warningCount } from '../../../src/domain/payload';
import { item, price, sampleBodies, schedule, update } from '../../helpers/fixtures';

function plan(body: Record<string, unknown>) {
  const checked = validateEnvelope(body);
  assert.ok(checked.ok, JSON.stringify(checked));
  return planUpdate(checked.envelope, checked.body);
}

describe('webhook body: envelope', () => {
  it('accepts the three samples, with identifiers as numbers or strings', () => {
    for (const { name, raw } of sampleBodies()) {
      const r = parseEnvelope(raw);
      assert.ok(r.ok, name);
      assert.equal(r.envelope.LocationID, 3021);
    }
  });

  it('names the offending field', () => {
    const field = (body: unknown): string => {
      const r = validateEnvelope(body);
      assert.ok(!r.ok);
      return `${r.error.field}: ${r.error.message}`;
    };
    const good = update(3021, 2, 1, []);
    assert.equal(field({ ...good, LocationID: undefined }), 'LocationID: is required');
    assert.match(field({ ...good, LocationID: 'abc' }), /^LocationID: /);
    assert.match(field({ ...good, LocationID: -4 }), /^LocationID: /);
    assert.match(field({ ...good, ChangeSequence: 2.5 }), /^ChangeSequence: /);
    assert.equal(field({ ...good, ParentChangeSequence: undefined }), 'ParentChangeSequence: is required');
    assert.match(field({ ...good, ScheduledItems: {} }), /^ScheduledItems: /);
    assert.equal(field({ ...good, ScheduledItems: undefined }), 'ScheduledItems: is required');
    assert.match(field({ ...good, ChangeSequence: 1, ParentChangeSequence: 1 }), /^ChangeSequence: must be greater than ParentChangeSequence/);
    assert.match(field([good]), /^\(body\): expected a JSON object/);
    assert.match(field(null), /^\(body\)/);
    const notJson = parseEnvelope(Buffer.from('{"ChangeSequence": '));
    assert.ok(!notJson.ok);
    assert.equal(notJson.error.field, '(body)');
    assert.match(notJson.error.message, /not valid JSON/);
  });

  it('accepts sequence numbers sent as strings of digits', () => {
    const r = validateEnvelope(update('3021', 2, 1, [], { ChangeSequence: '2', ParentChangeSequence: '1' }));
    assert.ok(r.ok);
    assert.equal(r.envelope.ChangeSequence, 2);
  });
});

describe('webhook body: elements', () => {
  it('normalises identifiers to text: numbers in decimal, strings trimmed and kept', () => {
    const p = plan(update(1, 2, 1, [item(' 01001 ', ' 8812-0001 '), item(2040, 55123)]));
    assert.deepEqual(p.items.map((i) => [i.plu, i.itemId]), [['01001', '8812-0001'], ['2040', '55123']]);
  });

  it('skips bad elements with a warning naming the path, and keeps the rest', () => {
    const p = plan(
      update(1, 2, 1, [
        item('1', 'A', [
          price('2026-12-01', '2026-12-31', 'Eat In', 11.5),
          price('2026-12-31', '2026-12-01', 'Eat In', 11.5), // reversed
          price('2026-12-01', '2026-12-31', 'Eat In', 11.505), // too many decimals
          price('2026-02-30', '2026-12-31', 'Eat In', 1), // not a date
          { ...price('2026-12-01', '2026-12-31', 'Eat In', 1), TaxRate: 13.5 },
          { ...price('2026-12-01', '2026-12-31', 'Eat In', 1), TaxCode: '' },
          { ...price('2026-12-01', '2026-12-31', '', 1) },
          'not an object',
        ], [
          schedule('2026-12-01', '2026-12-31', 'Lunch'),
          { ...schedule('2026-12-01', '2026-12-31', 'Lunch'), Status: 'MAYBE' },
          { ...schedule('2026-12-01', '2026-12-31', 'Lunch'), MealPeriodName: '  ' },
        ]),
        item('2', 'B', [], [], { ItemType: 'BUFFET' }),
        item(null as unknown as string, 'C'),
        item('4', { id: 1 } as unknown as string),
        42,
      ]),
    );
    assert.equal(p.items.length, 1);
    assert.equal(p.items[0]!.prices.length, 1);
    assert.equal(p.items[0]!.availability.length, 1);
    const paths = p.warnings.map((w) => w.path);
    assert.deepEqual(paths, [
      'ScheduledItems[0].PriceUpdates[1]',
      'ScheduledItems[0].PriceUpdates[2].SellPrice',
      'ScheduledItems[0].PriceUpdates[3].DateFrom',
      'ScheduledItems[0].PriceUpdates[4].TaxRate',
      'ScheduledItems[0].PriceUpdates[5].TaxCode',
      'ScheduledItems[0].PriceUpdates[6].TariffName',
      'ScheduledItems[0].PriceUpdates[7]',
      'ScheduledItems[0].ScheduleUpdates[1].Status',
      'ScheduledItems[0].ScheduleUpdates[2].MealPeriodName',
      'ScheduledItems[1].ItemType',
      'ScheduledItems[2].PLU',
      'ScheduledItems[3].ItemID',
      'ScheduledItems[4]',
    ]);
    assert.match(p.warnings[0]!.message, /reversed date range/);
    assert.match(p.warnings[1]!.message, /more decimals than GBP allows/);
  });

  it('skips prices but keeps availability when the currency is unknown', () => {
    const p = plan(update(1, 2, 1, [item('1', 'A', [price('2026-12-01', '2026-12-31', 'Eat In', 1)], [schedule('2026-12-01', '2026-12-31', 'Lunch')])], { CurrencyIsoCode: 'XXY' }));
    assert.equal(p.currency, null);
    assert.equal(p.items[0]!.prices.length, 0);
    assert.equal(p.items[0]!.availability.length, 1);
    assert.deepEqual(p.warnings.map((w) => w.path), ['CurrencyIsoCode', 'ScheduledItems[0].PriceUpdates[0].SellPrice']);
  });

  it('accepts lower-case enumerations and an item with prices but no schedule', () => {
    const p = plan(update(1, 2, 1, [item('1', 'A', [price('2026-12-01', '2026-12-31', 'Eat In', '2.50')], [], { ItemType: 'menu', ScheduleUpdates: null })]));
    assert.equal(p.items[0]!.type, 'MENU');
    assert.equal(p.items[0]!.prices[0]!.value.sellPriceMinor, 250);
    assert.deepEqual(p.warnings, []);
  });
});

describe('warnings of one update', () => {
  it('keeps the first MAX_WARNINGS and counts the rest in one last warning', () => {
    const list = cappedWarnings();
    for (let i = 0; i < MAX_WARNINGS; i++) list.push({ path: `p${i}`, message: 'm' });
    assert.equal(list.length, MAX_WARNINGS);
    assert.equal(warningCount(list), MAX_WARNINGS);
    list.push({ path: 'over', message: 'm' });
    assert.deepEqual(list.at(-1), { path: '(update)', message: `1 more warning in this update, not listed (only the first ${MAX_WARNINGS} are kept)` });
    for (let i = 0; i < 1499; i++) list.push({ path: 'over', message: 'm' });
    assert.equal(list.length, MAX_WARNINGS + 1);
    assert.deepEqual(list.at(-1), { path: '(update)', message: `1500 more warnings in this update, not listed (only the first ${MAX_WARNINGS} are kept)` });
    assert.equal(list[MAX_WARNINGS - 1]!.path, `p${MAX_WARNINGS - 1}`);
    assert.equal(warningCount(list), MAX_WARNINGS + 1500);
    assert.equal(warningCount([{ path: 'a', message: 'b' }]), 1);
    assert.ok(Array.isArray(list) && Object.getPrototypeOf(list) === Array.prototype && !Object.keys(list).includes('push'), 'a plain array');
  });

  it('an update whose every element is unusable holds MAX_WARNINGS of them, and says how many more', () => {
    const bad = Array.from({ length: 3 * MAX_WARNINGS }, (_, i) => ({ DateFrom: 'soon', DateTo: '2026-12-31', TariffName: 'Eat In', TaxCode: 'S', TaxRate: 20, SellPrice: 1 + i }));
    const planned = plan(update(9, 2, 1, [{ ...item(1, 'a', []), PriceUpdates: bad }]));
    assert.equal(planned.warnings.length, MAX_WARNINGS + 1);
    assert.equal(warningCount(planned.warnings), 3 * MAX_WARNINGS);
    assert.match(planned.warnings.at(-1)!.message, new RegExp(`^${2 * MAX_WARNINGS} more warnings in this update`));
  });
});

describe('an ItemID sent twice in one update', () => {
  it('warns when the entries differ in PLU, name or type: the till keeps the later entry\'s', () => {
    const p = plan(
      update(3021, 2, 1, [
        item('8001', 'DUP1', [price('2026-12-01', '2026-12-31', 'Eat In', 1)], [], { ItemName: 'DupA' }),
        item('7', 'OTHER'),
        item('8002', 'DUP1', [price('2027-01-01', '2027-01-31', 'Eat In', 2)], [], { ItemName: 'DupB', ItemType: 'menu' }),
      ]),
    );
    assert.deepEqual(p.warnings, [
      { path: 'ScheduledItems[2].PLU', message: 'ItemID "DUP1" is also at ScheduledItems[0] with PLU "8001": the till keeps this entry\'s, "8002"' },
      { path: 'ScheduledItems[2].ItemName', message: 'ItemID "DUP1" is also at ScheduledItems[0] with ItemName "DupA": the till keeps this entry\'s, "DupB"' },
      { path: 'ScheduledItems[2].ItemType', message: 'ItemID "DUP1" is also at ScheduledItems[0] with ItemType "RECIPE": the till keeps this entry\'s, "MENU"' },
    ]);
  });

  it('says nothing when they agree (the same PLU as a number and as text, the name with spaces around it)', () => {
    const p = plan(
      update(3021, 2, 1, [
        item(8001, 'DUP1', [price('2026-12-01', '2026-12-31', 'Eat In', 1)], [], { ItemName: 'Dup' }),
        item('8001', 'DUP1', [price('2027-01-01', '2027-01-31', 'Eat In', 2)], [], { ItemName: ' Dup ' }),
      ]),
    );
    assert.deepEqual(p.warnings, []);
  });
});

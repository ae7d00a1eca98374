import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { BODY_READERS } from './scan-harness';
import { hasLoneSurrogate, planUpdate, validateEnvelope, type Envelope } from '../../../src/domain/payload';
import { parseExact } from '../../../src/domain/json-scan';

/**
 * A lone UTF-16 surrogate can be sent in JSON as an escape (`"P\ud800"`) but cannot be stored as
 * UTF-8: SQLite writes U+FFFD in its place. `P\ud800` and `P\udc00` were two identifiers to the
 * agent's duplicate checks and one in the till, which then held two prices for one item, tariff and
 * date. The receiver takes such a body (a refusal would leave the location's chain waiting for an update
 * head office has sent), and the plan skips the item or element whose text the till would get has one,
 * with a warning, and ignores it elsewhere: the till never gets one.
 */

const isWellFormed = (text: string): boolean => (text as unknown as { isWellFormed(): boolean }).isWellFormed();

const readers = BODY_READERS;

const high = fc.integer({ min: 0xd800, max: 0xdbff }).map((c) => String.fromCharCode(c));
const low = fc.integer({ min: 0xdc00, max: 0xdfff }).map((c) => String.fromCharCode(c));
/** One lone surrogate: a high one with no low after it, a low one with no high before it, or a pair the wrong way round. */
const lone = fc.oneof(high, low, fc.tuple(low, high).map(([l, h]) => l + h), fc.tuple(high, high, low).map(([a, b, c]) => a + b + c));
/** ASCII around it, so nothing next to it makes it a pair. */
const ascii = fc.string({ maxLength: 6 });
/** Text with a lone surrogate at its start, in its middle or at its end. */
const withLone = fc.tuple(fc.constantFrom('start', 'middle', 'end'), ascii.filter((s) => s.trim() !== ''), lone, ascii.filter((s) => s.trim() !== '')).map(([where, before, surrogate, after]) =>
  where === 'start' ? surrogate + after : where === 'end' ? before + surrogate : before + surrogate + after,
);
/** Text with well-formed pairs only (emoji and other characters past U+FFFF), never empty. */
const withPairs = fc.tuple(fc.string({ unit: 'grapheme', maxLength: 6 }), fc.constantFrom('😀', '𝄞', '👍🏽', '🇬🇧', '\u{10FFFF}')).map(([s, emoji]) => `A${s}${emoji}`);

/** The text fields of a body, where each goes (the path a refusal names). */
const FIELDS = [
  ['PLU', (b: Body, v: string) => (b.ScheduledItems[0]!.PLU = v), 'ScheduledItems[0].PLU'],
  ['ItemID', (b: Body, v: string) => (b.ScheduledItems[0]!.ItemID = v), 'ScheduledItems[0].ItemID'],
  ['ItemName', (b: Body, v: string) => (b.ScheduledItems[0]!.ItemName = v), 'ScheduledItems[0].ItemName'],
  ['TariffName', (b: Body, v: string) => (b.ScheduledItems[0]!.PriceUpdates[0]!.TariffName = v), 'ScheduledItems[0].PriceUpdates[0].TariffName'],
  ['TaxCode', (b: Body, v: string) => (b.ScheduledItems[0]!.PriceUpdates[0]!.TaxCode = v), 'ScheduledItems[0].PriceUpdates[0].TaxCode'],
  ['PriceModel', (b: Body, v: string) => (b.ScheduledItems[0]!.PriceUpdates[0]!.PriceModel = v), 'ScheduledItems[0].PriceUpdates[0].PriceModel'],
  ['MealPeriodName', (b: Body, v: string) => (b.ScheduledItems[1]!.ScheduleUpdates[0]!.MealPeriodName = v), 'ScheduledItems[1].ScheduleUpdates[0].MealPeriodName'],
  ['LocationName', (b: Body, v: string) => (b.LocationName = v), 'LocationName'],
  ['an unknown field', (b: Body, v: string) => (b.ScheduledItems[1]!.Note = [1, { x: v }]), 'ScheduledItems[1].Note[1].x'],
  ['a member name', (b: Body, v: string) => (b.ScheduledItems[1]!.PriceUpdates[0]![v] = 1), null],
] as const;

interface Body {
  LocationName: string;
  ScheduledItems: (Record<string, unknown> & { PriceUpdates: Record<string, unknown>[]; ScheduleUpdates: Record<string, unknown>[] })[];
  [key: string]: unknown;
}

function body(): Body {
  const price = (tariff: string): Record<string, unknown> => ({ DateFrom: '2026-12-01', DateTo: '2026-12-31', TariffName: tariff, PriceModel: 'S', TaxCode: 'S', TaxRate: 20, SellPrice: 1.5 });
  const meal = (): Record<string, unknown> => ({ DateFrom: '2026-12-01', DateTo: '2026-12-31', Status: 'AVAILABLE', MealPeriodName: 'Lunch' });
  return {
    ChangeSequence: 11,
    ParentChangeSequence: 10,
    LocationID: 6002,
    LocationName: 'Riverside',
    CurrencyIsoCode: 'GBP',
    ScheduledItems: [
      { PLU: '1', ItemID: 'I1', ItemName: 'Tea', ItemType: 'RECIPE', PriceUpdates: [price('Eat In')], ScheduleUpdates: [meal()] },
      { PLU: '2', ItemID: 'I2', ItemName: 'Cake', ItemType: 'RECIPE', PriceUpdates: [price('Take Out')], ScheduleUpdates: [meal()] },
    ],
  };
}

/** The body as JSON: JSON.stringify writes a lone surrogate as a \u escape, as head office's exporter would. */
const raw = (b: Body): Buffer => Buffer.from(JSON.stringify(b));

describe('lone surrogates at receipt', () => {
  for (const [what, read] of readers) {
    it(`takes a lone high or low surrogate at the start, middle or end of any text: no refusal that would block the chain (${what})`, () => {
      const seen = new Set<string>();
      fc.assert(
        fc.property(fc.constantFrom(...FIELDS), withLone, ([name, put], text) => {
          assert.ok(!isWellFormed(text));
          const b = body();
          put(b, text);
          const bytes = raw(b);
          assert.ok(bytes.includes('\\ud') || bytes.includes('\\udc'), 'sent as an escape');
          const result = read(bytes);
          assert.equal(result.ok, true, `${name}: ${JSON.stringify(text)}: ${JSON.stringify(result.ok ? null : result.error)}`);
          seen.add(name);
        }),
        { numRuns: 600 },
      );
      assert.equal(seen.size, FIELDS.length);
    });

    it(`accepts the same text with well-formed surrogate pairs (emoji), sent raw or escaped (${what})`, () => {
      fc.assert(
        fc.property(fc.constantFrom(...FIELDS), withPairs, fc.boolean(), ([name, put], text, escaped) => {
          assert.ok(isWellFormed(text));
          const b = body();
          put(b, text);
          // Escaped as a .NET exporter writes everything past ASCII: \ud83d\ude00.
          const bytes = escaped ? Buffer.from(JSON.stringify(b).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)) : raw(b);
          const result = read(bytes);
          assert.equal(result.ok, true, `${name}: ${JSON.stringify(text)}: ${JSON.stringify(result.ok ? null : result.error)}`);
        }),
        { numRuns: 300 },
      );
    });

    it(`takes a member name of the body with a lone surrogate, and a value of an unknown member (${what})`, () => {
      const named = JSON.stringify(body()).replace(/^\{/, '{"X\\ud800":1,');
      assert.equal(read(Buffer.from(named)).ok, true);
      const valued = JSON.stringify(body()).replace(/^\{/, '{"Note":"a\\udc00",');
      assert.equal(read(Buffer.from(valued)).ok, true);
    });
  }

  it("plans the reviewer's body (PLU, ItemID and TariffName P\\ud800 and P\\udc00) with neither item: two identifiers that would be one in the till", () => {
    const bytes = execFileSync(process.execPath, ['-e', surrogateScript, '6002']);
    for (const [, read] of readers) assert.equal(read(bytes).ok, true);
    const checked = validateEnvelope(parseExact(bytes.toString('utf8')));
    assert.ok(checked.ok);
    const p = planUpdate(checked.envelope as Envelope, checked.body);
    assert.deepEqual(p.items, []);
    assert.deepEqual(p.warnings.map((w) => w.path), ['ScheduledItems[0].ItemID', 'ScheduledItems[1].ItemID']);
  });
});

/** /tmp/review-webhook/scripts/surrogate.mjs, as the reviewer ran it. */
const surrogateScript = String.raw`
const loc = +process.argv[1];
const it = (s, p) => '{"PLU":"P' + s + '","ItemID":"I' + s + '","ItemName":"X","ItemType":"RECIPE","PriceUpdates":[{"DateFrom":"2026-12-01","DateTo":"2026-12-31","TariffName":"T' + s + '","PriceModel":"S","TaxCode":"S","TaxRate":20,"SellPrice":' + p + '}],"ScheduleUpdates":[{"DateFrom":"2026-12-01","DateTo":"2026-12-31","Status":"AVAILABLE","MealPeriodName":"M' + s + '"}]}';
process.stdout.write('{"ChangeSequence":11,"ParentChangeSequence":10,"LocationID":' + loc + ',"CurrencyIsoCode":"GBP","ScheduledItems":[' + it('\\ud800', 1.5) + ',' + it('\\udc00', 2.5) + ']}');
`;

describe('lone surrogates in a plan', () => {
  it('hasLoneSurrogate is String.prototype.isWellFormed, negated', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }), withLone, withPairs), (text) => {
        assert.equal(hasLoneSurrogate(text), !isWellFormed(text), JSON.stringify(text));
      }),
      { numRuns: 3000 },
    );
  });

  const PLANNED = [
    ['PLU', 'ScheduledItems[0].PLU', 'item'],
    ['ItemID', 'ScheduledItems[0].ItemID', 'item'],
    ['ItemName', 'ScheduledItems[0].ItemName', 'item'],
    ['TariffName', 'ScheduledItems[0].PriceUpdates[0].TariffName', 'element'],
    ['TaxCode', 'ScheduledItems[0].PriceUpdates[0].TaxCode', 'element'],
    ['PriceModel', 'ScheduledItems[0].PriceUpdates[0].PriceModel', 'element'],
    ['MealPeriodName', 'ScheduledItems[1].ScheduleUpdates[0].MealPeriodName', 'element'],
    ['LocationName', 'LocationName', 'ignored'],
  ] as const;

  function plan(b: Body): ReturnType<typeof planUpdate> {
    const checked = validateEnvelope(parseExact(JSON.stringify(b)));
    assert.ok(checked.ok);
    return planUpdate(checked.envelope as Envelope, checked.body);
  }

  it('skips the item or element whose text the till would get has a lone surrogate, with a warning naming the field; no planned text has one', () => {
    fc.assert(
      fc.property(fc.constantFrom(...PLANNED), withLone, ([name, path, skipped], text) => {
        const b = body();
        const put = FIELDS.find(([n]) => n === name)![1];
        put(b, text);
        const p = plan(b);
        const warning = p.warnings.find((w) => w.path === path);
        assert.ok(warning, `${name}: ${JSON.stringify(p.warnings)}`);
        assert.match(warning.message, new RegExp(`lone UTF-16 surrogate.*; ${skipped === 'ignored' ? 'ignored' : `${skipped} skipped`}$`));
        const texts = JSON.stringify(p.items).match(/\\ud[89a-f][0-9a-f]{2}/g);
        assert.equal(texts, null, `${name}: ${JSON.stringify(p.items)}`);
        assert.equal(hasLoneSurrogate(p.locationName ?? ''), false);
        assert.equal(p.items.length, skipped === 'item' ? 1 : 2);
      }),
      { numRuns: 400 },
    );
  });

  it('keeps text with well-formed pairs exactly as sent', () => {
    fc.assert(
      fc.property(fc.constantFrom(...PLANNED), withPairs, ([name], text) => {
        const b = body();
        FIELDS.find(([n]) => n === name)![1](b, text);
        const p = plan(b);
        assert.equal(p.items.length, 2);
        assert.ok(JSON.stringify(p).includes(JSON.stringify(text.trim()).slice(1, -1)), `${name}: ${JSON.stringify(text)}`);
      }),
      { numRuns: 300 },
    );
  });

  it("plans the reviewer's two items as none: one price per item, tariff and date in the till", () => {
    const b = body();
    b.ScheduledItems[0]!.PLU = 'P\ud800';
    b.ScheduledItems[1]!.PLU = 'P\udc00';
    assert.deepEqual(plan(b).items, []);
  });
});

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import fc from 'fast-check';
import { dateOf, dayOf, encode, generateChains, todayInZone } from '../../../src/dev/publisher';
import { MAX_ITEM_BYTES, MAX_ITEM_VALUES, planBody, readBody, readBodyFrom, type ReadBodyResult } from '../../../src/domain/body';
import { JsonLimitError } from '../../../src/domain/json-scan';
import { pieces as scanPieces, sourceOf, whole as scanWhole } from './scan-harness';

/**
 * How many values one item may hold (MAX_ITEM_VALUES: each number, string, true, false and null, and
 * each array and object, the item itself included). Checked by the two scanners, in memory and piece by
 * piece alike, before anything is parsed: an item of many small arrays, objects or values costs the
 * parsers far more memory than its bytes, and one well under MAX_ITEM_BYTES was answered 200 and then
 * ran the applier's thread out of memory on every retry, blocking its location.
 */

const member = 'ScheduledItems';

const whole = (bytes: Buffer, maxElementValues: number): string => scanWhole(bytes, { maxElementValues });
const pieces = (bytes: Buffer, maxElementValues: number, block: number): string => scanPieces(bytes, { maxElementValues }, block);

/** How many values `value` holds, itself included (what the limit counts, read from the parsed value). */
function valuesOf(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((sum: number, v) => sum + valuesOf(v), 1);
  if (typeof value === 'object' && value !== null) return Object.values(value).reduce((sum: number, v) => sum + valuesOf(v), 1);
  return 1;
}

/**
 * JSON text of `value` with spaces where JSON allows them, `spaces` read in turn: after each opening
 * bracket (empty arrays and objects too), ',' and ':', and before each closing bracket, so that a
 * window can end anywhere between a bracket and what follows it.
 */
function spaced(value: unknown, spaces: readonly number[]): string {
  let turn = 0;
  const ws = (): string => ' '.repeat(spaces.length === 0 ? 0 : spaces[turn++ % spaces.length]!);
  const write = (v: unknown): string => {
    if (Array.isArray(v)) return `[${ws()}${v.map(write).join(`${ws()},${ws()}`)}${ws()}]`;
    if (typeof v === 'object' && v !== null) {
      return `{${ws()}${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}${ws()}:${ws()}${write(x)}`).join(`${ws()},${ws()}`)}${ws()}}`;
    }
    return JSON.stringify(v);
  };
  return write(value);
}

const bodies = fc
  .tuple(
    fc.record(
      {
        ChangeSequence: fc.integer(),
        Extra: fc.jsonValue({ maxDepth: 3 }),
        [member]: fc.oneof({ weight: 4, arbitrary: fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 5 }) }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) }),
      },
      { requiredKeys: [] },
    ),
    fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 7 }),
  )
  .map(([value, spaces]) => ({ value, bytes: Buffer.from(spaced(value, spaces)) }));

/** What the scanners must say of `value` under `limit`: the first item holding more values, or ok. */
function expected(value: Record<string, unknown>, limit: number): { index: number } | null {
  const items = value[member];
  if (!Array.isArray(items)) return null;
  const index = items.findIndex((item) => valuesOf(item) > limit);
  return index < 0 ? null : { index };
}

describe('the values limit in the two scanners', () => {
  it('accepts items holding exactly as many values as the limit and refuses the first holding one more, the same in memory and in pieces', () => {
    let accepted = 0;
    let refused = 0;
    fc.assert(
      fc.property(bodies, fc.oneof(fc.integer({ min: 1, max: 20 }), fc.constantFrom(0, -1)), fc.oneof(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 9, max: 300 })), ({ value, bytes }, drawn, block) => {
        // A limit drawn, or exactly the most values an item holds (0), or one less (-1).
        const items = value[member];
        const most = Array.isArray(items) ? Math.max(1, ...items.map(valuesOf)) : 1;
        const limit = drawn > 0 ? drawn : Math.max(1, most + drawn);
        const text = bytes.toString();
        const want = whole(bytes, limit);
        assert.equal(pieces(bytes, limit, block), want, `${text} in pieces of ${block}, limit ${limit}`);
        const over = expected(value, limit);
        if (over === null) {
          assert.ok(want.startsWith('ok'), `${text}: ${want}, limit ${limit}`);
          accepted++;
          return;
        }
        const match = /^JsonLimitError: ScheduledItems\[(\d+)\] holds more than (\d+) values \(past it at byte (\d+)\)$/.exec(want);
        assert.ok(match, `${text}: ${want}, limit ${limit}`);
        assert.deepEqual([Number(match[1]), Number(match[2])], [over.index, limit], text);
        // At the ',' or opening bracket just before the first value past the limit.
        assert.ok(',[{'.includes(text[Number(match[3])]!), `${text}: byte ${match[3]}`);
        refused++;
      }),
      { numRuns: 3000 },
    );
    assert.ok(accepted > 500 && refused > 500, `drawn: ${accepted} accepted, ${refused} refused`);
  });

  it('refuses at the value one past the limit, naming the item, whatever the spacing; other members are not counted', () => {
    const cases: [string, number, number | null, number][] = [
      // [body, limit, item refused (null: accepted), byte of the ',' or bracket before the value past it]
      ['{"ScheduledItems":[1,"a",null,true]}', 1, null, -1],
      ['{"ScheduledItems":[[],{}, [  ] ,{ }]}', 1, null, -1],
      ['{"ScheduledItems":[[1]]}', 1, 0, 19],
      ['{"ScheduledItems":[[1]]}', 2, null, -1],
      ['{"ScheduledItems":[ [ \n 1 ] ]}', 1, 0, 20],
      ['{"ScheduledItems":[{"a":1,"b":[2,3]}]}', 5, null, -1],
      ['{"ScheduledItems":[{"a":1,"b":[2,3]}]}', 4, 0, 32],
      ['{"ScheduledItems":[{"a":1,"b":[2,3]}]}', 2, 0, 25],
      ['{"ScheduledItems":[1, [1, 2, 3], [4]]}', 3, 1, 27],
      ['{"ScheduledItems":[[[[1]]], [[[1]]]]}', 4, null, -1],
      ['{"ScheduledItems":[[[[1]]], [[[[1]]]]]}', 4, 1, 31],
      ['{"Extra":[1,2,3,[4]],"ScheduledItems":[1]}', 1, null, -1],
      ['{"ScheduledItems":{"a":[1,2,3]}}', 1, null, -1],
    ];
    for (const [text, limit, index, at] of cases) {
      const bytes = Buffer.from(text);
      const want = index === null ? 'ok' : `JsonLimitError: ${new JsonLimitError('values', `ScheduledItems[${index}]`, limit, at).message}`;
      assert.equal(whole(bytes, limit).slice(0, want.length), want, `${text}, limit ${limit}`);
      // Cut at every byte: the first window ends there.
      for (let block = 1; block <= bytes.length; block++) assert.equal(pieces(bytes, limit, block), whole(bytes, limit), `${text} in pieces of ${block}`);
    }
  });

  it('is no limit at all unless one is set', () => {
    const bytes = Buffer.from(`{"ScheduledItems":[[${new Array(200_000).fill('[1]').join(',')}]]}`);
    assert.ok(whole(bytes, Number.POSITIVE_INFINITY).startsWith('ok'));
    assert.ok(pieces(bytes, Number.POSITIVE_INFINITY, 4096).startsWith('ok'));
  });
});

const envelope = '"ChangeSequence":2,"ParentChangeSequence":1,"LocationID":7,"CurrencyIsoCode":"GBP"';
const tea = (plu: string, extra: string): string =>
  `{"PLU":"${plu}","ItemID":"${plu}","ItemName":"Tea","ItemType":"RECIPE","PriceUpdates":[{"DateFrom":"2026-12-01","DateTo":"2026-12-31","TariffName":"Eat In","PriceModel":"S","TaxCode":"S","TaxRate":20,"SellPrice":1.5}],"ScheduleUpdates":[],"Extra":[${extra}]}`;

/** An item (a real one, with an unknown field of zeros) holding exactly `values` values. */
function itemOf(plu: string, values: number): string {
  const base = valuesOf(JSON.parse(tea(plu, '')));
  return tea(plu, new Array(values - base).fill('0').join(','));
}

/** A body of an ordinary item and, second, one holding `values` values. */
const bodyOf = (values: number): Buffer => Buffer.from(`{${envelope},"ScheduledItems":[${itemOf('1', 50)},${itemOf('2', values)}]}`);

const readers = [
  ['in memory', (raw: Buffer, checkItems = true) => readBody(raw, { checkItems })],
  ['from a file, piece by piece', (raw: Buffer, checkItems = true) => readBodyFrom(sourceOf(raw), { checkItems, block: 4096 })],
] as const;

function errorOf(result: ReadBodyResult): string {
  return result.ok ? 'ok' : `${result.error.id} ${result.error.field}`;
}

describe('MAX_ITEM_VALUES at receipt', () => {
  for (const [what, read] of readers) {
    it(`accepts an item holding exactly MAX_ITEM_VALUES values and refuses one holding one more, naming it (${what})`, () => {
      const atLimit = read(bodyOf(MAX_ITEM_VALUES));
      assert.equal(atLimit.ok, true, JSON.stringify(atLimit.ok ? null : atLimit.error));
      // What was accepted applies: it plans without throwing.
      if (atLimit.ok) assert.equal([...planBody(atLimit).items].length, 2);
      const raw = bodyOf(MAX_ITEM_VALUES + 1);
      const over = read(raw);
      // Past the limit at the ',' before the last zero.
      const at = raw.lastIndexOf(',0]');
      assert.deepEqual(over.ok ? null : over.error, {
        id: 'too_many_values',
        field: 'ScheduledItems[1]',
        message: `more than the ${MAX_ITEM_VALUES} values one item may hold (each number, string, true, false, null, array and object, the item itself included), past it at byte ${at}`,
      });
      // The applier reads a stored body with the same limit.
      assert.equal(errorOf(read(raw, false)), 'too_many_values ScheduledItems[1]');
    });

    it(`refuses the reviewer's item: shallow nested arrays filling MAX_ITEM_BYTES (${what})`, () => {
      const wide = `[${new Array(Math.floor((MAX_ITEM_BYTES - 2) / 8)).fill('[[[1]]]').join(',')}]`;
      assert.ok(wide.length <= MAX_ITEM_BYTES);
      assert.equal(errorOf(read(Buffer.from(`{${envelope},"ScheduledItems":[${wide}]}`))), 'too_many_values ScheduledItems[0]');
      assert.equal(errorOf(read(Buffer.from(`{${envelope},"ScheduledItems":[${itemOf('1', 50)},${tea('2', wide)}]}`))), 'too_many_values ScheduledItems[1]');
    });
  }

  it('passes the largest publication the publisher generates with a wide margin', () => {
    const today = todayInZone('Europe/London');
    // bench:parse's L publication, with fewer items of the same make.
    const [chain] = generateChains({ seed: 2026, locations: 1, updatesPerLocation: 1, startDate: dateOf(dayOf(today) - 30), days: 365, itemsPerLocation: 40, tariffs: 3, mealPeriods: 3, scheduling: 'all', rangesPerKey: 12 });
    const raw = Buffer.from(encode(chain!.updates[0]!));
    const body = readBody(raw, { checkItems: true });
    assert.ok(body.ok, JSON.stringify(body.ok ? null : body.error));
    const largest = Math.max(...[...body.items()].map(valuesOf));
    assert.ok(largest * 100 <= MAX_ITEM_VALUES, `largest item: ${largest} values`);
  });
});

/** The applier thread's heap bounds, as src/sync/applier-host.ts gives them. */
function applierLimits(): { maxOldGenerationSizeMb: number; maxYoungGenerationSizeMb: number } {
  const host = fs.readFileSync(path.join(__dirname, '../../../src/sync/applier-host.ts'), 'utf8');
  const old = /resourceLimits: \{ maxOldGenerationSizeMb: (\d+), maxYoungGenerationSizeMb: YOUNG_GENERATION_MB \}/.exec(host);
  assert.ok(old, 'the applier thread has these limits');
  const young = /export const YOUNG_GENERATION_MB = (\d+);/.exec(fs.readFileSync(path.join(__dirname, '../../../src/threads/thread-client.ts'), 'utf8'));
  assert.ok(young);
  return { maxOldGenerationSizeMb: Number(old[1]), maxYoungGenerationSizeMb: Number(young[1]) };
}

const PARSE_IN_A_THREAD = `
require('tsx/cjs');
const v8 = require('node:v8');
v8.setFlagsFromString('--expose-gc');
const collect = require('node:vm').runInNewContext('gc');
const { parentPort, workerData } = require('node:worker_threads');
const { parseExact } = require(workerData.module);
collect();
const before = v8.getHeapStatistics().used_heap_size;
const value = (workerData.native ? JSON.parse : parseExact)(workerData.text);
collect();
const after = v8.getHeapStatistics().used_heap_size;
parentPort.postMessage({ retained: after - before, kept: value !== undefined });
`;

/**
 * Parses `text` in a thread of its own with the applier's heap bounds (parseExact, as the applier
 * reads each item, or JSON.parse): how much of its heap the value takes once parsed, or the thread's
 * error (ERR_WORKER_OUT_OF_MEMORY when it ran out).
 */
function parseInThread(text: string, native = false): Promise<{ retained: number } | { error: string }> {
  const module = path.join(__dirname, '../../../src/domain/json-scan.ts');
  return new Promise((resolve) => {
    const worker = new Worker(PARSE_IN_A_THREAD, { eval: true, workerData: { module, text, native }, resourceLimits: applierLimits() });
    worker.once('message', (m: { retained: number }) => {
      resolve({ retained: m.retained });
      void worker.terminate();
    });
    worker.once('error', (err: Error & { code?: string }) => resolve({ error: `${err.code ?? ''} ${err.message}` }));
  });
}

/**
 * Items of the makes that cost parseExact the most per value and per byte, each filling MAX_ITEM_BYTES,
 * or, given `values`, holding exactly that many values (and no more than MAX_ITEM_BYTES).
 */
function costliestItems(values = Number.POSITIVE_INFINITY): [string, string][] {
  const fill = (unit: string, perUnit: number): string => {
    if (!Number.isFinite(values)) return `[${new Array(Math.floor((MAX_ITEM_BYTES - 2) / (unit.length + 1))).fill(unit).join(',')}]`;
    // The array itself, its units, then single numbers up to exactly `values`.
    const units = Math.floor((values - 1) / perUnit);
    return `[${[...new Array<string>(units).fill(unit), ...new Array<string>(values - 1 - units * perUnit).fill('1')].join(',')}]`;
  };
  // One object of as many names as fit (or as `values` allows), each as long as MAX_ITEM_BYTES then
  // allows: every name is a new string, and the object a new shape at every name.
  const names = Number.isFinite(values) ? values - 1 : Math.floor((MAX_ITEM_BYTES - 1) / 12);
  const width = Math.floor((MAX_ITEM_BYTES - 1) / names) - 5;
  const object = `{${Array.from({ length: names }, (_, i) => `"${String(i).padStart(width, 'k')}":0`).join(',')}}`;
  return [
    ["shallow nested arrays [[[1]]] (the reviewer's)", fill('[[[1]]]', 4)],
    ['arrays of one value [1]', fill('[1]', 2)],
    ['objects of one member', fill('{"a":1}', 2)],
    ['numbers', fill('1', 1)],
    ['one object of distinct long names', object],
  ];
}

describe('the costliest item the receiver accepts, parsed in the applier thread', () => {
  it('parses with parseExact within the applier\'s heap bounds, in a small part of them', { timeout: 300_000 }, async (t) => {
    const limits = applierLimits();
    for (const [make, text] of costliestItems()) {
      // The item filling MAX_ITEM_BYTES, or, when the receiver refuses it for its values, the same
      // make cut to exactly MAX_ITEM_VALUES values (which it accepts): the costliest it answers 200 for.
      let item = text;
      let read = readBody(Buffer.from(`{${envelope},"ScheduledItems":[${item}]}`), { checkItems: true });
      if (!read.ok && read.error.id === 'too_many_values') {
        item = costliestItems(MAX_ITEM_VALUES).find(([m]) => m === make)![1];
        assert.equal(valuesOf(JSON.parse(item)), MAX_ITEM_VALUES, make);
        assert.ok(item.length <= MAX_ITEM_BYTES, make);
        read = readBody(Buffer.from(`{${envelope},"ScheduledItems":[${item}]}`), { checkItems: true });
      }
      assert.ok(read.ok, `${make}: ${JSON.stringify(read.ok ? null : read.error)}`);
      const parsed = await parseInThread(item);
      assert.ok('retained' in parsed, `${make} (${item.length} bytes, ${valuesOf(JSON.parse(item))} values): ${'error' in parsed ? parsed.error : ''}`);
      t.diagnostic(`${make}: ${item.length} bytes, ${valuesOf(JSON.parse(item))} values, ${parsed.retained} bytes of the heap once parsed`);
      assert.ok(parsed.retained < (limits.maxOldGenerationSizeMb * 1024 * 1024) / 4, `${make}: ${parsed.retained} bytes of the applier's heap`);
    }
  });

  it('parseExact copies short arrays to their length: shallow nested arrays take about what JSON.parse takes, not several times it', { timeout: 120_000 }, async () => {
    const item = costliestItems(MAX_ITEM_VALUES)[0]![1];
    const exact = await parseInThread(item);
    const native = await parseInThread(item, true);
    assert.ok('retained' in exact && 'retained' in native, JSON.stringify({ exact, native }));
    assert.ok(exact.retained < 1.5 * native.retained, `parseExact ${exact.retained} bytes, JSON.parse ${native.retained}`);
  });
});

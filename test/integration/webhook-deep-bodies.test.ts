import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestAgent, type RunningTestAgent } from '../helpers/agent';
import { item, price, update } from '../helpers/fixtures';
import { MAX_DEPTH, MAX_ITEM_BYTES, MAX_ITEM_VALUES, MAX_MEMBER_BYTES } from '../../src/domain/body';

/**
 * Bodies that cost the agent's threads far more memory than their bytes, posted to a real agent over
 * loopback: arrays nested hundreds of thousands of levels deep in top-level members (the webhook's
 * thread ran out of memory on every retry) or in the fields of items (answered 200, then the applier's
 * thread ran out of memory on every retry and the location's chain was blocked), many large members,
 * and items of many small values (answered 200, then the applier's thread ran out of memory on every
 * retry). Each is a 400 naming where, kept in quarantine; the agent keeps answering and applying.
 * Text with a lone surrogate is taken and skipped by the plan, so the chain goes on.
 */

const envelope = '"ChangeSequence":2,"ParentChangeSequence":1,"LocationID":8,"CurrencyIsoCode":"GBP"';
const nested = (levels: number): string => '['.repeat(levels) + ']'.repeat(levels);
const fields = (plu: string, name: string, priceModel: string): string =>
  `{"PLU":${plu},"ItemID":"9","ItemName":${name},"ItemType":"RECIPE","PriceUpdates":[{"DateFrom":"2026-12-01","DateTo":"2026-12-31","TariffName":"Eat In","PriceModel":${priceModel},"TaxCode":"S","TaxRate":20,"SellPrice":1.5}],"ScheduleUpdates":[]}`;

async function postRaw(t: RunningTestAgent, raw: Buffer): Promise<{ status: number; error: { id: string; field: string; message: string } | undefined }> {
  const res = await fetch(t.webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: raw });
  const json = (await res.json()) as { error?: { id: string; field: string; message: string } };
  return { status: res.status, error: json.error };
}

describe('bodies nested too deep, too many large members', () => {
  it('400 for each, kept in quarantine; the webhook thread keeps answering and the next update applies', async () => {
    const t = await startTestAgent();
    // The reviewer's headbomb.json: ten members, each arrays 520,000 levels deep (10.4 MB).
    const headBomb = Buffer.from(`{${envelope},${Array.from({ length: 10 }, (_, i) => `"X${i}":${nested(520_000)}`).join(',')},"ScheduledItems":[]}`);
    // The reviewer's deepmix.py: a few fields of items 400,000 levels deep (about 4 MB).
    const itemBomb = Buffer.from(`{${envelope},"ScheduledItems":[${fields(nested(400_000), '"X"', '"S"')},${fields('"8"', nested(400_000), nested(400_000))}]}`);
    // One level past MAX_DEPTH in a price's field, and exactly at it (accepted, and applied below).
    const justOver = Buffer.from(`{${envelope},"ScheduledItems":[${fields('"9"', '"X"', nested(MAX_DEPTH - 5 + 1))}]}`);
    // Ten members of arrays nested a few levels, each half of what all may take together.
    const wide = `[${new Array(Math.floor(MAX_MEMBER_BYTES / 16)).fill('[[[1]]]').join(',')}]`;
    const manyMembers = Buffer.from(`{${envelope},${Array.from({ length: 10 }, (_, i) => `"X${i}":${wide}`).join(',')},"ScheduledItems":[]}`);

    const cases = [
      [headBomb, 'too_deep', 'X0[0][0][0][0]...'],
      [itemBomb, 'too_deep', 'ScheduledItems[0].PLU[0][0][0]...'],
      [justOver, 'too_deep', 'ScheduledItems[0].PriceUpdates[0].PriceModel[0]...'],
      [manyMembers, 'member_too_large', 'X1'],
    ] as const;
    for (const [raw, id, field] of cases) {
      // Twice: the sender's retry of a refused body is refused the same way, by the same thread.
      for (let attempt = 0; attempt < 2; attempt++) {
        const res = await postRaw(t, raw);
        assert.equal(res.status, 400, `${id} ${field}`);
        assert.deepEqual([res.error?.id, res.error?.field], [id, field]);
      }
      assert.equal((await fetch(`${t.baseUrl}/healthz`)).status, 200);
    }
    const quarantined = (t.agent.core.agentDb.prepare('SELECT count(*) AS n FROM quarantine').get() as { n: number }).n;
    assert.ok(quarantined >= cases.length, `${quarantined} in quarantine`);
    assert.equal((t.agent.core.agentDb.prepare('SELECT count(*) AS n FROM inbox').get() as { n: number }).n, 0);

    // Exactly MAX_DEPTH deep is accepted and applies; so does an ordinary update after it.
    const atLimit = Buffer.from(`{${envelope},"ScheduledItems":[${fields('"9"', '"X"', nested(MAX_DEPTH - 5))}]}`);
    assert.equal((await postRaw(t, atLimit)).status, 200);
    assert.equal((await t.post(update(8, 3, 2, [item('1', 'A', [price('2026-12-01', '2026-12-31', 'Eat In', 5)])]))).status, 200);
    await t.settle();
    const applied = t.agent.core.tillDb.prepare('SELECT count(*) AS n FROM price_ranges').get() as { n: number };
    assert.ok(applied.n >= 1, 'the updates after the refusals applied');
  });
});

/** How many values `value` holds, itself included (what MAX_ITEM_VALUES counts). */
function valuesOf(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((sum: number, v) => sum + valuesOf(v), 1);
  if (typeof value === 'object' && value !== null) return Object.values(value).reduce((sum: number, v) => sum + valuesOf(v), 1);
  return 1;
}

describe('items of too many values', () => {
  it("400 too_many_values for the reviewer's body of shallow nested arrays under MAX_ITEM_BYTES; an item at the limit is answered 200 and applies", { timeout: 120_000 }, async () => {
    const t = await startTestAgent();
    // The reviewer's body: one item under MAX_ITEM_BYTES of [[[1]]],[[[1]]],... (nested four levels
    // at most, one element each: under every other limit).
    const wide = `[${new Array(Math.floor((MAX_ITEM_BYTES - 2) / 8)).fill('[[[1]]]').join(',')}]`;
    const widthBomb = Buffer.from(`{${envelope},"ScheduledItems":[${wide}]}`);
    // The same width in an unknown field of a real item, after an ordinary item.
    const inField = Buffer.from(`{${envelope},"ScheduledItems":[${fields('"8"', '"X"', '"S"')},${fields('"9"', '"X"', '"S"').slice(0, -1)},"Extra":${wide}}]}`);
    // A real item holding exactly MAX_ITEM_VALUES values (an unknown field of zeros), and one more.
    const withZeros = (count: number): string => `${fields('"9"', '"X"', '"S"').slice(0, -1)},"Extra":[${new Array(count).fill('0').join(',')}]}`;
    const zeros = MAX_ITEM_VALUES - valuesOf(JSON.parse(withZeros(0)));
    assert.equal(valuesOf(JSON.parse(withZeros(zeros))), MAX_ITEM_VALUES);
    const oneOver = Buffer.from(`{${envelope},"ScheduledItems":[${withZeros(zeros + 1)}]}`);

    const cases = [
      [widthBomb, 'ScheduledItems[0]'],
      [inField, 'ScheduledItems[1]'],
      [oneOver, 'ScheduledItems[0]'],
    ] as const;
    for (const [raw, field] of cases) {
      // Twice: the sender's retry of a refused body is refused the same way, by the same thread.
      for (let attempt = 0; attempt < 2; attempt++) {
        const res = await postRaw(t, raw);
        assert.equal(res.status, 400, field);
        assert.deepEqual([res.error?.id, res.error?.field], ['too_many_values', field]);
        assert.match(res.error?.message ?? '', new RegExp(`^${field.replace(/[[\]]/g, '\\$&')}: more than the ${MAX_ITEM_VALUES} values one item may hold`));
      }
      assert.equal((await fetch(`${t.baseUrl}/healthz`)).status, 200);
    }
    assert.equal((t.agent.core.agentDb.prepare('SELECT count(*) AS n FROM inbox').get() as { n: number }).n, 0);

    // Exactly at the limit: answered 200 and applied (the applier parses it), then an ordinary update.
    assert.equal((await postRaw(t, Buffer.from(`{${envelope},"ScheduledItems":[${withZeros(zeros)}]}`))).status, 200);
    assert.equal((await t.post(update(8, 3, 2, [item('1', 'A', [price('2026-12-01', '2026-12-31', 'Eat In', 5)])]))).status, 200);
    await t.settle();
    const states = t.agent.core.agentDb.prepare('SELECT change_sequence AS seq, state FROM inbox ORDER BY change_sequence').all();
    assert.deepEqual(states, [{ seq: 2, state: 'applied' }, { seq: 3, state: 'applied' }]);
    const prices = t.agent.core.tillDb.prepare('SELECT count(*) AS n FROM price_ranges').get() as { n: number };
    assert.ok(prices.n >= 2, `${prices.n} price ranges in the till`);
  });
});

describe('lone surrogates', () => {
  it('are taken and skipped where the till would get them, with warnings: the chain goes on', async () => {
    const t = await startTestAgent();
    const head = (cs: number, parent: number): string => `"ChangeSequence":${cs},"ParentChangeSequence":${parent},"LocationID":9,"CurrencyIsoCode":"GBP"`;
    // The reviewer's surrogate.mjs: PLU, ItemID and TariffName P\ud800 and P\udc00 (one item in the
    // till had they been stored), beside an ordinary item.
    const lone = (s: string, p: number): string =>
      `{"PLU":"P${s}","ItemID":"I${s}","ItemName":"X","ItemType":"RECIPE","PriceUpdates":[{"DateFrom":"2026-12-01","DateTo":"2026-12-31","TariffName":"T${s}","PriceModel":"S","TaxCode":"S","TaxRate":20,"SellPrice":${p}}],"ScheduleUpdates":[]}`;
    const first = Buffer.from(`{${head(2, 1)},"ScheduledItems":[${lone('\\ud800', 1.5)},${lone('\\udc00', 2.5)},${fields('"7"', '"Tea"', '"S"')}]}`);
    // An emoji cut in half in a name, as a UTF-16 truncation leaves it, and one in an unknown field.
    const second = Buffer.from(`{${head(3, 2)},"Note":"x\\ud83d","ScheduledItems":[${fields('"8"', '"Caf\\u00e9 Latte \\ud83d"', '"S"')},${fields('"6"', '"Scone"', '"S"').replace('"9"', '"6"')}]}`);
    for (const raw of [first, second]) assert.equal((await postRaw(t, raw)).status, 200);
    assert.equal((await t.post(update(9, 4, 3, [item('5', 'Bun', [price('2026-12-01', '2026-12-31', 'Eat In', 2)])]))).status, 200);
    await t.settle();
    const status = t.agent.core.status().find((l) => l.locationId === 9)!;
    assert.equal(status.lastChangeSequence, 4);
    assert.deepEqual(status.waiting, []);
    const plus = t.agent.core.tillDb.prepare("SELECT plu FROM pos_prices WHERE location_id = 9 ORDER BY plu").all() as { plu: string }[];
    assert.deepEqual(plus.map((r) => r.plu), ['5', '6', '7']);
    const warnings = t.agent.core.agentDb.prepare('SELECT path, message FROM update_warnings WHERE location_id = 9 ORDER BY id').all() as { path: string; message: string }[];
    assert.deepEqual(warnings.map((w) => w.path), ['ScheduledItems[0].ItemID', 'ScheduledItems[1].ItemID', 'ScheduledItems[0].ItemName']);
    for (const w of warnings) assert.match(w.message, /lone UTF-16 surrogate.*item skipped$/);
  });
});

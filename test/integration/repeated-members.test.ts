import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestAgent } from '../helpers/agent';

/**
 * Member names sent twice, over HTTP to a real agent: in the envelope the body is refused (400
 * duplicate_member, kept in quarantine), in an element the plan skips that element with a warning and
 * the rest applies.
 */

const item = (plu: string, id: string, price: string): string =>
  `{"PLU":"${plu}","ItemID":"${id}","ItemName":"${id}","ItemType":"RECIPE","PriceUpdates":[{"DateFrom":"2026-12-01","DateTo":"2026-12-31","TariffName":"Eat In","PriceModel":"S","TaxCode":"S","TaxRate":20,${price}}],"ScheduleUpdates":[]}`;

describe('member names sent twice', () => {
  it('are refused in the envelope and skipped in an element, never guessed', async () => {
    const t = await startTestAgent();
    const post = async (raw: string): Promise<{ status: number; body: { error?: { id: string; field: string; quarantineId?: number } } }> => {
      const res = await fetch(t.webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: raw });
      return { status: res.status, body: (await res.json()) as { error?: { id: string; field: string; quarantineId?: number } } };
    };
    // The reviewer's dupkeys.json: stored under location 4000 as a new baseline, ChangeSequence 60.
    const dup = await post(`{"ChangeSequence":12,"ParentChangeSequence":11,"LocationID":6000,"CurrencyIsoCode":"GBP","ChangeSequence":60,"LocationID":4000,"ScheduledItems":[${item('1', 'A', '"SellPrice":1.5')}]}`);
    assert.equal(dup.status, 400);
    assert.equal(dup.body.error?.id, 'duplicate_member');
    assert.equal(dup.body.error?.field, 'LocationID');
    assert.ok(typeof dup.body.error?.quarantineId === 'number', 'kept in quarantine');
    assert.equal((t.agent.core.agentDb.prepare('SELECT count(*) AS n FROM inbox').get() as { n: number }).n, 0);

    const ok = await post(`{"ChangeSequence":12,"ParentChangeSequence":11,"LocationID":6000,"CurrencyIsoCode":"GBP","ScheduledItems":[${item('1', 'A', '"SellPrice":1.00,"SellPrice":2.00')},${item('2', 'B', '"SellPrice":3.00')}]}`);
    assert.equal(ok.status, 200);
    await t.settle();
    const prices = t.agent.core.tillDb.prepare('SELECT plu, sell_price FROM pos_prices WHERE location_id = 6000 ORDER BY plu').all();
    assert.deepEqual(prices, [{ plu: '2', sell_price: '3.00' }]);
    const warnings = t.agent.core.agentDb.prepare('SELECT path, message FROM update_warnings ORDER BY id').all() as { path: string; message: string }[];
    assert.deepEqual(warnings.map((w) => w.path), ['ScheduledItems[0].PriceUpdates[0].SellPrice']);
    assert.match(warnings[0]!.message, /more than once .* element skipped$/);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addDays, todayIn } from '../../src/domain/dates';
import { startTestAgent } from '../helpers/agent';
import { item, price, update } from '../helpers/fixtures';

/**
 * A lookup across locations whose dates differ answers each item for its own location's today, and
 * does not name one date for the whole answer. Kiritimati (UTC+14) and Pago Pago (UTC-11) are always
 * on different dates; the default timezone (London) is on one of theirs or between them.
 */
const ZONES: Record<number, string> = { 1: 'Pacific/Kiritimati', 2: 'Pacific/Pago_Pago' };

/** One-day prices around the location's today, each day its own price: `<location>.<day>0`. */
function menu(locationId: number): Record<string, unknown> {
  const today = todayIn(ZONES[locationId]!);
  return update(locationId, 1, 0, [item('1001', `i${locationId}`, [-1, 0, 1].map((d, i) => price(addDays(today, d), addDays(today, d), 'Eat In', `${locationId}.${i + 1}0`)))]);
}

/** The check again if a location's midnight passed meanwhile (the dates it compared were both right). */
function atStableDates(check: (today: Record<number, string>) => void): void {
  for (let attempt = 0; ; attempt++) {
    const before = { 1: todayIn(ZONES[1]!), 2: todayIn(ZONES[2]!) };
    try {
      check(before);
      return;
    } catch (err) {
      if (attempt >= 2 || (before[1] === todayIn(ZONES[1]!) && before[2] === todayIn(ZONES[2]!))) throw err;
    }
  }
}

describe('lookup across locations in different timezones', () => {
  it("answers each item for its location's today, and names no single date when they differ", async () => {
    const t = await startTestAgent({ locations: { 1: { timezone: ZONES[1] }, 2: { timezone: ZONES[2] } }, defaultTimezone: 'Europe/London', sync: { acceptOtherLocations: true } });
    for (const id of [1, 2]) assert.equal((await t.post(menu(id))).status, 200);
    await t.settle();
    atStableDates((today) => {
      const answer = t.agent.core.lookup('1001');
      assert.deepEqual(
        answer.items.map((i) => [i.locationId, i.date, i.prices.map((p) => p.sellPrice)]),
        [
          [1, today[1], ['1.20']],
          [2, today[2], ['2.20']],
        ],
      );
      assert.equal(answer.date, null, 'the answer names no date its items do not share');
    });
  });

  it('names the one date when every item is answered for it', async () => {
    const t = await startTestAgent({ locations: { 1: { timezone: ZONES[1] }, 2: { timezone: ZONES[2] } }, sync: { acceptOtherLocations: true } });
    for (const id of [1, 2]) assert.equal((await t.post(menu(id))).status, 200);
    await t.settle();
    atStableDates((today) => {
      const asked = t.agent.core.lookup('1001', { date: today[1] });
      assert.equal(asked.date, today[1]);
      assert.deepEqual(asked.items.map((i) => i.date), [today[1], today[1]]);
      const one = t.agent.core.lookup('1001', { locationId: 2 });
      assert.equal(one.date, today[2]);
      assert.deepEqual(one.items.map((i) => [i.date, i.prices.map((p) => p.sellPrice)]), [[today[2], ['2.20']]]);
    });
    assert.deepEqual(t.agent.core.lookup('999').items, []);
  });
});

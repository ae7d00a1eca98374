import assert from 'node:assert/strict';
import http from 'node:http';
import { describe, it } from 'node:test';
import { AgentCore } from '../../src/core';
import {
  backoffDelay,
  compareStates,
  deliverWithRetry,
  encode,
  generateChains,
  planDeliveries,
  Prng,
  ReferenceModel,
  referenceFor,
  runDeliveries,
  stateFromViews,
  type GeneratorOptions,
} from '../../src/dev/publisher';
import { silentLogger } from '../../src/log';
import { startTestAgent } from '../helpers/agent';
import { sampleBodies, testConfig } from '../helpers/fixtures';
import { freePort } from '../../src/dev/child-agent';

const OPTIONS: GeneratorOptions = {
  seed: 11,
  locations: 3,
  updatesPerLocation: 25,
  itemsPerLocation: 40,
  tariffs: 3,
  mealPeriods: 3,
  rangesPerKey: 3,
  startDate: '2026-12-01',
  days: 60,
  currencies: ['GBP', 'JPY', 'KWD'],
};

function coreWith(bodies: Buffer[]): AgentCore {
  const core = new AgentCore(testConfig(), silentLogger);
  for (const raw of bodies) assert.equal(core.importPayload(raw, 'test').outcome.kind, 'stored');
  return core;
}

describe('publisher simulator: generator', () => {
  it('is deterministic for a seed and differs across seeds', () => {
    const a = generateChains(OPTIONS).map((c) => c.updates.map(encode).join(''));
    const b = generateChains(OPTIONS).map((c) => c.updates.map(encode).join(''));
    const c = generateChains({ ...OPTIONS, seed: 12 }).map((ch) => ch.updates.map(encode).join(''));
    assert.deepEqual(a, b);
    assert.notDeepEqual(a, c);
  });

  it('chains ChangeSequence/ParentChangeSequence per location, each change greater than its parent', () => {
    for (const chain of generateChains(OPTIONS)) {
      chain.updates.forEach((u, i) => {
        assert.ok(u.changeSequence > u.parentChangeSequence);
        if (i > 0) assert.equal(u.parentChangeSequence, chain.updates[i - 1]!.changeSequence);
        assert.equal(Number(u.body.LocationID), chain.locationId);
      });
    }
  });

  it('produces the shapes the spec allows: shared PLUs, string and number identifiers, several tax codes, prices without meal periods, UNAVAILABLE edits', () => {
    const chains = generateChains({ ...OPTIONS, itemsPerLocation: 200, updatesPerLocation: 60 });
    const items = chains.flatMap((c) => c.updates.flatMap((u) => u.body.ScheduledItems as Record<string, unknown>[]));
    const first = chains[0]!.updates[0]!.body.ScheduledItems as Record<string, unknown>[];
    const plus = first.map((i) => String(i.PLU));
    assert.ok(new Set(plus).size < plus.length, 'some PLUs are shared');
    assert.ok(items.some((i) => typeof i.PLU === 'string') && items.some((i) => typeof i.PLU === 'number'));
    assert.ok(items.some((i) => typeof i.ItemID === 'string' && String(i.ItemID).includes('-')));
    const taxCodes = new Set(items.flatMap((i) => (i.PriceUpdates as { TaxCode: string }[]).map((p) => p.TaxCode)));
    assert.ok(taxCodes.size >= 2);
    assert.ok(first.some((i) => (i.ScheduleUpdates as unknown[]).length === 0 && (i.PriceUpdates as unknown[]).length > 0));
    const edits = chains.flatMap((c) => c.updates.slice(1).flatMap((u) => u.body.ScheduledItems as Record<string, unknown>[]));
    assert.ok(edits.some((i) => (i.ScheduleUpdates as { Status: string }[]).some((s) => s.Status === 'UNAVAILABLE')));
    const lengths = edits.flatMap((i) => (i.PriceUpdates as { DateFrom: string; DateTo: string }[]).map((p) => p.DateFrom === p.DateTo));
    assert.ok(lengths.includes(true), 'one-day edits');
  });
});

describe('publisher simulator: reference model', () => {
  it('reproduces the documented end state of the shared samples, as the agent does', () => {
    const bodies = sampleBodies().map((s) => s.raw);
    const model = new ReferenceModel();
    for (const raw of bodies) model.apply(JSON.parse(raw.toString('utf8')) as Record<string, unknown>);
    const state = model.state();
    // Spot checks straight from test/fixtures/menu-cycles/README.md.
    assert.match(state.prices.get('3021\t8812-0001\tEat In\t2026-12-25') ?? '', /\|1500\|15\.00\|GBP$/);
    assert.match(state.prices.get('3021\t8812-0001\tEat In\t2026-12-24') ?? '', /\|1150\|11\.50\|GBP$/);
    assert.match(state.availability.get('3021\t55123\tDinner\t2027-01-05') ?? '', /UNAVAILABLE$/);
    assert.match(state.availability.get('3021\t55123\tDinner\t2027-01-11') ?? '', /\|AVAILABLE$/);
    const core = coreWith(bodies);
    try {
      assert.deepEqual(compareStates(state, stateFromViews(core.tillDb)), []);
    } finally {
      core.close();
    }
  });

  it('agrees with the agent on generated chains applied in order (several seeds)', () => {
    for (const seed of [1, 2, 3]) {
      const chains = generateChains({ ...OPTIONS, seed });
      const core = coreWith(chains.flatMap((c) => c.updates.map(encode)));
      try {
        assert.deepEqual(compareStates(referenceFor(chains).state(), stateFromViews(core.tillDb)), [], `seed ${seed}`);
      } finally {
        core.close();
      }
    }
  });

  it('detects a lost update, a wrong price and overlapping rows (the check can fail)', () => {
    const chains = generateChains(OPTIONS);
    const expected = referenceFor(chains).state();
    const all = chains.flatMap((c) => c.updates.map(encode));
    // Lost: the chain stops before its last update.
    const lost = coreWith(all.slice(0, -1));
    try {
      assert.ok(compareStates(expected, stateFromViews(lost.tillDb)).length > 0);
    } finally {
      lost.close();
    }
    // A wrong price written behind the agent's back.
    const core = coreWith(all);
    try {
      core.tillDb.prepare('UPDATE price_ranges SET sell_price_minor = sell_price_minor + 1 WHERE id = (SELECT min(id) FROM price_ranges)').run();
      const diffs = compareStates(expected, stateFromViews(core.tillDb));
      assert.ok(diffs.length > 0 && diffs.every((d) => d.startsWith('price')), diffs.join('\n'));
      // Overlapping rows for one day are reported, not silently merged.
      core.tillDb.prepare('INSERT INTO price_ranges (location_id, item_id, tariff_name, date_from, date_to, price_model, tax_code, tax_rate, sell_price_minor, sell_price, currency, source_inbox_id) SELECT location_id, item_id, tariff_name, date_from, date_from, price_model, tax_code, tax_rate, sell_price_minor, sell_price, currency, source_inbox_id FROM price_ranges WHERE id = (SELECT max(id) FROM price_ranges)').run();
      assert.ok(compareStates(expected, stateFromViews(core.tillDb), 1000).some((d) => d.includes('DUPLICATE ROWS')));
    } finally {
      core.close();
    }
  });
});

describe('publisher simulator: delivery', () => {
  it('plans reordering, duplicates and drops, keeping each first publication first and never dropping it', () => {
    const chains = generateChains(OPTIONS);
    const plan = planDeliveries(chains, { reorderWindow: 4, duplicate: 0.3, drop: 0.2 }, new Prng(3));
    for (const chain of chains) {
      const mine = plan.deliveries.filter((d) => d.update.locationId === chain.locationId);
      assert.equal(mine[0]!.update.index, 0);
      const sequences = mine.map((d) => d.update.changeSequence);
      const sorted = [...sequences].sort((a, b) => a - b);
      assert.notDeepEqual(sequences, sorted, 'reordered');
    }
    assert.ok(plan.deliveries.some((d) => d.copy === 1), 'duplicates');
    assert.ok(plan.dropped.length > 0 && plan.dropped.every((u) => u.index > 0), 'drops, never a first publication');
    const delivered = new Set(plan.deliveries.map((d) => d.update));
    for (const u of plan.dropped) assert.ok(!delivered.has(u));
    const total = chains.reduce((n, c) => n + c.updates.length, 0);
    assert.equal(new Set(plan.deliveries.map((d) => d.update)).size + plan.dropped.length, total);
  });

  it('backs off exponentially with jitter, capped', () => {
    const policy = { baseDelayMs: 100, maxDelayMs: 1000, factor: 2 };
    const rng = new Prng(1);
    for (let attempt = 1; attempt <= 8; attempt++) {
      const step = Math.min(1000, 100 * 2 ** (attempt - 1));
      const delays = Array.from({ length: 50 }, () => backoffDelay(attempt, policy, rng));
      assert.ok(delays.every((d) => d >= step / 2 && d <= step), `attempt ${attempt}`);
      assert.ok(new Set(delays).size > 1, 'jittered');
    }
  });

  it('sends Origin and Bearer, retries on non-200 and on an unreachable receiver, until the 200', { timeout: 20_000 }, async () => {
    const port = await freePort();
    const seen: { origin: string | undefined; authorization: string | undefined; type: string | undefined }[] = [];
    let answers = [503, 500, 429];
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        seen.push({ origin: req.headers.origin, authorization: req.headers.authorization, type: req.headers['content-type'] });
        res.statusCode = answers.shift() ?? 200;
        res.end();
      });
    });
    const url = `http://127.0.0.1:${port}/hook`;
    // Nobody listens yet: the first attempts fail to connect; the server comes up later. Should another
    // process take the port meanwhile, the test fails saying so (an unhandled 'error' would end the file).
    const listenFailed = new Promise<never>((_, reject) => server.once('error', (err) => reject(new Error(`the stand-in receiver could not listen on ${port}: ${err.message}`))));
    setTimeout(() => server.listen(port, '127.0.0.1'), 300);
    try {
      const outcome = await Promise.race([
        deliverWithRetry(
          { url, origin: 'menus.example.com', token: 'secret-token' },
          Buffer.from('{"a":1}'),
          { baseDelayMs: 40, maxDelayMs: 200, factor: 2 },
          new Prng(1),
        ),
        listenFailed,
      ]);
      assert.equal(outcome.acked, true);
      assert.ok(outcome.statuses.includes(null), 'met the unreachable receiver');
      assert.deepEqual(outcome.statuses.filter((s) => s !== null), [503, 500, 429, 200]);
      assert.deepEqual(seen.at(-1), { origin: 'menus.example.com', authorization: 'Bearer secret-token', type: 'application/json' });
      // Gives up when told to.
      answers = Array(100).fill(503);
      const gaveUp = await deliverWithRetry({ url }, Buffer.from('{}'), { baseDelayMs: 1, maxDelayMs: 2, factor: 2, maxAttempts: 4 }, new Prng(2));
      assert.equal(gaveUp.acked, false);
      assert.equal(gaveUp.attempts, 4);
    } finally {
      server.close();
    }
  });

  it('a run delivers every planned copy to the agent, which ends equal to the reference (dropped ones sent later by hand)', { timeout: 30_000 }, async () => {
    const t = await startTestAgent();
    const chains = generateChains({ ...OPTIONS, seed: 21 });
    const plan = planDeliveries(chains, { reorderWindow: 4, duplicate: 0.3, drop: 0.15 }, new Prng(21));
    assert.ok(plan.dropped.length > 0);
    const report = await runDeliveries({ url: t.webhookUrl }, plan, { concurrency: 6, retry: { baseDelayMs: 10, maxDelayMs: 50, factor: 2 } });
    assert.equal(report.acked.length, plan.deliveries.length);
    await t.settle();
    assert.ok(compareStates(referenceFor(chains).state(), stateFromViews(t.agent.core.tillDb)).length > 0, 'incomplete while updates are missing');
    const byHand = await runDeliveries({ url: t.webhookUrl }, { deliveries: plan.dropped.map((update) => ({ update, copy: 0, delayMs: 0 })), dropped: [] }, { concurrency: 1 });
    assert.equal(byHand.failed.length, 0);
    await t.settle();
    assert.deepEqual(compareStates(referenceFor(chains).state(), stateFromViews(t.agent.core.tillDb)), []);
  });
});

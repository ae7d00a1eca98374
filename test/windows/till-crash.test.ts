import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { item, price, schedule, update } from '../helpers/fixtures';
import { applyInProgress, laneDir, lastSequence, post, readDb, startTill, type TillProcess, type TillRow } from './lane';
import { startAgent, waitFor, winPath, writeWindowsConfig, type WindowsAgent } from './wine';

/**
 * A till reading the POS views as a Windows process while large updates apply, and the agent ended
 * with `taskkill /F` in the middle of an apply: after a restart nothing is lost, nothing applied
 * twice, and the till's views equal those of a clean run of the same chain.
 */
const LOCATION = 42;
const ITEMS = 1500;
/** Every update sets one Eat In price for every item (so a till seeing half an apply would see two prices), and rewrites many other ranges. */
function bigUpdate(k: number): Buffer {
  const items = Array.from({ length: ITEMS }, (_, i) => {
    const day = String(1 + ((k * 7 + i) % 28)).padStart(2, '0');
    return item(
      String(1000 + i),
      `IT-${i}`,
      [
        price('2026-12-01', '9999-12-31', 'Eat In', `${3 + k}.${String(k % 100).padStart(2, '0')}`),
        price(`2027-01-${day}`, `2027-02-${day}`, 'Take Away', `${2 + (k % 5)}.50`),
        price(`2027-03-${day}`, `2027-03-${day}`, 'Delivery', `${5 + (i % 3)}.25`),
        price(`2027-04-${day}`, `2027-05-${day}`, 'Delivery', `${6 + (i % 3)}.75`),
      ],
      [schedule(`2027-01-${day}`, `2027-01-${day}`, 'Lunch', (k + i) % 2 ? 'UNAVAILABLE' : 'AVAILABLE'), schedule('2026-12-01', '2027-12-31', 'Dinner')],
    );
  });
  return Buffer.from(JSON.stringify(update(LOCATION, 100 + k, 99 + k, items)));
}
const pence = (k: number): number => (3 + k) * 100 + (k % 100);

/** What the till sees of location 42, and the agent's inbox: equal between a crashed-and-restarted run and a clean one. */
function snapshot(dataDir: string): unknown {
  return {
    prices: readDb(path.join(dataDir, 'pos-sync.db'), (db) =>
      db.prepare('SELECT plu, item_id, tariff_name, date_from, date_to, sell_price_minor, tax_code, tax_rate FROM pos_prices WHERE location_id = ? ORDER BY 1, 2, 3, 4').all(LOCATION),
    ),
    availability: readDb(path.join(dataDir, 'pos-sync.db'), (db) =>
      db.prepare('SELECT plu, item_id, meal_period, date_from, date_to, status FROM pos_availability WHERE location_id = ? ORDER BY 1, 2, 3, 4').all(LOCATION),
    ),
    applied: readDb(path.join(dataDir, 'pos-sync.db'), (db) => db.prepare('SELECT inbox_id, change_sequence FROM applied_updates WHERE location_id = ? ORDER BY inbox_id').all(LOCATION)),
    inbox: readDb(path.join(dataDir, 'agent.db'), (db) => db.prepare('SELECT change_sequence, state FROM inbox WHERE location_id = ? ORDER BY change_sequence').all(LOCATION)),
  };
}


/** The till saw no error, and every read was one whole update (the prices of the sequence it read with it). */
function assertWholeUpdates(seen: { errors: string[]; seen: TillRow[] }, atLeast: number): void {
  assert.deepEqual(seen.errors, [], 'the till never saw an error (SQLITE_BUSY or other)');
  const ours = seen.seen.filter((r) => r.location === LOCATION);
  const sequences = [...new Set(ours.map((r) => r.sequence))].sort();
  assert.ok(sequences.length >= atLeast, `the till read while the updates applied (it saw ${sequences.join(', ')})`);
  for (const r of ours) {
    assert.equal(r.prices, ITEMS, `a whole update: ${JSON.stringify(r)}`);
    assert.equal(r.distinctPrices, 1, `one update's prices, not two: ${JSON.stringify(r)}`);
    assert.equal(r.price, pence(r.sequence! - 100), `the prices of the update the till's sequence names: ${JSON.stringify(r)}`);
  }
}

describe('Windows: a till reading during applies, and taskkill /F inside an apply', () => {
  const work = laneDir('till');
  const out = { outDir: path.join(work, 'out') };
  const conf = (dataDir: string, name: string): string =>
    writeWindowsConfig(path.join(work, `${name}.json`), {
      dataDir: winPath(dataDir),
      webhook: { port: 0 },
      admin: { enabled: false },
      sync: { pollIntervalMs: 200, baselineSettleSeconds: 0 },
      backup: { enabled: false },
    });
  const dataDir = path.join(work, 'site');
  const config = conf(dataDir, 'site');
  const tillFile = path.join(dataDir, 'pos-sync.db');
  let agent: WindowsAgent | null = null;
  let till: TillProcess | null = null;
  /** The last ChangeSequence the kill test delivers (it depends on how many kills it took). */
  let last = 0;

  before(async () => {
    agent = await startAgent(config, dataDir, out);
    assert.equal((await post(agent.url, bigUpdate(1))).status, 200);
    await waitFor('the first update applied', () => lastSequence(dataDir, LOCATION) === 101, 120_000);
  });
  after(async () => {
    await till?.kill();
    await agent?.stop();
  });

  it('the till sees each update whole, never half, and never SQLITE_BUSY, while three large updates apply', async () => {
    till = await startTill(tillFile, work, out);
    for (const k of [2, 3, 4]) assert.equal((await post(agent!.url, bigUpdate(k))).status, 200);
    await waitFor('updates 102-104 applied', () => lastSequence(dataDir, LOCATION) === 104, 180_000);
    const seen = await till.stop();
    till = null;
    assertWholeUpdates(seen, 2);
  });

  it('taskkill /F inside an apply, then a restart: nothing lost, nothing applied twice, equal to a clean run', async () => {
    till = await startTill(tillFile, work, out);
    // Killed while an apply's write transaction is open on the till's file. taskkill is a new Windows
    // process, and on a busy machine it may start only after that apply committed: then the next
    // update is tried, a few times at most.
    let k = 4;
    let landedInside = false;
    while (!landedInside && k < 8) {
      k += 1;
      assert.equal((await post(agent!.url, bigUpdate(k))).status, 200);
      await waitFor(`the apply of ${100 + k} to begin`, () => applyInProgress(tillFile) || lastSequence(dataDir, LOCATION) === 100 + k, 120_000, 5);
      await agent!.taskkill();
      landedInside = lastSequence(dataDir, LOCATION) === 99 + k;
      if (landedInside) {
        const stored = readDb(path.join(dataDir, 'agent.db'), (db) => db.prepare('SELECT state FROM inbox WHERE location_id = ? AND change_sequence = ?').get(LOCATION, 100 + k));
        assert.deepEqual(stored, { state: 'pending' }, 'the update answered 200 is stored, waiting for the restart to apply it');
      }
      agent = await startAgent(config, dataDir, out);
    }
    assert.ok(landedInside, 'no kill landed inside an apply: the test lost its point');
    assert.equal((await post(agent!.url, bigUpdate(k)).then((r) => r.status)), 200, 'head office retrying the delivery it may not have seen answered');
    assert.equal((await post(agent!.url, bigUpdate(k + 1))).status, 200);
    last = 101 + k;
    await waitFor('every update applied after the restart', () => lastSequence(dataDir, LOCATION) === last, 180_000);

    const seen = await till!.stop();
    till = null;
    assertWholeUpdates(seen, 2);
    assert.equal(await agent!.stop(), 0, agent!.output());
    agent = null;

    // The same chain delivered once, in order, to a fresh Windows agent.
    const cleanDir = path.join(work, 'clean');
    const clean = await startAgent(conf(cleanDir, 'clean'), cleanDir, out);
    try {
      for (let n = 1; n <= last - 100; n++) assert.equal((await post(clean.url, bigUpdate(n))).status, 200);
      await waitFor('the clean run applied', () => lastSequence(cleanDir, LOCATION) === last, 240_000);
    } finally {
      assert.equal(await clean.stop(), 0, clean.output());
    }
    const a = snapshot(dataDir) as { inbox: { state: string }[] };
    const b = snapshot(cleanDir);
    assert.deepEqual(a, b);
    assert.deepEqual(
      a.inbox.map((r) => r.state),
      Array.from({ length: last - 100 }, () => 'applied'),
    );
  });
});

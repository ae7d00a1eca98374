import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { BODY_CHUNK_BYTES, BodyStore, releaseBody } from '../../src/store/bodies';
import { openDatabase, storeFilePath, type Db } from '../../src/store/database';
import { planBody, readBody, readStoredBody, type ReadBody } from '../../src/domain/body';
import { encode, generateChains, Prng } from '../../src/dev/publisher';
import { item, price, sampleBodies, schedule, tempDir, update } from '../helpers/fixtures';

/** A fresh agent.db and its body store, with a way to add the inbox row a body belongs to. */
function withBodies(test: (db: Db, store: BodyStore, inboxRow: (sequence: number, bytes: number) => number) => void): void {
  const db = openDatabase(storeFilePath(tempDir(), 'agent'), { kind: 'agent' });
  try {
    const insert = db.prepare("INSERT INTO inbox (location_id, change_sequence, parent_change_sequence, body_bytes, body_sha256, received_at, source, state) VALUES (1, ?, 0, ?, 'x', 'now', 'webhook', 'pending')");
    test(db, new BodyStore(db), (sequence, bytes) => Number(insert.run(sequence, bytes).lastInsertRowid));
  } finally {
    db.close();
  }
}

describe('inbox bodies in 1 MiB chunks', () => {
  it('give back exactly the bytes stored, at every size around the chunk boundary', () => {
    withBodies((db, store, inboxRow) => {
      const sizes = [0, 1, BODY_CHUNK_BYTES - 1, BODY_CHUNK_BYTES, BODY_CHUNK_BYTES + 1, Math.floor(3.5 * BODY_CHUNK_BYTES)];
      sizes.forEach((size, i) => {
        const raw = randomBytes(size);
        const id = inboxRow(i + 1, size);
        db.transaction(() => store.write(id, raw))();
        const chunks = (db.prepare('SELECT count(*) AS n FROM inbox_bodies WHERE inbox_id = ?').get(id) as { n: number }).n;
        assert.equal(chunks, Math.max(1, Math.ceil(size / BODY_CHUNK_BYTES)), `chunks for ${size} bytes`);
        assert.ok(store.read(id, size)!.equals(raw), `${size} bytes with the size known`);
        assert.ok(store.read(id)!.equals(raw), `${size} bytes without`);
        // A wrong size hint (a row edited by hand) still gives the stored bytes.
        assert.ok(store.read(id, size + 10)!.equals(raw), `${size} bytes with a wrong hint`);
      });
      assert.equal(store.read(999), null, 'a pruned or unknown body is null');
    });
  });

  it('releases a large body that owns its memory at once, and leaves small or shared ones alone', () => {
    const large = Buffer.allocUnsafe(2 * BODY_CHUNK_BYTES).fill(7);
    releaseBody(large);
    assert.equal(large.length, 0, 'the large body is emptied (its memory is freed)');
    assert.equal(large.buffer.byteLength, 0);

    const small = Buffer.from('{"ChangeSequence":1}');
    releaseBody(small);
    assert.equal(small.toString(), '{"ChangeSequence":1}', 'a small body (maybe in a shared pool) is kept');

    const whole = Buffer.alloc(2 * BODY_CHUNK_BYTES, 1);
    const view = whole.subarray(10);
    releaseBody(view);
    assert.equal(view.length, 2 * BODY_CHUNK_BYTES - 10, 'a view of part of a buffer is never detached');
    assert.equal(whole.length, 2 * BODY_CHUNK_BYTES);
  });

  it('read back a body the applier may release without touching the stored chunks', () => {
    withBodies((db, store, inboxRow) => {
      const size = 3 * BODY_CHUNK_BYTES + 5;
      const raw = randomBytes(size);
      const id = inboxRow(1, size);
      db.transaction(() => store.write(id, raw))();
      const first = store.read(id, size)!;
      releaseBody(first);
      assert.equal(first.length, 0);
      assert.ok(store.read(id, size)!.equals(raw), 'the stored bytes are intact');
    });
  });

  it('read any byte range back, across chunk boundaries, from chunked bodies and from one-chunk bodies moved from 0.1', () => {
    withBodies((db, store, inboxRow) => {
      const size = Math.floor(3.5 * BODY_CHUNK_BYTES);
      const raw = randomBytes(size);
      const chunked = inboxRow(1, size);
      db.transaction(() => store.write(chunked, raw))();
      // A 0.1 data folder's body arrives as one chunk of its whole size (src/store/split.ts).
      const moved = inboxRow(2, size);
      db.prepare('INSERT INTO inbox_bodies (inbox_id, chunk, body) VALUES (?, 0, ?)').run(moved, raw);
      const B = BODY_CHUNK_BYTES;
      const cases: [number, number][] = [[0, 0], [0, 1], [0, size], [B - 1, B + 1], [B, B], [B, 2 * B], [B - 5, 3 * B + 7], [size - 1, size], [size, size], [12_345, 12_400]];
      const rng = new Prng(11);
      for (let i = 0; i < 200; i++) {
        const a = rng.int(0, size);
        const b = rng.int(0, size);
        cases.push(a <= b ? [a, b] : [b, a]);
      }
      for (const id of [chunked, moved]) {
        const read = store.ranges(id)!;
        for (const [start, end] of cases) assert.ok(read(start, end).equals(raw.subarray(start, end)), `body #${id} bytes ${start}..${end}`);
        assert.throws(() => read(0, size + 1), /outside body/);
        assert.throws(() => read(5, 4), /outside body/);
      }
    });
  });

  it('plan the same from a stored layout (envelope and items read from their bytes) as from the whole body', () => {
    withBodies((db, store, inboxRow) => {
      const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));
      const bodies: { name: string; raw: Buffer }[] = [
        ...sampleBodies(),
        // Large enough to cross several chunks, with items split across chunk boundaries.
        ...generateChains({ seed: 5, locations: 1, updatesPerLocation: 2, startDate: '2026-12-01', days: 60, itemsPerLocation: 400, tariffs: 3, mealPeriods: 3, scheduling: 'all', rangesPerKey: 12 })[0]!.updates.map((u, i) => ({ name: `generated ${i}`, raw: encode(u) })),
        { name: 'BOM, members after the items, unknown and odd members', raw: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"ScheduledItems":[{"PLU":"1","ItemID":7,"ItemName":"Tea ☕","ItemType":"RECIPE","PriceUpdates":[{"DateFrom":"2026-12-01","DateTo":"9999-12-31","TariffName":"Eat In","TaxCode":"S","TaxRate":20,"SellPrice":1.50}],"ScheduleUpdates":[]}],"Extra":{"__proto__":{"x":1}},"__proto__":{"polluted":true},"LocationName":5,"ChangeSequence":3,"ParentChangeSequence":2,"LocationID":12,"CurrencyIsoCode":"gbp"}')]) },
        { name: 'an ItemID sent twice, element warnings', raw: json(update(12, 4, 3, [item('1', 'A', [price('2026-12-01', '2026-12-31', 'Eat In', '2.50')]), item('2', 'B', [price('2026-12-31', '2026-12-01', 'Eat In', 'x')], [schedule('2026-12-01', '2026-12-31', 'Lunch')]), item('1', 'A', [price('2026-12-10', '2026-12-20', 'Eat In', '2.75')])])) },
      ];
      const planned = (read: ReadBody): unknown => {
        const plan = planBody(read);
        const items = [...plan.items];
        return { ...plan, items, warnings: [...plan.warnings] };
      };
      bodies.forEach(({ name, raw }, i) => {
        const whole = readBody(raw, { checkItems: true });
        assert.ok(whole.ok, name);
        const id = inboxRow(i + 1, raw.length);
        db.transaction(() => {
          store.write(id, raw);
          store.writeLayout(id, whole.layout);
        })();
        const layout = store.layout(id);
        assert.deepEqual(layout, whole.layout, `${name}: the layout reads back as written`);
        const stored = readStoredBody(layout!, store.ranges(id)!);
        assert.ok(stored.ok, name);
        assert.deepEqual(stored.envelope, whole.envelope, `${name}: envelope`);
        assert.deepEqual(stored.head, whole.head, `${name}: head`);
        assert.deepEqual(planned(stored), planned(whole), `${name}: plan and warnings`);
      });
      assert.ok(bodies.some((b) => b.raw.length > 2 * BODY_CHUNK_BYTES), 'at least one body spans several chunks');
      assert.equal(store.layout(999), null, 'no layout for a body stored before layouts existed');
      assert.equal(store.ranges(999), null, 'no ranges for a body no longer stored');
    });
  });
});

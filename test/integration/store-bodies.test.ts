import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { BODY_CHUNK_BYTES, BodyStore } from '../../src/store/bodies';
import { openDatabase, storeFilePath } from '../../src/store/database';
import { tempDir } from '../helpers/fixtures';

describe('inbox bodies in 1 MiB chunks', () => {
  it('give back exactly the bytes stored, at every size around the chunk boundary', () => {
    const db = openDatabase(storeFilePath(tempDir(), 'agent'), { kind: 'agent' });
    try {
      const store = new BodyStore(db);
      const insert = db.prepare("INSERT INTO inbox (location_id, change_sequence, parent_change_sequence, body_bytes, body_sha256, received_at, source, state) VALUES (1, ?, 0, ?, 'x', 'now', 'webhook', 'pending')");
      const sizes = [0, 1, BODY_CHUNK_BYTES - 1, BODY_CHUNK_BYTES, BODY_CHUNK_BYTES + 1, Math.floor(3.5 * BODY_CHUNK_BYTES)];
      sizes.forEach((size, i) => {
        const raw = randomBytes(size);
        const id = Number(insert.run(i + 1, size).lastInsertRowid);
        db.transaction(() => store.write(id, raw))();
        const chunks = (db.prepare('SELECT count(*) AS n FROM inbox_bodies WHERE inbox_id = ?').get(id) as { n: number }).n;
        assert.equal(chunks, Math.max(1, Math.ceil(size / BODY_CHUNK_BYTES)), `chunks for ${size} bytes`);
        assert.ok(store.read(id, size)!.equals(raw), `${size} bytes with the size known`);
        assert.ok(store.read(id)!.equals(raw), `${size} bytes without`);
        // A wrong size hint (a row edited by hand) still gives the stored bytes.
        assert.ok(store.read(id, size + 10)!.equals(raw), `${size} bytes with a wrong hint`);
      });
      assert.equal(store.read(999), null, 'a pruned or unknown body is null');
    } finally {
      db.close();
    }
  });
});

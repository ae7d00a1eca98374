import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { describe, it } from 'node:test';
import zlib from 'node:zlib';
import { startTestAgent } from '../helpers/agent';
import { item, price, tempDir, update } from '../helpers/fixtures';
import { bodyFilesDir, sweepBodyFiles } from '../../src/store/body-files';
import { storedBody } from '../../src/store/queries';
import { openReadOnly, storeFilePath } from '../../src/store/database';
import { pruneDatabase, retentionCutoffs } from '../../src/ops/retention';
import { checkBackupFile } from '../../src/ops/backup/candidate';
import { interruptedRestore, restoreDatabase, restoreJournalFile } from '../../src/ops/backup/restore';
import { backupDatabase } from '../../src/ops/backup/write';

/**
 * Issue 29: bodies of at least webhook.fileBodyFromBytes are written to a file of their own as they
 * arrive, and every reader of a stored body (dedupe, the applier, the payload view, retention,
 * diagnostics) handles that form as it does a body kept in agent.db.
 */

const FILE_FROM = 64 * 1024;

function large(location: number, sequence: number, parent: number, cents = 0): Buffer {
  const items = Array.from({ length: 500 }, (_, i) => item(String(100 + i), `L-${i}`, [price('2026-12-01', '9999-12-31', 'Eat In', `${2 + (i % 5)}.${String((i + cents) % 100).padStart(2, '0')}`)]));
  return Buffer.from(JSON.stringify(update(location, sequence, parent, items)));
}

/**
 * A POST over real HTTP with no Content-Length (Transfer-Encoding: chunked), the body written in pieces
 * of `piece` bytes, so it arrives as many chunks.
 */
function postChunked(url: string, body: Buffer, headers: Record<string, string>, piece = 16 * 1024): Promise<{ status: number; json: unknown }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (p: Buffer) => parts.push(p));
      res.on('end', () => resolve({ status: res.statusCode!, json: JSON.parse(Buffer.concat(parts).toString('utf8')) as unknown }));
      res.on('error', reject);
    });
    // A refusal may close the connection before the whole body is written.
    req.on('error', reject);
    const writeFrom = (at: number): void => {
      if (at >= body.length) {
        req.end();
        return;
      }
      if (req.destroyed) return;
      req.write(body.subarray(at, at + piece), () => writeFrom(at + piece));
    };
    writeFrom(0);
  });
}

const ENCODERS = {
  gzip: (b: Buffer) => zlib.gzipSync(b),
  deflate: (b: Buffer) => zlib.deflateSync(b),
  br: (b: Buffer) => zlib.brotliCompressSync(b),
} as const;

describe('large bodies in files of their own', async () => {
  const MAX_BODY = 2 * 1024 * 1024;
  const t = await startTestAgent({ webhook: { fileBodyFromBytes: FILE_FROM, maxBodyBytes: MAX_BODY }, sync: { baselineSettleSeconds: 0 } });
  const dataDir = t.config.dataDir;
  const agentDb = t.agent.core.agentDb;
  const files = (): string[] => (fs.existsSync(bodyFilesDir(dataDir)) ? fs.readdirSync(bodyFilesDir(dataDir)).sort() : []);
  const fileOf = (inboxId: number): string | undefined =>
    agentDb.prepare<[number], { file: string }>('SELECT file FROM inbox_body_files WHERE inbox_id = ?').get(inboxId)?.file;

  it('are stored as a file the inbox row names, applied, and shown byte for byte', async () => {
    const body = large(31, 1, 0);
    assert.ok(body.length > FILE_FROM);
    const res = await t.post(body);
    assert.equal(res.status, 200, JSON.stringify(res.json));
    const inboxId = (res.json as { inboxId: number }).inboxId;
    const file = fileOf(inboxId);
    assert.ok(file, 'the row names a file');
    assert.deepEqual(files(), [file]);
    assert.equal(agentDb.prepare<[number], { n: number }>('SELECT count(*) AS n FROM inbox_bodies WHERE inbox_id = ?').get(inboxId)!.n, 0, 'not also in agent.db');
    assert.ok(fs.readFileSync(path.join(bodyFilesDir(dataDir), file!)).equals(body));
    assert.equal((fs.statSync(path.join(bodyFilesDir(dataDir), file!)).mode & 0o077), 0, 'owner-only');
    assert.ok(storedBody(agentDb, 'inbox', inboxId)!.equals(body));
    await t.settle();
    const applied = t.agent.core.tillDb.prepare<[], { n: number }>('SELECT count(*) AS n FROM pos_prices WHERE location_id = 31').get()!.n;
    assert.equal(applied, 500);
  });

  it('a redelivery is a duplicate and leaves no second file; a different body under the sequence is a conflict with its own', async () => {
    const before = files();
    const again = await t.post(large(31, 1, 0));
    assert.equal((again.json as { status: string }).status, 'duplicate');
    assert.deepEqual(files(), before);
    const other = await t.post(large(31, 1, 0, 7));
    assert.equal((other.json as { status: string }).status, 'conflict');
    assert.equal(files().length, before.length + 1);
  });

  it('small bodies stay in agent.db', async () => {
    const small = Buffer.from(JSON.stringify(update(32, 1, 0, [item('1', 'S', [price('2026-12-01', '9999-12-31', 'Eat In', '1.00')])])));
    const before = files();
    const res = await t.post(small);
    assert.equal(res.status, 200);
    assert.equal(fileOf((res.json as { inboxId: number }).inboxId), undefined);
    assert.deepEqual(files(), before);
  });

  it('a large import is stored as a file too (checked in slices on the webhook thread), applied; a refused one leaves no file', async () => {
    const body = large(33, 1, 0);
    const before = files();
    const { outcome, applied } = await t.agent.importPayload(body, 'test');
    assert.equal(outcome.kind, 'stored');
    const inboxId = outcome.kind === 'stored' ? outcome.inboxId : 0;
    const file = fileOf(inboxId);
    assert.ok(file, 'the row names a file');
    assert.deepEqual(files(), [...before, file].sort());
    assert.ok(storedBody(agentDb, 'inbox', inboxId)!.equals(body));
    assert.equal(agentDb.prepare<[number], { source: string; n: number }>("SELECT source, (SELECT count(*) FROM inbox_bodies WHERE inbox_id = inbox.id) AS n FROM inbox WHERE id = ?").get(inboxId)!.n, 0, 'not also in agent.db');
    assert.ok(applied.some((u) => u.locationId === 33));
    assert.equal(t.agent.core.tillDb.prepare<[], { n: number }>('SELECT count(*) AS n FROM pos_prices WHERE location_id = 33').get()!.n, 500);
    // Not JSON from its last item on: refused and kept in quarantine, its file gone.
    const broken = Buffer.concat([body.subarray(0, body.length - 10), Buffer.from('!!!!!!!!!!')]);
    const refused = await t.agent.importPayload(broken, 'test');
    assert.equal(refused.outcome.kind, 'rejected');
    assert.deepEqual(files(), [...before, file].sort());
  });

  it('a large body with no valid envelope is refused 400, kept in quarantine, and leaves no file', async () => {
    const before = files();
    const bad = Buffer.from(`{"Items": [${'1,'.repeat(FILE_FROM)}1]}`);
    const res = await t.post(bad);
    assert.equal(res.status, 400);
    assert.deepEqual(files(), before);
    const quarantineId = (res.json as { error: { quarantineId: number } }).error.quarantineId;
    assert.ok(storedBody(agentDb, 'quarantine', quarantineId)!.equals(bad));
  });

  it('a sender that stops half way leaves no file', async () => {
    const before = files();
    const port = Number(new URL(t.webhookUrl).port);
    await new Promise<void>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.write(`POST ${new URL(t.webhookUrl).pathname} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${FILE_FROM * 4}\r\n\r\n`);
        socket.write(Buffer.alloc(FILE_FROM * 2, 0x20), () => setTimeout(() => socket.destroy(), 200));
      });
      socket.on('error', () => undefined);
      socket.on('close', () => resolve());
    });
    // The receiver removes the part it wrote once it sees the connection gone.
    for (const deadline = Date.now() + 10_000; files().length !== before.length && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(files(), before);
  });

  it('a chunked body (no Content-Length) that passes the size is written to a file as it arrives, and applied', async () => {
    const body = large(38, 1, 0);
    const res = await postChunked(t.webhookUrl, body, {});
    assert.equal(res.status, 200, JSON.stringify(res.json));
    const inboxId = (res.json as { inboxId: number }).inboxId;
    const file = fileOf(inboxId);
    assert.ok(file, 'the row names a file');
    assert.equal(agentDb.prepare<[number], { n: number }>('SELECT count(*) AS n FROM inbox_bodies WHERE inbox_id = ?').get(inboxId)!.n, 0, 'not also in agent.db');
    assert.ok(fs.readFileSync(path.join(bodyFilesDir(dataDir), file!)).equals(body));
    await t.settle();
    assert.equal(t.agent.core.tillDb.prepare<[], { n: number }>('SELECT count(*) AS n FROM pos_prices WHERE location_id = 38').get()!.n, 500);
  });

  for (const [encoding, encode] of Object.entries(ENCODERS)) {
    for (const chunked of [false, true]) {
      it(`a ${encoding} body${chunked ? ' sent chunked' : ''} that decodes past the size is decoded into a file as it arrives, and applied`, async () => {
        const location = 40 + Object.keys(ENCODERS).indexOf(encoding) * 2 + (chunked ? 1 : 0);
        const body = large(location, 1, 0);
        const sent = encode(body);
        // Small on the wire, large once decoded: only the decoded size decides.
        assert.ok(sent.length < FILE_FROM, `${sent.length} bytes sent`);
        const res = chunked ? await postChunked(t.webhookUrl, sent, { 'content-encoding': encoding }, 1024) : await t.post(sent, { 'content-encoding': encoding });
        assert.equal(res.status, 200, JSON.stringify(res.json));
        const inboxId = (res.json as { inboxId: number }).inboxId;
        const file = fileOf(inboxId);
        assert.ok(file, 'the row names a file');
        assert.ok(fs.readFileSync(path.join(bodyFilesDir(dataDir), file!)).equals(body), 'the file holds the decoded body');
        assert.ok(storedBody(agentDb, 'inbox', inboxId)!.equals(body));
        await t.settle();
        assert.equal(t.agent.core.tillDb.prepare<[number], { n: number }>('SELECT count(*) AS n FROM pos_prices WHERE location_id = ?').get(location)!.n, 500);
      });
    }
  }

  it('a small chunked or compressed body stays in agent.db', async () => {
    const small = Buffer.from(JSON.stringify(update(35, 1, 0, [item('1', 'S', [price('2026-12-01', '9999-12-31', 'Eat In', '1.00')])])));
    const before = files();
    const chunked = await postChunked(t.webhookUrl, small, {}, 64);
    assert.equal(chunked.status, 200, JSON.stringify(chunked.json));
    const gzipped = await t.post(zlib.gzipSync(Buffer.from(JSON.stringify(update(35, 2, 1, [item('1', 'S', [price('2026-12-01', '9999-12-31', 'Eat In', '1.50')])])))), { 'content-encoding': 'gzip' });
    assert.equal(gzipped.status, 200, JSON.stringify(gzipped.json));
    for (const res of [chunked, gzipped]) {
      const inboxId = (res.json as { inboxId: number }).inboxId;
      assert.equal(fileOf(inboxId), undefined);
      assert.equal(agentDb.prepare<[number], { n: number }>('SELECT count(*) AS n FROM inbox_bodies WHERE inbox_id = ?').get(inboxId)!.n > 0, true, 'kept in agent.db');
    }
    assert.deepEqual(files(), before);
  });

  it('a compressed bomb (or a chunked body) past webhook.maxBodyBytes once decoded is refused 413 and leaves nothing behind', async () => {
    const counts = (): { inbox: number; quarantine: number; kept: number } => ({
      inbox: agentDb.prepare<[], { n: number }>('SELECT count(*) AS n FROM inbox').get()!.n,
      quarantine: agentDb.prepare<[], { n: number }>('SELECT count(*) AS n FROM quarantine').get()!.n,
      kept: agentDb.prepare<[], { n: number }>('SELECT count(*) AS n FROM inbox_bodies').get()!.n,
    });
    const before = { files: files(), ...counts() };
    // Zeros compress about a thousand to one: a few KiB sent, decoding to eight times the limit.
    const bomb = Buffer.alloc(MAX_BODY * 8, 0x20);
    for (const [encoding, encode] of Object.entries(ENCODERS)) {
      const sent = encode(bomb);
      assert.ok(sent.length < FILE_FROM, `${encoding}: ${sent.length} bytes sent`);
      for (const chunked of [false, true]) {
        const res = chunked ? await postChunked(t.webhookUrl, sent, { 'content-encoding': encoding }, 1024) : await t.post(sent, { 'content-encoding': encoding });
        assert.equal(res.status, 413, `${encoding}${chunked ? ' chunked' : ''}: ${JSON.stringify(res.json)}`);
        assert.equal((res.json as { error: { id: string } }).error.id, 'payload_too_large');
        // Named as decoded, with its size as sent when it declared one: not "611 bytes is too large".
        const message = (res.json as { error: { message: string } }).error.message;
        const asSent = chunked ? '' : ` \\(${sent.length} bytes as sent\\)`;
        assert.match(message, new RegExp(`^the request body, decoded from ${encoding}${asSent}, is larger than this endpoint accepts \\(webhook\\.maxBodyBytes, ${MAX_BODY} bytes\\)$`), message);
      }
    }
    // Past the limit sent as it is, chunked: refused as it passes it.
    const plain = await postChunked(t.webhookUrl, bomb.subarray(0, MAX_BODY + FILE_FROM), {}, 64 * 1024).catch((err: unknown) => ({ status: 0, json: String(err) }));
    assert.equal(plain.status, 413, JSON.stringify(plain.json));
    // The receiver removes a file it started once the refusal is decided.
    for (const deadline = Date.now() + 10_000; files().length !== before.files.length && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual({ files: files(), ...counts() }, before, 'no body file, no inbox row, nothing kept');
  });

  it('a broken compressed body that had reached the size is refused 400 and leaves no file', async () => {
    const before = files();
    const sent = zlib.gzipSync(large(36, 1, 0));
    // Cut before its end and then garbage: decoding fails after what was decoded passed the size.
    const broken = Buffer.concat([sent.subarray(0, sent.length - 64), Buffer.alloc(64, 0xff)]);
    const res = await postChunked(t.webhookUrl, broken, { 'content-encoding': 'gzip' }, 512);
    assert.equal(res.status, 400, JSON.stringify(res.json));
    assert.equal((res.json as { error: { id: string } }).error.id, 'invalid_encoding');
    for (const deadline = Date.now() + 10_000; files().length !== before.length && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(files(), before);
  });

  it('retention drops an applied body\'s file with its row, and the start-up sweep removes files no row names', async () => {
    const res = await t.post(large(33, 1, 0));
    const inboxId = (res.json as { inboxId: number }).inboxId;
    await t.settle();
    const file = fileOf(inboxId)!;
    assert.ok(files().includes(file));
    // Everything applied is older than a cutoff a day ahead.
    const cutoffs = retentionCutoffs({ ...t.config.retention, rawPayloadDays: 1 }, [], new Date(Date.now() + 2 * 86_400_000));
    await pruneDatabase({ agent: agentDb, ranges: async () => ({ changed: 0, ms: 0 }) }, { ...cutoffs, quarantineBefore: new Date(0).toISOString(), deliveriesBefore: new Date(0).toISOString() }, 500);
    assert.equal(fileOf(inboxId), undefined);
    assert.ok(!files().includes(file), 'the file went with its row');
    assert.equal(storedBody(agentDb, 'inbox', inboxId), null);
    // A leftover of an interrupted receipt: no row names it.
    const stray = path.join(bodyFilesDir(dataDir), `${'ab'.repeat(16)}.body`);
    fs.writeFileSync(stray, 'partial');
    const kept = files().filter((f) => f !== path.basename(stray));
    assert.deepEqual(sweepBodyFiles(agentDb, dataDir), { removed: 1, held: [] });
    assert.deepEqual(files(), kept);
  });

  it('a body file another program holds open is left for a later start; neither the prune nor the start-up sweep fails', async () => {
    const res = await t.post(large(34, 1, 0));
    const inboxId = (res.json as { inboxId: number }).inboxId;
    await t.settle();
    const file = path.join(bodyFilesDir(dataDir), fileOf(inboxId)!);
    // What Windows does to a file another program has open without sharing deletion: removing it
    // fails. Here a folder of the same name (with something in it) makes the removal fail the same way.
    fs.rmSync(file);
    fs.mkdirSync(file);
    fs.writeFileSync(path.join(file, 'held'), 'x');
    const cutoffs = retentionCutoffs({ ...t.config.retention, rawPayloadDays: 1 }, [], new Date(Date.now() + 2 * 86_400_000));
    const report = await pruneDatabase({ agent: agentDb, ranges: async () => ({ changed: 0, ms: 0 }) }, { ...cutoffs, quarantineBefore: new Date(0).toISOString(), deliveriesBefore: new Date(0).toISOString() }, 500);
    assert.equal(report.heldBodyFiles, 1);
    assert.equal(fileOf(inboxId), undefined, 'the row went: the body is pruned');
    assert.deepEqual(sweepBodyFiles(agentDb, dataDir), { removed: 0, held: [file] });
    fs.rmSync(path.join(file, 'held'));
    fs.rmdirSync(file);
    fs.writeFileSync(file, 'released');
    assert.deepEqual(sweepBodyFiles(agentDb, dataDir), { removed: 1, held: [] });
    assert.ok(!fs.existsSync(file));
  });
});

describe('large bodies in backups and restores', () => {
  it('a set carries the body files agent.db names; a restore puts them back; a set missing one is refused', async () => {
    const dataDir = tempDir();
    const first = await startTestAgent({ dataDir, webhook: { fileBodyFromBytes: FILE_FROM }, sync: { baselineSettleSeconds: 0, pollIntervalMs: 60_000 } });
    const body = large(41, 1, 0);
    // Paused: the body stays pending, so the restored agent must apply it from the restored file.
    first.agent.setPaused(true);
    const res = await first.post(body);
    assert.equal(res.status, 200);
    const inboxId = (res.json as { inboxId: number }).inboxId;
    const backupsDir = path.join(tempDir(), 'backups');
    const made = await backupDatabase({ agent: first.agent.core.agentDb, till: first.agent.core.tillDb }, backupsDir, 3);
    const file = first.agent.core.agentDb.prepare<[number], { file: string }>('SELECT file FROM inbox_body_files WHERE inbox_id = ?').get(inboxId)!.file;
    assert.ok(fs.readFileSync(path.join(made.file, 'bodies', file)).equals(body), 'the set holds the body file');
    assert.equal(checkBackupFile(made.file).ok, true);
    await first.agent.stop();

    // Lose the live file, then restore: it comes back from the set.
    fs.rmSync(bodyFilesDir(dataDir), { recursive: true, force: true });
    await restoreDatabase(first.config, made.file);
    assert.ok(fs.readFileSync(path.join(bodyFilesDir(dataDir), file)).equals(body));

    const second = await startTestAgent({ dataDir, webhook: { fileBodyFromBytes: FILE_FROM }, sync: { baselineSettleSeconds: 0 } });
    second.agent.setPaused(false);
    await second.settle();
    assert.equal(second.agent.core.tillDb.prepare<[], { n: number }>('SELECT count(*) AS n FROM pos_prices WHERE location_id = 41').get()!.n, 500);
    await second.agent.stop();

    // A set whose bodies/ lacks a file its agent.db names is not restorable.
    fs.rmSync(path.join(made.file, 'bodies', file));
    const check = checkBackupFile(made.file);
    assert.equal(check.ok, false);
    assert.match(check.problems.join('; '), /names 1 body file the set's bodies\/ folder lacks/);
  });
});

describe('a restore while another program holds a body file (Windows refuses to move it)', () => {
  /** A stopped agent's folder with two large bodies, and a set taken when it had only the first. */
  async function prepared(): Promise<{ dataDir: string; config: Parameters<typeof restoreDatabase>[0]; set: string; inSet: string; afterSet: string }> {
    const dataDir = tempDir();
    const t = await startTestAgent({ dataDir, webhook: { fileBodyFromBytes: FILE_FROM }, sync: { baselineSettleSeconds: 0, pollIntervalMs: 60_000 } });
    t.agent.setPaused(true);
    const fileOf = (res: { json: unknown }): string =>
      t.agent.core.agentDb.prepare<[number], { file: string }>('SELECT file FROM inbox_body_files WHERE inbox_id = ?').get((res.json as { inboxId: number }).inboxId)!.file;
    const first = await t.post(large(51, 1, 0));
    assert.equal(first.status, 200);
    const set = (await backupDatabase({ agent: t.agent.core.agentDb, till: t.agent.core.tillDb }, path.join(tempDir(), 'backups'), 3)).file;
    const second = await t.post(large(51, 2, 1));
    assert.equal(second.status, 200);
    const result = { dataDir, config: t.config, set, inSet: fileOf(first), afterSet: fileOf(second) };
    await t.agent.stop();
    return result;
  }

  /** Every file under the data folder (but the pre-restore sets, the lock and -shm) with its content hash. */
  function snapshot(dataDir: string): Record<string, string> {
    const out: Record<string, string> = {};
    const walk = (dir: string): void => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const file = path.join(dir, entry.name);
        const name = path.relative(dataDir, file);
        if (name === 'backups' || /\.lock$|-shm$/.test(name)) continue;
        if (entry.isDirectory()) walk(file);
        else out[name] = createHash('sha256').update(fs.readFileSync(file)).digest('hex');
      }
    };
    walk(dataDir);
    return out;
  }

  /** fs.renameSync refusing as Windows does for a file another program has open, while `refuse(from)` says so. */
  async function withRenameRefused<T>(refuse: (from: string) => boolean, run: () => Promise<T>): Promise<T> {
    const rename = fs.renameSync;
    fs.renameSync = ((from: fs.PathLike, to: fs.PathLike) => {
      if (refuse(String(from))) throw Object.assign(new Error(`EPERM: operation not permitted, rename '${String(from)}'`), { code: 'EPERM', path: String(from) });
      rename(from, to);
    }) as typeof fs.renameSync;
    try {
      return await run();
    } finally {
      fs.renameSync = rename;
    }
  }

  it('a body file that will not move: every file as it was, the file named; once closed, the restore goes through', async () => {
    const { dataDir, config, set, inSet, afterSet } = await prepared();
    const held = path.join(bodyFilesDir(dataDir), afterSet);
    const before = snapshot(dataDir);
    assert.ok(`bodies/${afterSet}` in before && `bodies/${inSet}` in before, JSON.stringify(Object.keys(before)));
    await withRenameRefused(
      (from) => from === held,
      () =>
        assert.rejects(restoreDatabase(config, set), (err: Error & { id?: string }) => {
          assert.equal(err.id, 'database_in_use');
          assert.ok(err.message.includes(`has ${held} open: close it and run the restore again; no file was changed`), err.message);
          return true;
        }),
    );
    assert.deepEqual(snapshot(dataDir), before, 'databases and body files as they were; nothing staged or aside; no journal');
    await restoreDatabase(config, set);
    assert.deepEqual(fs.readdirSync(bodyFilesDir(dataDir)), [inSet], 'the set\'s body file, and only it');
    assert.deepEqual(fs.readdirSync(dataDir).filter((f) => /\.(replaced|restoring)$/.test(f)), []);
    assert.equal(fs.existsSync(restoreJournalFile(dataDir)), false);
  });

  it('the restored bodies/ folder that will not move into place (the last step): the databases are put back too', async () => {
    const { dataDir, config, set } = await prepared();
    const before = snapshot(dataDir);
    const staged = `${bodyFilesDir(dataDir)}.restoring`;
    await withRenameRefused(
      (from) => from === staged,
      () => assert.rejects(restoreDatabase(config, set), (err: Error & { id?: string }) => err.id === 'database_in_use' && err.message.includes('no file was changed')),
    );
    assert.deepEqual(snapshot(dataDir), before);
  });

  it('when putting a file back fails too, the journal stays (start-up waits) and running the same restore again finishes it', async () => {
    const { dataDir, config, set, inSet, afterSet } = await prepared();
    const held = path.join(bodyFilesDir(dataDir), afterSet);
    const tillAside = `${path.join(dataDir, 'pos-sync.db')}.replaced`;
    await withRenameRefused(
      (from) => from === held || from === tillAside,
      () =>
        assert.rejects(restoreDatabase(config, set), (err: Error & { id?: string }) => {
          assert.equal(err.id, 'restore_interrupted');
          assert.match(err.message, /half restored; close that program and run the same restore again before starting the agent/);
          return true;
        }),
    );
    assert.equal(interruptedRestore(dataDir)?.from, set);
    await restoreDatabase(config, set);
    assert.equal(interruptedRestore(dataDir), null);
    assert.deepEqual(fs.readdirSync(bodyFilesDir(dataDir)), [inSet]);
    assert.deepEqual(fs.readdirSync(dataDir).filter((f) => /\.(replaced|restoring)$/.test(f)), []);
    // agent.db is the set's: it holds the first update only.
    const agentDb = openReadOnly(storeFilePath(dataDir, 'agent'));
    try {
      assert.deepEqual(agentDb.prepare<[], { s: number }>('SELECT change_sequence AS s FROM inbox WHERE location_id = 51 ORDER BY 1').all().map((r) => r.s), [1]);
    } finally {
      agentDb.close();
    }
  });
});

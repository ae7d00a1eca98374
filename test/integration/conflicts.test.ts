import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { AgentCore } from '../../src/core';
import { silentLogger } from '../../src/log';
import { pruneDatabase, retentionCutoffs } from '../../src/ops/retention';
import { keepConflictBody, listConflicts } from '../../src/store/conflicts';
import { pruneRangeBatch } from '../../src/sync/range-prune';
import { REPO_ROOT, writeConfig } from '../helpers/child-agent';
import { item, price, tempDir, testConfig, update } from '../helpers/fixtures';

/** Issue 12, point 14: a conflicting redelivery has a way out, from the CLI (a real process) and the store. */

const body = (location: number, sequence: number, parent: number, sell: number): Buffer =>
  Buffer.from(JSON.stringify(update(location, sequence, parent, [item(1001, 1, [price('2026-01-01', '2027-12-31', 'Eat In', sell)])])));

function store(core: AgentCore, raw: Buffer): { inboxId: number; decision: string } {
  const { outcome } = core.importPayload(raw, 'tester');
  assert.equal(outcome.kind, 'stored');
  return outcome as unknown as { inboxId: number; decision: string };
}

const audit = (core: AgentCore): { action: string; details: string }[] =>
  core.agentDb.prepare<[], { action: string; details: string }>("SELECT action, details FROM audit_log WHERE action LIKE 'resolve-conflict%' ORDER BY id").all();

describe('conflicting redeliveries', () => {
  it('keeps the applied body and clears the red: the other cannot replace it under the same number', () => {
    const core = new AgentCore(testConfig(), silentLogger);
    try {
      const first = store(core, body(50, 1, 0, 2.5));
      const later = store(core, body(50, 1, 0, 2.75));
      assert.equal(later.decision, 'conflict');
      assert.equal(core.status()[0]!.conflicts, 1);
      const [conflict] = listConflicts(core.agentDb);
      assert.equal(conflict!.name, '50:1');
      assert.deepEqual(conflict!.bodies.map((b) => [b.inboxId, b.state]), [[first.inboxId, 'applied'], [later.inboxId, 'conflict']]);
      assert.match(conflict!.onlyFirst!, /already on the till/);

      assert.throws(() => keepConflictBody(core.agentDb, core.tillDb, { locationId: 50, changeSequence: 1, keep: later.inboxId, actor: 'ops@pc', reason: 'newer' }), { id: 'conflict_first_applied' });
      assert.throws(() => keepConflictBody(core.agentDb, core.tillDb, { locationId: 50, changeSequence: 1, keep: 999, actor: 'ops@pc', reason: 'x' }), { id: 'not_in_conflict' });
      const kept = keepConflictBody(core.agentDb, core.tillDb, { locationId: 50, changeSequence: 1, keep: first.inboxId, actor: 'ops@pc', reason: 'support: the first is right' });
      assert.deepEqual(kept, { name: '50:1', kept: first.inboxId, dropped: [later.inboxId], keptState: 'applied' });
      assert.equal(core.status()[0]!.conflicts, 0);
      assert.deepEqual(listConflicts(core.agentDb), []);
      // The dropped copy is listed as not applied, in words that do not say the update itself is not.
      const [dropped] = core.status()[0]!.notApplied;
      assert.equal(dropped!.inboxId, later.inboxId);
      assert.equal(dropped!.why, `this copy differed from the one kept, #${first.inboxId}, which is the update's content (conflict resolved by ops@pc: support: the first is right)`);
      const [record] = audit(core);
      assert.equal(record!.action, 'resolve-conflict');
      assert.deepEqual(JSON.parse(record!.details), { locationId: 50, changeSequence: 1, kept: first.inboxId, dropped: [later.inboxId], reason: 'support: the first is right' });
      // A later resend of the dropped body is a duplicate, not a new conflict.
      assert.equal(store(core, body(50, 1, 0, 2.75)).decision, 'duplicate');
      assert.equal(core.status()[0]!.conflicts, 0);
      assert.throws(() => keepConflictBody(core.agentDb, core.tillDb, { locationId: 50, changeSequence: 1, keep: first.inboxId, actor: 'ops@pc', reason: 'again' }), { id: 'no_conflict' });
    } finally {
      core.close();
    }
  });

  it('refuses to keep a later body once the till file lists the first as applied (crash between the two commits)', () => {
    const core = new AgentCore(testConfig(), silentLogger);
    try {
      store(core, body(70, 1, 0, 1));
      const waiting = store(core, body(70, 3, 2, 3));
      const later = store(core, body(70, 3, 2, 3.5));
      // What the applier leaves after committing the till file and dying before agent.db.
      core.tillDb
        .prepare('INSERT INTO applied_updates (inbox_id, location_id, change_sequence, applied_at, apply_ms, baseline, forced, rows_written) VALUES (?, 70, 3, ?, 1, 0, 1, 1)')
        .run(waiting.inboxId, new Date().toISOString());
      assert.throws(() => keepConflictBody(core.agentDb, core.tillDb, { locationId: 70, changeSequence: 3, keep: later.inboxId, actor: 'ops@pc', reason: 'newer' }), { id: 'conflict_first_applied' });
      assert.deepEqual(listConflicts(core.agentDb)[0]!.bodies.map((b) => b.state), ['pending', 'conflict'], 'nothing changed');
      assert.deepEqual(audit(core), []);
    } finally {
      core.close();
    }
  });

  it('refuses to keep a later body whose bytes retention pruned: its chain would wait on it for ever', async () => {
    const config = testConfig();
    const core = new AgentCore(config, silentLogger);
    try {
      store(core, body(80, 1, 0, 1));
      const waiting = store(core, body(80, 5, 4, 3));
      const later = store(core, body(80, 5, 4, 3.5));
      assert.equal(later.decision, 'conflict');
      // Unresolved past retention.quarantineDays: retention prunes the conflicting body's bytes.
      const then = new Date(Date.now() + (config.retention.quarantineDays + 1) * 86_400_000);
      await pruneDatabase({ agent: core.agentDb, ranges: async (request) => pruneRangeBatch(core.tillDb, request) }, retentionCutoffs(config.retention, [], then), config.retention.batchSize);
      assert.equal(listConflicts(core.agentDb)[0]!.bodies.find((b) => b.inboxId === later.inboxId)!.bodyKept, false);
      assert.throws(() => keepConflictBody(core.agentDb, core.tillDb, { locationId: 80, changeSequence: 5, keep: later.inboxId, actor: 'ops@pc', reason: 'newer' }), {
        id: 'conflict_body_pruned',
        message: /retention has pruned its bytes/,
      });
      assert.deepEqual(listConflicts(core.agentDb)[0]!.bodies.map((b) => b.state), ['pending', 'conflict'], 'nothing changed');
      // The first body, whose bytes are kept while it waits, can be kept.
      assert.equal(keepConflictBody(core.agentDb, core.tillDb, { locationId: 80, changeSequence: 5, keep: waiting.inboxId, actor: 'ops@pc', reason: 'the first' }).keptState, 'pending');
    } finally {
      core.close();
    }
  });

  it('compares the bodies and keeps the later one through the CLI; it is applied when its chain allows', () => {
    const dir = tempDir();
    const config = writeConfig(dir, { dataDir: path.join(dir, 'data'), sync: { baselineSettleSeconds: 0 } });
    const file = (name: string, raw: Buffer): string => {
      const p = path.join(dir, name);
      fs.writeFileSync(p, raw);
      return p;
    };
    const cli = (...args: string[]) => spawnSync(process.execPath, [path.join(REPO_ROOT, 'bin', 'pos-sync-agent.cjs'), ...args, '--config', config], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(cli('import', file('base.json', body(60, 1, 0, 1))).status, 0);
    assert.equal(cli('import', file('first.json', body(60, 3, 2, 3))).status, 0);
    const resent = cli('import', file('later.json', body(60, 3, 2, 3.25)));
    assert.match(resent.stdout, /: conflict\./);
    assert.match(cli('status').stdout, /1 update was received again with different content \(not applied\): compare with `pos-sync-agent conflicts --config \S+config\.json`/, "the hint carries the --config that reaches this site");

    const list = cli('conflicts');
    assert.equal(list.status, 0, list.stderr);
    assert.match(list.stdout, /Update 60:3: 2 different bodies\n {2}#2 {2}received first .* {2}waiting\n {2}#3 {2}received later .* {2}not applied \(conflict\)/);
    const compare = cli('conflicts', '60:3');
    assert.equal(compare.status, 0, compare.stderr);
    assert.match(compare.stdout, /--- #2 \(received first\)\n\+\+\+ #3 \(received later\)/);
    assert.match(compare.stdout, /\n- +"SellPrice": 3\n\+ +"SellPrice": 3\.25\n/);

    const noReason = cli('resolve-conflict', '60:3', '--keep', 'later');
    assert.equal(noReason.status, 2);
    const kept = cli('resolve-conflict', '60:3', '--keep', 'later', '--reason', 'head office says the resend is right');
    assert.equal(kept.status, 0, kept.stderr);
    assert.match(kept.stdout, /Kept #3 of update 60:3; dropped #2\.\nIt waits for its turn/);
    assert.match(cli('conflicts').stdout, /No conflicting updates\./);
    // The missing parent arrives: the kept body is the one applied.
    assert.match(cli('import', file('parent.json', body(60, 2, 1, 2))).stdout, /Applied location 60 ChangeSequence 3/);
    assert.match(cli('lookup', '--plu', '1001', '--location', '60', '--date', '2026-06-01').stdout, /Eat In: 3\.25 GBP/);
    const again = cli('--json', 'resolve-conflict', '60:3', '--keep', 'first', '--reason', 'changed my mind');
    assert.equal(again.status, 1);
    assert.equal((JSON.parse(again.stderr) as { error: { id: string } }).error.id, 'no_conflict');
  });
});

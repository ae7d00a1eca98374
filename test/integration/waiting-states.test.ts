import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { openReadOnly, storeFilePath } from '../../src/store/database';
import { runCli, writeConfig, type CliResult } from '../helpers/child-agent';
import { item, price, tempDir, update } from '../helpers/fixtures';

/**
 * What `status` (a real CLI process on a real data folder) says about updates not applied yet:
 * queued ones are not gaps (also after a stop in the middle of an apply), a gap is named once with
 * the missing update, updates skipped because a later baseline was adopted are listed with why, and
 * updates for a location the site is not configured for are stored, not applied.
 */

const cli = (config: string, args: string[], env: NodeJS.ProcessEnv = {}): CliResult => runCli(config, args, { env });

function file(dir: string, name: string, body: unknown): string {
  const f = path.join(dir, name);
  fs.writeFileSync(f, JSON.stringify(body));
  return f;
}

const items = (n: number, pence: number): Record<string, unknown>[] =>
  Array.from({ length: n }, (_, i) => item(String(100 + i), `IT-${i}`, [price('2026-12-01', '2027-12-31', 'Eat In', `${pence}.${String(i % 100).padStart(2, '0')}`)]));

interface StatusJson {
  severity: { light: string; reasons: { id: string; light: string; text: string }[]; locations: { locationId: number; label: string; lines: string[] }[] };
  locations: { locationId: number; siteRole: string; waiting: { changeSequence: number; reason: string; missing: number | null }[]; notApplied: { changeSequence: number; why: string }[] }[];
  neverReceived: { locationId: number }[];
}

describe('waiting states in `status`', () => {
  it('after a stop in the middle of an apply, calls the resumable update queued, not a gap', () => {
    const dir = tempDir();
    const config = writeConfig(dir, { dataDir: path.join(dir, 'data'), sync: { baselineSettleSeconds: 0 } });
    assert.equal(cli(config, ['import', file(dir, 'a.json', update(42, 100, 99, items(5, 3)))]).status, 0);
    // Killed with every row written and nothing committed: what a Ctrl-C (or a power cut) mid-apply leaves.
    const killed = cli(config, ['import', file(dir, 'b.json', update(42, 101, 100, items(200, 4)))], { POS_SYNC_TEST_CRASH_AT: 'apply-before-commit:1' });
    assert.equal(killed.status, null, 'the import was killed mid-apply');
    const text = cli(config, ['status']);
    assert.equal(text.status, 0, text.stderr);
    assert.doesNotMatch(text.stdout, /gap|waiting:|needs .* first|has not arrived/, text.stdout);
    assert.match(text.stdout, /1 update is queued and not on the till yet \(next: update 101\); it is applied when the agent runs again\./);
    assert.match(text.stdout, /Location 42.* — NOT ON THE TILL YET\n/);
    const json = JSON.parse(cli(config, ['status', '--json']).stdout) as StatusJson;
    assert.deepEqual(json.locations[0]!.waiting.map((w) => [w.changeSequence, w.reason, w.missing]), [[101, 'queued', null]]);
  });

  it('after a first apply cut short (nothing on the till), does not call the location up to date', () => {
    const dir = tempDir();
    const config = writeConfig(dir, { dataDir: path.join(dir, 'data'), sync: { baselineSettleSeconds: 0 } });
    const killed = cli(config, ['import', file(dir, 'a.json', update(42, 34300, 34299, items(200, 3)))], { POS_SYNC_TEST_CRASH_AT: 'apply-before-commit:1' });
    assert.equal(killed.status, null, 'the import was killed mid-apply');
    const text = cli(config, ['status']);
    assert.equal(text.status, 0, text.stderr);
    assert.doesNotMatch(text.stdout, /UP TO DATE|up to date/i, text.stdout);
    assert.match(text.stdout, /Location 42.* — NOT ON THE TILL YET\n/, text.stdout);
    assert.match(text.stdout, /Nothing is on the till yet: 1 update is queued \(next: update 34300\); it is applied when the agent runs again\./);
    const json = JSON.parse(cli(config, ['status', '--json']).stdout) as StatusJson;
    assert.equal(json.severity.light, 'red', 'no agent runs');
    assert.ok(json.severity.reasons.some((r) => r.id === 'location:42' && r.light === 'amber'), JSON.stringify(json.severity.reasons));
  });

  it('names a gap once, with the missing update, however many updates wait behind it', () => {
    const dir = tempDir();
    const config = writeConfig(dir, { dataDir: path.join(dir, 'data'), sync: { baselineSettleSeconds: 0 } });
    assert.equal(cli(config, ['import', file(dir, 'a.json', update(42, 100, 99, items(2, 3)))]).status, 0);
    for (const n of [102, 103, 104]) assert.equal(cli(config, ['import', file(dir, `${n}.json`, update(42, n, n - 1, items(2, 3)))]).status, 0);
    const out = cli(config, ['status']).stdout;
    // Once in the location's block (the headline above it summarises the same reason).
    const block = out.slice(out.indexOf('\nLocation 42'));
    assert.equal((block.match(/Update 101 has not arrived from head office/g) ?? []).length, 1, out);
    assert.match(out, /3 later updates wait for it/);
    const json = JSON.parse(cli(config, ['status', '--json']).stdout) as StatusJson;
    assert.deepEqual(json.locations[0]!.waiting.map((w) => w.missing), [101, 101, 101]);
  });

  it('lists an update not applied because a later one had become the baseline, with why', () => {
    const dir = tempDir();
    const config = writeConfig(dir, { dataDir: path.join(dir, 'data'), sync: { baselineSettleSeconds: 0 } });
    assert.equal(cli(config, ['import', file(dir, 'b.json', update(42, 101, 100, items(2, 4)))]).status, 0);
    assert.equal(cli(config, ['import', file(dir, 'a.json', update(42, 100, 99, items(2, 3)))]).status, 0);
    const out = cli(config, ['status']).stdout;
    assert.match(out, /Not applied, by design: update 100 \(received [^)]*\): it arrived after update 101 had been applied \(or adopted as this location's starting point\), and applying it would undo newer prices\./, out);
    const json = JSON.parse(cli(config, ['status', '--json']).stdout) as StatusJson;
    assert.deepEqual(json.locations[0]!.notApplied.map((n) => n.changeSequence), [100]);
  });

  it('with locations configured, stores another location\'s update as not for this site, and shows a configured one that never received anything', () => {
    const dir = tempDir();
    const dataDir = path.join(dir, 'data');
    const config = writeConfig(dir, { dataDir, locations: { '3021': { name: 'Riverside' }, '3050': {} }, sync: { baselineSettleSeconds: 0 } });
    assert.equal(cli(config, ['import', file(dir, 'a.json', update(3021, 10, 9, items(2, 3)))]).status, 0);
    assert.equal(cli(config, ['import', file(dir, 'b.json', update(3000, 10, 9, items(2, 3)))]).status, 0);
    const till = openReadOnly(storeFilePath(dataDir, 'till'));
    try {
      assert.equal((till.prepare('SELECT count(*) AS n FROM pos_prices WHERE location_id = 3000').get() as { n: number }).n, 0, 'nothing of 3000 reached the till');
      assert.ok((till.prepare('SELECT count(*) AS n FROM pos_prices WHERE location_id = 3021').get() as { n: number }).n > 0);
    } finally {
      till.close();
    }
    const out = cli(config, ['status']).stdout;
    assert.match(out, /Location 3000 — NOT FOR THIS SITE/);
    assert.match(out, /Not for this site: location 3000 is not in this site's configured locations, so its updates are stored but not applied to the till \(1 update stored\)/);
    assert.match(out, /Location 3050 — NOTHING RECEIVED/);
    const json = JSON.parse(cli(config, ['status', '--json']).stdout) as StatusJson;
    assert.equal(json.locations.find((l) => l.locationId === 3000)!.siteRole, 'other');
    assert.deepEqual(json.neverReceived.map((n) => n.locationId), [3050]);
    assert.ok(json.severity.reasons.some((r) => r.id === 'never:3050' && r.light === 'amber'));
    // force-apply refuses it too: adding it to `locations` is the way.
    const forced = cli(config, ['force-apply', '3000:10', '--reason', 'try']);
    assert.notEqual(forced.status, 0);
    assert.match(forced.stderr, /not one of this site's configured locations/);

    // The site allows other locations: the stored update is applied on the next run.
    const open = writeConfig(dir, { dataDir, locations: { '3021': { name: 'Riverside' } }, sync: { baselineSettleSeconds: 0, acceptOtherLocations: true } });
    assert.equal(cli(open, ['import', file(dir, 'c.json', update(3021, 11, 10, items(2, 3)))]).status, 0);
    const after = JSON.parse(cli(open, ['status', '--json']).stdout) as StatusJson;
    assert.equal(after.locations.find((l) => l.locationId === 3000)!.siteRole, 'open');
    assert.deepEqual(after.locations.find((l) => l.locationId === 3000)!.waiting, []);
  });
});

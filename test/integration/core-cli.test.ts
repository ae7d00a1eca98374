import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { runCli, withChildAgent, writeConfig, type CliResult } from '../helpers/child-agent';
import { samplePath, tempDir } from '../helpers/fixtures';

const cli = (config: string, ...args: string[]): CliResult => runCli(config, args);

describe('the CLI', () => {
  it('imports the samples out of order, shows the gap, fills it, and answers lookups', () => {
    const dir = tempDir();
    const config = writeConfig(dir, { dataDir: path.join(dir, 'data') });
    const sample = samplePath;

    assert.equal(cli(config, 'import', sample('01')).status, 0);
    const third = cli(config, 'import', sample('03'));
    assert.equal(third.status, 0);
    assert.match(third.stdout, /Not applied yet/);
    const waiting = cli(config, 'status');
    assert.match(waiting.stdout, /last applied ChangeSequence 1041/);
    assert.match(waiting.stdout, /gap: update 3021:1043 \(received [^)]*\) needs update 1042, which has not arrived/);
    const statusJson = JSON.parse(cli(config, 'status', '--json').stdout) as { locations: { waiting: { waitingFor: number }[] }[] };
    assert.equal(statusJson.locations[0]!.waiting[0]!.waitingFor, 1042);
    // What the till answers meanwhile says that 1043 is sent but not on the till (src/domain/wording.ts).
    const gapNote = 'Head office has sent 1 update for this location that is not on the till yet: it waits for update 1042, which has not arrived (a gap in the chain). This is what the till has now, and it may change once it is applied.';
    assert.ok(cli(config, 'lookup', '--plu', '1001', '--location', '3021').stdout.includes(`Location 3021: ${gapNote}\n`));
    const gapJson = JSON.parse(cli(config, 'lookup', '--plu', '1001', '--json').stdout) as { notYetOnTill: unknown };
    assert.deepEqual(gapJson.notYetOnTill, [{ locationId: 3021, note: gapNote }]);
    assert.ok(cli(config, 'changes', '--location', '3021').stdout.includes(`\n  ${gapNote}\n`));
    assert.ok(!cli(config, 'changes', '--location', '9').stdout.includes(gapNote));

    const second = cli(config, 'import', sample('02'));
    assert.match(second.stdout, /Applied location 3021 ChangeSequence 1043/);
    assert.ok(!cli(config, 'lookup', '--plu', '1001', '--location', '3021').stdout.includes('not on the till yet'));
    assert.deepEqual((JSON.parse(cli(config, 'lookup', '--plu', '1001', '--json').stdout) as { notYetOnTill: unknown }).notYetOnTill, []);

    const christmas = JSON.parse(cli(config, 'lookup', '--plu', '1001', '--location', '3021', '--date', '2026-12-25', '--json').stdout) as {
      date: string; items: { prices: { tariffName: string; sellPrice: string; sellPriceMinor: number; taxCode: string; taxRate: number }[]; availability: { mealPeriod: string; status: string }[] }[];
    };
    assert.equal(christmas.date, '2026-12-25');
    assert.deepEqual(christmas.items[0]!.prices.map((p) => [p.tariffName, p.sellPrice, p.sellPriceMinor, p.taxCode, p.taxRate]), [
      ['Eat In', '15.00', 1500, 'S', 20],
      ['Take Away', '10.95', 1095, 'S', 20],
    ]);
    assert.deepEqual(christmas.items[0]!.availability, [{ mealPeriod: 'Breakfast', status: 'AVAILABLE', dateFrom: '2026-12-01', dateTo: '2027-02-28' }]);
    const text = cli(config, 'lookup', '--plu', '2040', '--date', '2027-01-05');
    assert.match(text.stdout, /Dinner: UNAVAILABLE {2}\(2027-01-04\.\.2027-01-10\)/);
    // Before its first price, in the window's words (src/domain/wording.ts tillDayNotes).
    const before = cli(config, 'lookup', '--plu', '1001', '--location', '3021', '--date', '2026-11-20').stdout;
    assert.match(before, /\n {2}No price on 2026-11-20: the till cannot sell this item that day\.\n {2}No meal periods set for 2026-11-20\.\n/);
    assert.match(cli(config, 'deliveries').stdout, /3021 {2}1043 {2}\d+ B {2}applied/);
  });

  it('force-applies across a gap with a reason, and refuses without one', () => {
    const dir = tempDir();
    const config = writeConfig(dir, { dataDir: path.join(dir, 'data') });
    const sample = samplePath;
    cli(config, 'import', sample('01'));
    cli(config, 'import', sample('03'));
    const noReason = cli(config, 'force-apply', '2');
    assert.equal(noReason.status, 2);
    assert.match(noReason.stderr, /--reason is required/);
    const forced = cli(config, 'force-apply', '2', '--reason', 'support says 1042 is lost');
    assert.equal(forced.status, 0, forced.stderr);
    assert.match(forced.stdout, /Force-applied update 3021:1043 \(location 3021 ChangeSequence 1043\)/);
    const again = cli(config, 'force-apply', '2', '--reason', 'again');
    assert.equal(again.status, 1);
    assert.match(again.stderr, /is applied; only a waiting update can be force-applied \[not_pending\]/);
  });

  it('exits 4 and keeps the body when an imported payload is refused; 2 for usage errors', () => {
    const dir = tempDir();
    const config = writeConfig(dir, { dataDir: path.join(dir, 'data') });
    const bad = path.join(dir, 'bad.json');
    fs.writeFileSync(bad, JSON.stringify({ LocationID: 1, ChangeSequence: 2 }));
    const refused = cli(config, 'import', bad);
    assert.equal(refused.status, 4);
    assert.match(refused.stdout, /Refused: ParentChangeSequence: is required \(kept as quarantine #1\)/);
    assert.equal(cli(config, 'lookup').status, 2);
    assert.equal(cli(config, 'lookup', '--plu', '1', '--date', '25/12/2026').status, 2);
    assert.equal(cli(config, 'no-such-command').status, 2);
    assert.equal(cli(config, 'status', '--bogus').status, 2);
  });

  it('deliveries: says the history is empty rather than printing nothing; a bad --limit is a usage error first', async () => {
    const dir = tempDir();
    const config = writeConfig(dir, { dataDir: path.join(dir, 'data'), webhook: { port: 0 }, admin: { enabled: false } });
    // Before any data: the argument is checked before the data folder.
    const bad = cli(config, 'deliveries', '--limit', 'ten');
    assert.equal(bad.status, 2, bad.stderr);
    assert.match(bad.stderr, /--limit takes a whole number/);
    await withChildAgent(config, async () => undefined);
    const empty = cli(config, 'deliveries');
    assert.equal(empty.status, 0, empty.stderr);
    assert.match(empty.stdout, /\nNo deliveries in the history \(it keeps them for retention\.deliveryDays\)\.\n$/);
  });
});

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { addDays, todayIn } from '../../src/domain/dates';
import { runCli, writeConfig, type CliResult } from '../helpers/child-agent';
import { item, price, schedule, tempDir, update } from '../helpers/fixtures';

/**
 * `pos-sync-agent changes` in its own process over a real data folder: the example, a burger
 * going from 11.50 to 12.00 on a Monday and breakfast stopping at the weekend.
 */
const cli = (config: string, ...args: string[]): CliResult => runCli(config, args);

function setUp(): string {
  const dir = tempDir('pos-sync-changes-');
  const config = writeConfig(dir, { dataDir: path.join(dir, 'data'), defaultTimezone: 'Europe/London' });
  const write = (name: string, body: unknown): string => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, JSON.stringify(body));
    return file;
  };
  // The menu as published: burger 11.50 in both tariffs, breakfast and lunch every day.
  const first = update(3021, 1, 0, [
    item(1001, 'burger', [price('2030-01-01', '9999-12-31', 'Eat in', '11.50'), price('2030-01-01', '9999-12-31', 'Take away', '10.95')], [], { ItemName: 'Cheeseburger' }),
    item(3001, 'breakfast', [price('2030-01-01', '9999-12-31', 'Eat in', '8.00')], [schedule('2030-01-01', '9999-12-31', 'Breakfast')], { ItemName: 'Full breakfast' }),
  ]);
  // Head office's next update: 12.00 eat-in from Monday 3 June 2030; no breakfast on Sat 8th and Sun 9th.
  const second = update(3021, 2, 1, [
    item(1001, 'burger', [price('2030-06-03', '9999-12-31', 'Eat in', '12.00')], [], { ItemName: 'Cheeseburger' }),
    item(3001, 'breakfast', [], [schedule('2030-06-08', '2030-06-09', 'Breakfast', 'UNAVAILABLE')], { ItemName: 'Full breakfast' }),
  ]);
  assert.equal(cli(config, 'import', write('1.json', first)).status, 0);
  assert.equal(cli(config, 'import', write('2.json', second)).status, 0);
  return config;
}

describe('pos-sync-agent changes', () => {
  it('lists each date a price or meal period changes, with before, after and the update that did it (--json)', () => {
    const config = setUp();
    const run = cli(config, 'changes', '--location', '3021', '--from', '2030-05-30', '--days', '14', '--json');
    assert.equal(run.status, 0, run.stderr);
    const changes = JSON.parse(run.stdout) as Record<string, unknown>[];
    const brief = changes.map((c) => [c.date, c.plu, c.itemName, c.kind, c.tariffName ?? c.mealPeriod, c.before, c.after, (c.cause as { changeSequence: number } | null)?.changeSequence]);
    assert.deepEqual(brief, [
      ['2030-06-03', '1001', 'Cheeseburger', 'price', 'Eat in', '11.50', '12.00', 2],
      ['2030-06-08', '3001', 'Full breakfast', 'availability', 'Breakfast', 'AVAILABLE', 'UNAVAILABLE', 2],
      // Breakfast returns on Monday because update 2 ended the weekend there (it wrote the range from the 10th).
      ['2030-06-10', '3001', 'Full breakfast', 'availability', 'Breakfast', 'UNAVAILABLE', 'AVAILABLE', 2],
    ]);
    // Every field the issue asks for, with money as text.
    const first = changes[0]!;
    for (const key of ['date', 'locationId', 'itemId', 'plu', 'itemName', 'kind', 'tariffName', 'mealPeriod', 'before', 'after']) assert.ok(key in first, key);
    assert.equal(first.locationId, 3021);
    assert.equal(first.itemId, 'burger');
    assert.equal(typeof first.before, 'string');
    assert.equal(first.currency, 'GBP');

    // A window inside unchanged ranges has no changes; a window that starts on the change day has it.
    assert.deepEqual(JSON.parse(cli(config, 'changes', '--from', '2030-06-04', '--days', '4', '--json').stdout), []);
    const onTheDay = JSON.parse(cli(config, 'changes', '--from', '2030-06-03', '--days', '1', '--json').stdout) as { date: string }[];
    assert.deepEqual(onTheDay.map((c) => c.date), ['2030-06-03']);
  });

  it('prints them by day for a manager, starts at the location\'s today by default, and refuses bad arguments', () => {
    const config = setUp();
    const text = cli(config, 'changes', '--from', '2030-05-30');
    assert.equal(text.status, 0, text.stderr);
    assert.match(text.stdout, /^Location 3021, 2030-05-30 to 2030-06-12: 3 changes$/m);
    assert.match(text.stdout, /^Mon 2030-06-03\n {2}PLU 1001 {2}Cheeseburger {2}Eat in: 11\.50 -> 12\.00 GBP {2}\(ChangeSequence 2, applied /m);
    assert.match(text.stdout, /^Sat 2030-06-08\n {2}PLU 3001 {2}Full breakfast {2}Breakfast: AVAILABLE -> UNAVAILABLE/m);

    const today = todayIn('Europe/London');
    const byDefault = cli(config, 'changes', '--days', '3');
    assert.equal(byDefault.status, 0, byDefault.stderr);
    const window = new RegExp(`^Location 3021, (${today}|${addDays(today, 1)}) to `, 'm');
    assert.match(byDefault.stdout, window, 'the window starts on the location\'s today');

    for (const bad of [['--from', '30/05/2030'], ['--days', '0'], ['--days', 'x'], ['--location', 'L']]) {
      const refused = cli(config, 'changes', ...bad);
      assert.equal(refused.status, 2, `${bad.join(' ')}: ${refused.stdout}${refused.stderr}`);
    }
  });
});

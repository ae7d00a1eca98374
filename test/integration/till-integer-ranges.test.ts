import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { startAdminAgent } from '../helpers/admin';
import { REPO_ROOT, writeConfig } from '../helpers/child-agent';
import { item, price, tempDir, update } from '../helpers/fixtures';

/**
 * Issue 28, case 1: the till file's integer columns hold 64-bit values, but a till that reads them into
 * 32-bit integers (Debian's SQLite ODBC driver does by default) wraps anything past 2,147,483,647. An
 * update that carries such a value is stored as sent and warned about, where the site looks: the
 * status window and `pos-sync-agent status`. And the connection option that reads the values right
 * (docs/pos-database.md, "Integer ranges") does, where the default does not.
 */

const PYTHON = fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';

/** Rows of a query through unixODBC and libsqliteodbc, with `options` added to the connection string. */
function odbc(db: string, options: string, sql: string): (string | null)[][] {
  const probe = spawnSync(PYTHON, ['-c', 'import pyodbc'], { encoding: 'utf8' });
  assert.equal(probe.status, 0, `python3-pyodbc is needed for this check: sudo apt-get install -y python3-pyodbc unixodbc libsqliteodbc (${probe.stderr.trim().split('\n').pop()})`);
  const r = spawnSync(PYTHON, [path.join(__dirname, '..', 'helpers', 'odbc-read.py'), db, options, sql], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as (string | null)[][];
}

const WIDE_LOCATION = 2_147_483_648;
const WIDE_SEQUENCE = 4_294_967_296;

async function siteWithWideValues(): Promise<{ t: Awaited<ReturnType<typeof startAdminAgent>>; config: string; dataDir: string }> {
  const dir = tempDir('pos-sync-int32-');
  const dataDir = path.join(dir, 'data');
  const config = writeConfig(dir, { dataDir, defaultTimezone: 'Europe/London' });
  const t = await startAdminAgent({ dataDir, defaultTimezone: 'Europe/London' });
  // Prices at the 32-bit edge and past it, and the largest price the file takes (2^53 - 1 pence).
  const prices = update(7, 1, 0, [
    item(1, 'edge', [price('2027-01-01', '2027-12-31', 'Eat In', '21474836.47')]),
    item(2, 'past', [price('2027-01-01', '2027-12-31', 'Eat In', '21474836.48')]),
    item(3, 'largest', [price('2027-01-01', '2027-12-31', 'Eat In', '90071992547409.91')]),
  ]);
  // A location and a ChangeSequence past 32 bits.
  const wide = update(WIDE_LOCATION, WIDE_SEQUENCE, WIDE_SEQUENCE - 1, [item(1, 'small', [price('2027-01-01', '2027-12-31', 'Eat In', '1.00')])]);
  for (const body of [prices, wide]) assert.equal((await t.post(body)).status, 200);
  await t.settle();
  return { t, config, dataDir };
}

const PAST = 'ScheduledItems[1].PriceUpdates[0].SellPrice';
const LARGEST = 'ScheduledItems[2].PriceUpdates[0].SellPrice';
const WARNINGS_7 = [
  { path: PAST, message: 'SellPrice 21474836.48 (2147483648 minor units) is beyond 2147483647, the largest 32-bit integer; stored, but a till that reads sell_price_minor as a 32-bit integer misreads it' },
  { path: LARGEST, message: 'SellPrice 90071992547409.91 (9007199254740991 minor units) is beyond 2147483647, the largest 32-bit integer; stored, but a till that reads sell_price_minor as a 32-bit integer misreads it' },
];
const WARNINGS_WIDE = [
  { path: 'LocationID', message: 'LocationID 2147483648 is beyond 2147483647, the largest 32-bit integer; stored, but a till that reads location_id as a 32-bit integer misreads it' },
  {
    path: 'ChangeSequence',
    message: 'ChangeSequence 4294967296 is beyond 2147483647, the largest 32-bit integer; stored, but a till that reads pos_sync_state.last_change_sequence or pos_changes.change_sequence as a 32-bit integer misreads it',
  },
];

describe('values past what a 32-bit reader holds', () => {
  it('are stored as sent, and warned about in the status window and in `status`', async () => {
    const { t, config } = await siteWithWideValues();
    const stored = t.agent.core.tillDb.prepare('SELECT item_id, sell_price_minor, sell_price FROM pos_prices WHERE location_id = 7 ORDER BY item_id').raw().all();
    assert.deepEqual(stored, [['edge', 2147483647, '21474836.47'], ['largest', 9007199254740991, '90071992547409.91'], ['past', 2147483648, '21474836.48']]);
    const state = t.agent.core.tillDb.prepare('SELECT location_id, last_change_sequence, warnings FROM pos_sync_state ORDER BY location_id').raw().all();
    assert.deepEqual(state, [[7, 1, 2], [WIDE_LOCATION, WIDE_SEQUENCE, 2]]);

    // The window: GET /api/status is what its location cards and their warnings list are drawn from.
    const res = await fetch(new URL('/api/status', t.adminUrl), { headers: { authorization: `Bearer ${t.token}` } });
    assert.equal(res.status, 200);
    const locations = ((await res.json()) as { locations: { locationId: number; warnings: number; recentWarnings: { path: string; message: string; changeSequence: number }[] }[] }).locations;
    const shown = (id: number): unknown => {
      const l = locations.find((x) => x.locationId === id)!;
      return { warnings: l.warnings, listed: l.recentWarnings.map((w) => ({ path: w.path, message: w.message })).sort((a, b) => (a.path < b.path ? -1 : 1)) };
    };
    assert.deepEqual(shown(7), { warnings: 2, listed: WARNINGS_7 });
    assert.deepEqual(shown(WIDE_LOCATION), { warnings: 2, listed: [...WARNINGS_WIDE].sort((a, b) => (a.path < b.path ? -1 : 1)) });

    // The Deliveries tab: each applied delivery says how many warnings it left.
    const deliveries = await fetch(new URL('/api/deliveries', t.adminUrl), { headers: { authorization: `Bearer ${t.token}` } });
    const rows = ((await deliveries.json()) as { deliveries: { locationId: number; result: string; warnings: number }[] }).deliveries;
    assert.deepEqual(rows.map((d) => [d.locationId, d.result, d.warnings]).sort((a, b) => Number(a[0]) - Number(b[0])), [[7, 'applied', 2], [WIDE_LOCATION, 'applied', 2]]);

    // `pos-sync-agent status` and `deliveries`, in their own process over the same data folder.
    const run = (command: string): string => {
      const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'bin', 'pos-sync-agent.cjs'), command, '--config', config], { encoding: 'utf8', timeout: 60_000 });
      assert.equal(r.status, 0, r.stderr);
      return r.stdout;
    };
    assert.match(run('deliveries'), new RegExp(`  ${WIDE_LOCATION}  ${WIDE_SEQUENCE}  \\d+ B  applied with 2 warnings \\(see status\\)$`, 'm'));
    const cli = { stdout: run('status') };
    for (const w of [...WARNINGS_7.map((w) => ({ ...w, seq: 1 })), ...WARNINGS_WIDE.map((w) => ({ ...w, seq: WIDE_SEQUENCE }))]) {
      assert.ok(cli.stdout.includes(`[change ${w.seq}] ${w.path}: ${w.message}`), `${w.path} in:\n${cli.stdout}`);
    }
  });

  it('ODBC with BigInt=1 reads them as stored; with the driver\'s defaults they wrap', async () => {
    const { dataDir } = await siteWithWideValues();
    const db = path.join(dataDir, 'pos-sync.db');
    const prices = 'SELECT item_id, sell_price_minor FROM pos_prices WHERE location_id = 7 ORDER BY item_id';
    const state = 'SELECT location_id, last_change_sequence FROM pos_sync_state ORDER BY location_id';
    assert.deepEqual(odbc(db, ';BigInt=1', prices), [['edge', '2147483647'], ['largest', '9007199254740991'], ['past', '2147483648']]);
    assert.deepEqual(odbc(db, ';BigInt=1', state), [['7', '1'], [String(WIDE_LOCATION), String(WIDE_SEQUENCE)]]);
    // What a till reading with the defaults gets: the low 32 bits, as a signed number.
    assert.deepEqual(odbc(db, '', prices), [['edge', '2147483647'], ['largest', '-1'], ['past', '-2147483648']]);
    assert.deepEqual(odbc(db, '', state), [['7', '1'], ['-2147483648', '0']]);
  });
});

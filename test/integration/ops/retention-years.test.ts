import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { addDays, type IsoDate } from '../../../src/domain/dates';
import { checkSetConsistency } from '../../../src/ops/backup/consistency';
import { pruneDatabase, retentionCutoffs } from '../../../src/ops/retention';
import type { Db } from '../../../src/store/database';
import { Inbox } from '../../../src/store/inbox';
import { closeStore, openStore } from '../../../src/store/store';
import { Applier } from '../../../src/sync/applier';
import { pruneRangeBatch } from '../../../src/sync/range-prune';
import { tempDir, testConfig } from '../../helpers/fixtures';

/**
 * Issue 30: everything the agent keeps has a retention rule, so five years of daily updates leave the
 * files no larger than four years did. The history starts in 2021 and runs on a simulated clock
 * through the agent's own inbox, applier and retention (weekly, with the default periods); what
 * retention must never remove (a waiting update, an unresolved conflict, the latest applied update
 * and its record, open warnings) is checked at the end.
 */

const LOCATION = 21;
const ITEMS = 12;
const START = '2021-01-01' as IsoDate;
const YEARS = 5;

const header = (n: number): Record<string, unknown> => ({ PLU: String(500 + n), ItemID: `K${n}`, ItemName: `Dish ${n}`, ItemType: 'RECIPE' });
const price = (from: IsoDate, to: IsoDate, tariff: string, minor: number): Record<string, unknown> => ({
  DateFrom: from,
  DateTo: to,
  TariffName: tariff,
  PriceModel: 'Standard',
  TaxCode: 'S',
  TaxRate: 20,
  SellPrice: minor / 100,
});

function count(db: Db, table: string): number {
  return (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
}

function usedBytes(db: Db): number {
  return ((db.pragma('page_count', { simple: true }) as number) - (db.pragma('freelist_count', { simple: true }) as number)) * (db.pragma('page_size', { simple: true }) as number);
}

const TABLES = {
  till: ['price_ranges', 'availability_ranges', 'applied_updates', 'item_changes'],
  agent: ['inbox', 'inbox_bodies', 'deliveries', 'update_warnings', 'audit_log'],
} as const;

describe('retention over years of history', () => {
  it('sizes level off, and what the chain and the operator need is kept', async () => {
    const dataDir = tempDir('pos-sync-retention-years-');
    const config = testConfig({ dataDir });
    let today: IsoDate = START;
    const clock = (): Date => new Date(`${today}T12:00:00Z`);
    const store = openStore(dataDir);
    const inbox = new Inbox(store.agent);
    const applier = new Applier(store.till, store.agent, 'auto', {}, 0, null, () => clock().getTime());
    let sequence = 1;
    const deliver = (items: Record<string, unknown>[], change = sequence + 1, parent = sequence, source: 'webhook' | 'import' = 'webhook'): number => {
      const body = { ChangeSequence: change, ParentChangeSequence: parent, LocationID: LOCATION, LocationName: 'Years', CurrencyIsoCode: 'GBP', ScheduledItems: items };
      const outcome = inbox.receive({ raw: Buffer.from(JSON.stringify(body)), sender: 'test', source, contentType: 'application/json', receivedAt: clock() });
      assert.equal(outcome.kind, 'stored');
      applier.drain();
      applier.refreshTillCounters();
      return outcome.kind === 'stored' ? outcome.inboxId : 0;
    };
    const menu = (from: IsoDate, to: IsoDate, minor: number): Record<string, unknown>[] =>
      Array.from({ length: ITEMS }, (_, n) => ({
        ...header(n),
        PriceUpdates: ['Eat In', 'Take Away'].map((t) => price(from, to, t, minor + n)),
        ScheduleUpdates: [{ DateFrom: from, DateTo: to, Status: 'AVAILABLE', MealPeriodName: 'Lunch' }],
      }));
    const snapshots: { day: number; rows: Record<string, number>; tillBytes: number; agentBytes: number }[] = [];
    const snapshot = (day: number): void => {
      store.till.pragma('wal_checkpoint(TRUNCATE)');
      store.agent.pragma('wal_checkpoint(TRUNCATE)');
      const rows: Record<string, number> = {};
      for (const t of TABLES.till) rows[t] = count(store.till, t);
      for (const t of TABLES.agent) rows[t] = count(store.agent, t);
      snapshots.push({ day, rows, tillBytes: usedBytes(store.till), agentBytes: usedBytes(store.agent) });
    };
    const prune = () =>
      pruneDatabase(
        { agent: store.agent, ranges: async (request) => pruneRangeBatch(store.till, request) },
        retentionCutoffs(config.retention, [{ locationId: LOCATION, timezone: 'UTC' }], clock()),
        config.retention.batchSize,
      );

    try {
      // The first menu, imported (a webhook baseline would wait for the settle period on the real clock).
      deliver(menu(START, addDays(START, 364), 300), sequence + 1, sequence, 'import');
      sequence += 1;
      // An update whose parent never arrives: it waits for ever, and must stay.
      const waiting = deliver(menu(START, addDays(START, 30), 999), 900_000, 899_999);
      // Update 5 arrives with another body later: an unresolved conflict, kept with its first body.
      let conflictFirst = 0;
      let conflictOther = 0;
      const days = YEARS * 365;
      for (let day = 1; day <= days; day++) {
        today = addDays(START, day);
        const n = day % ITEMS;
        const items =
          day % 30 === 0
            ? menu(addDays(today, 1), addDays(today, 365), 300 + (day % 7))
            : [{ ...header(n), PriceUpdates: [price(addDays(today, 3), addDays(today, 3), 'Eat In', 400 + (day % 50))], ScheduleUpdates: [] }];
        // Every tenth update carries an element the applier skips with a warning.
        if (day % 10 === 0) (items[0]!.PriceUpdates as unknown[]).push({ ...price(today, today, 'Eat In', 1), DateFrom: 'soon' });
        const id = deliver(items);
        sequence += 1;
        if (sequence === 5) conflictFirst = id;
        if (day === 20) {
          const other = { ChangeSequence: 5, ParentChangeSequence: 4, LocationID: LOCATION, LocationName: 'Years', CurrencyIsoCode: 'GBP', ScheduledItems: [header(0)] };
          const outcome = inbox.receive({ raw: Buffer.from(JSON.stringify(other)), sender: 'test', source: 'webhook', contentType: 'application/json', receivedAt: clock() });
          assert.ok(outcome.kind === 'stored' && outcome.decision === 'conflict');
          conflictOther = outcome.kind === 'stored' ? outcome.inboxId : 0;
        }
        // The manager acknowledges the warnings every fortnight (as acknowledgeWarnings does, at the simulated time).
        if (day % 14 === 0) {
          store.agent.prepare('UPDATE update_warnings SET acknowledged_at = ? WHERE acknowledged_at IS NULL').run(clock().toISOString());
          store.agent.prepare("INSERT INTO audit_log (at, actor, action, details) VALUES (?, 'manager', 'acknowledge-warnings', '{}')").run(clock().toISOString());
        }
        if (day % 7 === 0) await prune();
        if (day % 365 === 0) snapshot(day);
      }
      await prune();

      // Levelling off: the fifth year ends with what the fourth did (every period, the audit log's
      // three years included, is full by then), and the second year already holds most of it.
      const [, year2, , year4, year5] = snapshots;
      for (const table of [...TABLES.till, ...TABLES.agent]) {
        const grew = year5!.rows[table]! - year4!.rows[table]!;
        assert.ok(grew <= Math.max(10, year4!.rows[table]! * 0.05), `${table} grew by ${grew} in the fifth year: ${snapshots.map((s) => s.rows[table]).join(' -> ')}`);
      }
      assert.ok(year5!.tillBytes <= year4!.tillBytes * 1.05, `till file: ${snapshots.map((s) => s.tillBytes).join(' -> ')}`);
      assert.ok(year5!.agentBytes <= year4!.agentBytes * 1.05, `agent file: ${snapshots.map((s) => s.agentBytes).join(' -> ')}`);
      // The history was long enough to matter: without the rules the inbox alone would hold every update.
      assert.ok(year5!.rows.inbox! < days / 3, `inbox rows ${year5!.rows.inbox}`);
      assert.ok(year2!.rows.audit_log! < year5!.rows.audit_log!, 'the audit log is kept longer than a year');

      // Never removed: the waiting update, both bodies of the conflict, the latest applied update and its record, open warnings.
      const state = (id: number): string | undefined => (store.agent.prepare('SELECT state FROM inbox WHERE id = ?').get(id) as { state: string } | undefined)?.state;
      assert.equal(state(waiting), 'pending');
      assert.equal(state(conflictFirst), 'applied');
      assert.equal(state(conflictOther), 'conflict');
      const last = store.till.prepare('SELECT last_change_sequence AS s FROM locations WHERE location_id = ?').get(LOCATION) as { s: number };
      assert.equal(last.s, sequence);
      assert.equal(count(store.till, `applied_updates WHERE location_id = ${LOCATION} AND change_sequence = ${sequence}`), 1);
      assert.equal(count(store.agent, `inbox WHERE location_id = ${LOCATION} AND change_sequence = ${sequence} AND state = 'applied'`), 1);
      // A warning nobody acknowledges keeps its update's row past every period (its delivery rows go).
      today = addDays(today, 1);
      const warned = deliver([{ ...header(1), PriceUpdates: [{ ...price(today, today, 'Eat In', 1), DateFrom: 'soon' }], ScheduleUpdates: [] }]);
      sequence += 1;
      deliver([{ ...header(2), PriceUpdates: [price(addDays(today, 1), addDays(today, 1), 'Eat In', 777)], ScheduleUpdates: [] }]);
      sequence += 1;
      today = addDays(today, config.retention.updateDays + config.retention.deliveryDays);
      await prune();
      assert.equal(state(warned), 'applied');
      assert.equal(count(store.agent, `update_warnings WHERE inbox_id = ${warned} AND acknowledged_at IS NULL`), 1);
      assert.equal(count(store.agent, `deliveries WHERE inbox_id = ${warned}`), 0);
      assert.equal(state(waiting), 'pending');
      assert.equal(state(conflictOther), 'conflict');
      assert.equal(count(store.agent, 'update_warnings w WHERE NOT EXISTS (SELECT 1 FROM inbox i WHERE i.id = w.inbox_id)'), 0);
      // The two files still make a backup set: agent.db keeps rows (the warned update, the conflict's
      // first body) whose till records are gone, all older than the location's last apply.
      assert.deepEqual(checkSetConsistency(store.till.name, store.agent.name).problems, []);
      // And the chain goes on: the next update applies after years of pruning.
      deliver([{ ...header(3), PriceUpdates: [price(addDays(today, 1), addDays(today, 1), 'Eat In', 778)], ScheduleUpdates: [] }]);
      assert.equal((store.till.prepare('SELECT last_change_sequence AS s FROM locations WHERE location_id = ?').get(LOCATION) as { s: number }).s, sequence + 1);
      assert.equal(count(store.till, 'applied_updates'), 2, 'the latest applied record, and the one just applied');
    } finally {
      closeStore(store);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

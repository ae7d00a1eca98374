import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { toDayNumber, type IsoDate } from '../../src/domain/dates';
import { upcomingChangesFor } from '../../src/till/changes';
import { startAdminAgent } from '../helpers/admin';
import { startTestAgent } from '../helpers/agent';
import { REPO_ROOT, writeConfig } from '../helpers/child-agent';
import { dayArb, dayRangeArb, edgeHits, FIRST_DAY, isoOf, LAST_DAY } from '../helpers/date-arbitraries';
import { item, price, schedule, tempDir, update } from '../helpers/fixtures';

/**
 * Issue 28, case 2: `pos-sync-agent changes --from D --days N` (and the window's Coming up tab, the
 * same computation) keeps its window inside the date domain, 0001-01-01..9999-12-31. A window that
 * ran past 9999-12-31 used to come back empty, dropping the changes inside it too.
 */

interface Edit {
  readonly kind: 'price' | 'availability';
  readonly from: number;
  readonly to: number;
  readonly value: number;
}

function lastDaysArb(): fc.Arbitrary<number> {
  return fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 20 }));
}

/** Ranges over the whole domain (edges weighted), and ranges in the last days of it, where windows run past the end. */
const rangeArb = fc.oneof(
  { weight: 3, arbitrary: dayRangeArb },
  // Days before the last, with 0 weighted so a range often starts on 9999-12-31 itself (a change on the last day).
  { weight: 1, arbitrary: fc.tuple(lastDaysArb(), lastDaysArb()).map(([a, b]) => ({ from: LAST_DAY - Math.max(a, b), to: LAST_DAY - Math.min(a, b) })) },
);

const editArb: fc.Arbitrary<Edit> = fc.record({ kind: fc.constantFrom('price' as const, 'availability' as const), range: rangeArb, value: fc.integer({ min: 0, max: 3 }) }).map((e) => ({ kind: e.kind, from: e.range.from, to: e.range.to, value: e.value }));

/** A window: anywhere in the domain, at a boundary of the ranges sent (just before it), or near the last day. */
interface WindowSpec {
  readonly anchor: 'day' | 'boundary' | 'end' | 'start';
  readonly day: number;
  readonly pick: number;
  readonly offset: number;
  readonly days: number;
}

const windowArb: fc.Arbitrary<WindowSpec> = fc.record({
  anchor: fc.constantFrom('day' as const, 'boundary' as const, 'boundary' as const, 'end' as const, 'start' as const),
  day: dayArb,
  pick: fc.nat(),
  offset: fc.oneof(fc.integer({ min: 0, max: 10 }), fc.integer({ min: 0, max: 400 })),
  days: fc.oneof(fc.constantFrom(1, 2, 7, 8, 14, 366), fc.integer({ min: 1, max: 366 })),
});

function windowStart(w: WindowSpec, boundaries: readonly number[]): number {
  if (w.anchor === 'day') return w.day;
  if (w.anchor === 'start') return Math.min(LAST_DAY, FIRST_DAY + (w.offset % 11));
  if (w.anchor === 'end') return LAST_DAY - (w.offset % 11);
  return Math.max(FIRST_DAY, boundaries[w.pick % boundaries.length]! - (w.offset % 11));
}

function body(locationId: number, seq: number, edits: readonly Edit[]): unknown {
  const money = (v: number): string => `${v + 1}.00`;
  return update(locationId, seq, seq - 1, [
    item(
      1001,
      'A',
      edits.filter((e) => e.kind === 'price').map((e) => price(isoOf(e.from), isoOf(e.to), 'Eat In', money(e.value))),
      edits.filter((e) => e.kind === 'availability').map((e) => schedule(isoOf(e.from), isoOf(e.to), 'Lunch', e.value % 2 === 0 ? 'AVAILABLE' : 'UNAVAILABLE')),
    ),
  ]);
}

interface Change {
  readonly date: string;
  readonly kind: string;
  readonly before: string | null;
  readonly after: string | null;
}

/**
 * The model, from what the till reads: the rows of pos_prices and pos_availability for the key. A
 * change is a date whose value differs from the day before's (nothing before 0001-01-01).
 */
function modelChanges(rows: readonly { kind: string; from: string; to: string; value: string }[]): Change[] {
  const changes: Change[] = [];
  for (const kind of ['price', 'availability']) {
    const mine = rows.filter((r) => r.kind === kind);
    const at = (iso: string | null): string | null => (iso === null ? null : (mine.find((r) => r.from <= iso && iso <= r.to)?.value ?? null));
    const candidates = new Set<string>();
    for (const r of mine) {
      candidates.add(r.from);
      if (r.to !== isoOf(LAST_DAY)) candidates.add(isoOf(toDayNumber(r.to as IsoDate) + 1));
    }
    for (const date of candidates) {
      const before = at(date === isoOf(FIRST_DAY) ? null : isoOf(toDayNumber(date as IsoDate) - 1));
      const after = at(date);
      if (before !== after) changes.push({ date, kind, before, after });
    }
  }
  return changes.sort(byDateKind);
}

function byDateKind(a: Change, b: Change): number {
  return a.date < b.date ? -1 : a.date > b.date ? 1 : a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0;
}

describe('changes over the whole date domain', () => {
  it('lists exactly the changes inside the window, cut at 9999-12-31, for any start and length (property, through the webhook)', async () => {
    const t = await startTestAgent();
    let location = 100;
    const sent: { from: number; to: number }[] = [];
    const hits = { startsOnFirstDay: 0, runsPastLastDay: 0, pastLastDayWithChanges: 0, changeOnFirstDay: 0, changeOnLastDay: 0, feb29InWindow: 0 };
    const prices = t.agent.core.tillDb.prepare<[number], { from: string; to: string; value: string }>(
      "SELECT date_from AS [from], date_to AS [to], sell_price AS value FROM pos_prices WHERE location_id = ? AND item_id = 'A' AND tariff_name = 'Eat In'",
    );
    const availability = t.agent.core.tillDb.prepare<[number], { from: string; to: string; value: string }>(
      "SELECT date_from AS [from], date_to AS [to], status AS value FROM pos_availability WHERE location_id = ? AND item_id = 'A' AND meal_period = 'Lunch'",
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(editArb, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 3 }), fc.array(windowArb, { minLength: 4, maxLength: 12 }), async (updates, windows) => {
        const locationId = ++location;
        for (const [i, edits] of updates.entries()) {
          assert.equal((await t.post(body(locationId, i + 1, edits))).status, 200);
          sent.push(...edits);
        }
        await t.settle();
        const rows = [...prices.all(locationId).map((r) => ({ ...r, kind: 'price' })), ...availability.all(locationId).map((r) => ({ ...r, kind: 'availability' }))];
        const all = modelChanges(rows);
        const boundaries = updates.flat().flatMap((e) => [e.from, Math.min(LAST_DAY, e.to + 1)]);
        for (const w of windows) {
          const from = windowStart(w, boundaries);
          const end = Math.min(from + w.days - 1, LAST_DAY);
          const want = all.filter((c) => c.date >= isoOf(from) && c.date <= isoOf(end));
          const result = upcomingChangesFor(t.agent.core, { locationId, from: isoOf(from), days: w.days });
          const got = result.changes.map((c): Change => ({ date: c.date, kind: c.kind, before: c.before, after: c.after })).sort(byDateKind);
          assert.deepEqual(got, want, `--from ${isoOf(from)} --days ${w.days}`);
          assert.deepEqual(result.windows, [{ locationId, from: isoOf(from), to: isoOf(end) }]);
          if (from === FIRST_DAY) hits.startsOnFirstDay++;
          if (from + w.days - 1 > LAST_DAY) {
            hits.runsPastLastDay++;
            if (want.length > 0) hits.pastLastDayWithChanges++;
          }
          if (want.some((c) => c.date === isoOf(FIRST_DAY))) hits.changeOnFirstDay++;
          if (want.some((c) => c.date === isoOf(LAST_DAY))) hits.changeOnLastDay++;
          for (let d = from; d <= Math.min(end, from + 400); d++) {
            if (isoOf(d).endsWith('-02-29')) {
              hits.feb29InWindow++;
              break;
            }
          }
        }
      }),
      { numRuns: 40 },
    );
    // The generators reach the ends of the domain and 29 February, in what was sent and in the windows asked.
    const sentHits = edgeHits(sent);
    for (const key of ['firstDay', 'lastDay', 'feb29', 'wholeDomain'] as const) assert.ok((sentHits[key] ?? 0) > 0, `sent ranges reach ${key}: ${JSON.stringify(sentHits)}`);
    for (const [key, n] of Object.entries(hits)) assert.ok(n > 0, `windows reach ${key}: ${JSON.stringify(hits)}`);
  });

  it('the issue\'s case, in `pos-sync-agent changes` and the Coming up tab: a change on 9999-12-28 is listed by a window that runs past 9999-12-31', async () => {
    const dir = tempDir('pos-sync-changes-end-');
    const dataDir = path.join(dir, 'data');
    const config = writeConfig(dir, { dataDir, defaultTimezone: 'Europe/London' });
    const t = await startAdminAgent({ dataDir, defaultTimezone: 'Europe/London' });
    const first = update(5, 1, 0, [item(1001, 'A', [price('2030-01-01', '9999-12-27', 'Eat In', '11.50'), price('9999-12-28', '9999-12-31', 'Eat In', '12.00')])]);
    assert.equal((await t.post(first)).status, 200);
    await t.settle();
    const cli = (...args: string[]): { status: number | null; stdout: string; stderr: string } =>
      spawnSync(process.execPath, [path.join(REPO_ROOT, 'bin', 'pos-sync-agent.cjs'), 'changes', ...args, '--config', config], { encoding: 'utf8', timeout: 60_000 });
    for (const days of ['3', '4', '7', '8', '366']) {
      const run = cli('--from', '9999-12-25', '--days', days, '--json');
      assert.equal(run.status, 0, run.stderr);
      const listed = (JSON.parse(run.stdout) as { date: string; before: string; after: string }[]).map((c) => [c.date, c.before, c.after]);
      assert.deepEqual(listed, days === '3' ? [] : [['9999-12-28', '11.50', '12.00']], `--days ${days}`);
    }
    const text = cli('--from', '9999-12-25', '--days', '8');
    assert.match(text.stdout, /^Location 5, 9999-12-25 to 9999-12-31: 1 change$/m);
    // A first date before the domain is refused, naming it.
    const before = cli('--from', '0000-12-31', '--days', '8');
    assert.equal(before.status, 2);
    assert.match(before.stderr, /--from takes a date YYYY-MM-DD from 0001-01-01 to 9999-12-31/);

    // The Coming up tab's API: the same window, cut at the end.
    const res = await fetch(new URL('/api/changes?location=5&from=9999-12-25&days=8', t.adminUrl), { headers: { authorization: `Bearer ${t.token}` } });
    assert.equal(res.status, 200);
    const reply = (await res.json()) as { windows: unknown[]; changes: { date: string }[] };
    assert.deepEqual(reply.windows, [{ locationId: 5, from: '9999-12-25', to: '9999-12-31' }]);
    assert.deepEqual(reply.changes.map((c) => c.date), ['9999-12-28']);
    const refused = await fetch(new URL('/api/changes?location=5&from=0000-12-31&days=8', t.adminUrl), { headers: { authorization: `Bearer ${t.token}` } });
    assert.equal(refused.status, 400);
  });
});

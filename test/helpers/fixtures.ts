import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after } from 'node:test';
import { parseConfig } from '../../src/config/load';
import type { Config } from '../../src/config/schema';

/** The specification's sample updates, kept in the repo so a clone's tests need nothing beside it. */
export const SAMPLES_DIR = path.join(__dirname, '..', 'fixtures', 'menu-cycles');

/** The three sample updates (test/fixtures/menu-cycles), in chain order, as raw bytes. */
export function sampleBodies(): { name: string; raw: Buffer }[] {
  return fs
    .readdirSync(SAMPLES_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((name) => ({ name, raw: fs.readFileSync(path.join(SAMPLES_DIR, name)) }));
}

/** The sample body whose file name starts with `prefix` (e.g. '01'). */
export function samplePath(prefix: string): string {
  return path.join(SAMPLES_DIR, fs.readdirSync(SAMPLES_DIR).find((f) => f.startsWith(prefix))!);
}

/** A fresh temporary folder, removed when the test file finishes. */
export function tempDir(prefix = 'pos-sync-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A validated config for tests: data in a temp dir, servers on free loopback ports. */
export function testConfig(overrides: Record<string, unknown> = {}): Readonly<Config> {
  const dataDir = (overrides.dataDir as string | undefined) ?? tempDir();
  // Tests adopt a new location's baseline at once unless they test the settle delay itself.
  const base = { dataDir, webhook: { port: 0 }, admin: { port: 0 }, sync: { pollIntervalMs: 200, baselineSettleSeconds: 0 } };
  return parseConfig(deepMergePlain(base, overrides));
}

function deepMergePlain(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const existing = out[k];
    out[k] =
      typeof v === 'object' && v !== null && !Array.isArray(v) && typeof existing === 'object' && existing !== null && !Array.isArray(existing)
        ? deepMergePlain(existing as Record<string, unknown>, v as Record<string, unknown>)
        : v;
  }
  return out;
}

/** Builds a menu cycle update body. */
export function update(
  locationId: number | string,
  changeSequence: number,
  parentChangeSequence: number,
  items: unknown[],
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    ChangeSequence: changeSequence,
    ParentChangeSequence: parentChangeSequence,
    LocationID: locationId,
    LocationName: `Location ${locationId}`,
    CurrencyIsoCode: 'GBP',
    ScheduledItems: items,
    ...extra,
  };
}

export function item(plu: string | number, itemId: string | number, prices: unknown[] = [], schedule: unknown[] = [], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { PLU: plu, ItemID: itemId, ItemName: `Item ${itemId}`, ItemType: 'RECIPE', PriceUpdates: prices, ScheduleUpdates: schedule, ...extra };
}

export function price(from: string, to: string, tariff: string, sell: number | string, taxCode = 'S', taxRate = 20): Record<string, unknown> {
  return { DateFrom: from, DateTo: to, TariffName: tariff, PriceModel: 'Standard', TaxCode: taxCode, TaxRate: taxRate, SellPrice: sell };
}

export function schedule(from: string, to: string, meal: string, status: 'AVAILABLE' | 'UNAVAILABLE' = 'AVAILABLE'): Record<string, unknown> {
  return { DateFrom: from, DateTo: to, Status: status, MealPeriodName: meal };
}

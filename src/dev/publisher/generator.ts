import { dateOf, dayOf } from './days';
import { Prng } from './prng';

/**
 * Generates realistic menu cycle updates the way head office publishes them (spec sections 1-3): per
 * location a first long-range publication of every sellable item, then shorter edits (one-day price
 * changes, UNAVAILABLE ranges, restored availability, new items), chained by
 * ChangeSequence/ParentChangeSequence. Identifiers come as numbers or strings (the spec accepts both),
 * PLUs are sometimes shared by two items, tariffs carry different tax codes, and some items have
 * prices but no meal periods. Everything is derived from the seed.
 */

export interface TariffSpec {
  readonly name: string;
  readonly taxCode: string;
  readonly taxRate: number;
}

export const TARIFFS: readonly TariffSpec[] = [
  { name: 'Eat In', taxCode: 'S', taxRate: 20 },
  { name: 'Take Away', taxCode: 'Z', taxRate: 0 },
  { name: 'Delivery', taxCode: 'S', taxRate: 20 },
  { name: 'Staff', taxCode: 'R', taxRate: 5 },
];

export const MEAL_PERIODS: readonly string[] = ['Breakfast', 'Lunch', 'Dinner', 'All Day'];

/** Minor digits of the currencies the simulator uses (ISO 4217), kept here so the reference model stays independent. */
export const CURRENCY_DIGITS: Readonly<Record<string, number>> = { GBP: 2, EUR: 2, JPY: 0, KWD: 3 };

export interface GeneratorOptions {
  readonly seed: number;
  readonly locations: number;
  /** Updates per location, the first publication included. */
  readonly updatesPerLocation: number;
  readonly itemsPerLocation: number;
  /** How many of TARIFFS each item is priced on (1..4). */
  readonly tariffs?: number;
  /** How many of MEAL_PERIODS exist (1..4). */
  readonly mealPeriods?: number;
  /** 'all': every item is scheduled in every meal period (benchmarks); 'some': a realistic subset. */
  readonly scheduling?: 'all' | 'some';
  /** The first publication splits each tariff and meal period into this many date ranges. */
  readonly rangesPerKey?: number;
  /** First day of the first publication (YYYY-MM-DD). */
  readonly startDate: string;
  /** Length of the first publication in days. */
  readonly days: number;
  /** Items touched by one edit (inclusive range). */
  readonly editItems?: readonly [number, number];
  readonly firstLocationId?: number;
  /** Currencies to spread over the locations (default GBP only). */
  readonly currencies?: readonly string[];
  /** Share of items whose PLU repeats the previous item's (PLUs are not unique). */
  readonly sharedPluRate?: number;
}

export interface GeneratedUpdate {
  readonly locationId: number;
  readonly changeSequence: number;
  readonly parentChangeSequence: number;
  /** 0 for the first publication. */
  readonly index: number;
  readonly body: Record<string, unknown>;
}

export interface LocationChain {
  readonly locationId: number;
  readonly locationName: string;
  readonly currency: string;
  readonly updates: readonly GeneratedUpdate[];
}

interface CatalogueItem {
  itemId: string | number;
  plu: number;
  name: string;
  type: 'RECIPE' | 'MENU';
  tariffs: TariffSpec[];
  mealPeriods: string[];
  basePriceMinor: number;
}

function sellPrice(minor: number, digits: number, rng: Prng): number | string {
  const value = minor / 10 ** digits;
  // Mostly JSON numbers with decimals (as in the samples), sometimes decimal strings.
  return rng.chance(0.1) ? value.toFixed(digits) : Number(value.toFixed(digits));
}

function identifier(value: string | number, rng: Prng): string | number {
  // The spec types identifiers as integers, the samples send strings: send both.
  if (typeof value === 'number' && rng.chance(0.5)) return String(value);
  return value;
}

function cutPoints(first: number, last: number, pieces: number, rng: Prng): [number, number][] {
  const total = last - first + 1;
  const n = Math.max(1, Math.min(pieces, total));
  const cuts = new Set<number>();
  while (cuts.size < n - 1) cuts.add(first + rng.int(1, total - 1));
  const starts = [first, ...[...cuts].sort((a, b) => a - b)];
  return starts.map((s, i) => [s, i + 1 < starts.length ? (starts[i + 1] as number) - 1 : last]);
}

class LocationGenerator {
  private readonly catalogue: CatalogueItem[] = [];
  private readonly tariffs: TariffSpec[];
  private readonly periods: string[];
  private readonly digits: number;
  private readonly firstDay: number;
  private readonly lastDay: number;

  constructor(
    private readonly options: GeneratorOptions,
    readonly locationId: number,
    readonly currency: string,
    private readonly rng: Prng,
  ) {
    this.tariffs = TARIFFS.slice(0, Math.max(1, Math.min(TARIFFS.length, options.tariffs ?? 2)));
    this.periods = MEAL_PERIODS.slice(0, Math.max(1, Math.min(MEAL_PERIODS.length, options.mealPeriods ?? 3)));
    this.digits = CURRENCY_DIGITS[currency] ?? 2;
    this.firstDay = dayOf(options.startDate);
    this.lastDay = this.firstDay + Math.max(1, options.days) - 1;
    for (let i = 0; i < options.itemsPerLocation; i++) this.catalogue.push(this.newItem(i));
  }

  private newItem(index: number): CatalogueItem {
    const rng = this.rng;
    const sharedRate = this.options.sharedPluRate ?? 0.05;
    const previous = this.catalogue[this.catalogue.length - 1];
    const plu = previous && rng.chance(sharedRate) ? previous.plu : 1000 + index;
    const itemId = index % 2 === 0 ? `${this.locationId}-${String(index).padStart(5, '0')}` : this.locationId * 1_000_000 + index;
    const all = this.options.scheduling === 'all';
    // Retail items (drinks, snacks) are priced but not tied to meal periods.
    const retail = !all && rng.chance(0.15);
    const mealPeriods = all ? [...this.periods] : retail ? [] : rng.shuffle([...this.periods]).slice(0, rng.int(1, this.periods.length));
    const scale = 10 ** this.digits;
    return {
      itemId,
      plu,
      name: `${retail ? 'Retail' : 'Dish'} ${index}`,
      type: rng.chance(0.1) ? 'MENU' : 'RECIPE',
      tariffs: [...this.tariffs],
      mealPeriods,
      basePriceMinor: this.digits === 0 ? rng.int(3, 40) * 100 : rng.int(150, 3000) * (scale / 100),
    };
  }

  private itemHeader(item: CatalogueItem): Record<string, unknown> {
    return { PLU: identifier(item.plu, this.rng), ItemID: identifier(item.itemId, this.rng), ItemName: item.name, ItemType: item.type };
  }

  private price(from: number, to: number, tariff: TariffSpec, minor: number): Record<string, unknown> {
    return {
      DateFrom: dateOf(from),
      DateTo: dateOf(to),
      TariffName: tariff.name,
      PriceModel: 'Standard',
      TaxCode: tariff.taxCode,
      TaxRate: tariff.taxRate,
      SellPrice: sellPrice(minor, this.digits, this.rng),
    };
  }

  private schedule(from: number, to: number, period: string, status: 'AVAILABLE' | 'UNAVAILABLE'): Record<string, unknown> {
    return { DateFrom: dateOf(from), DateTo: dateOf(to), Status: status, MealPeriodName: period };
  }

  private vary(minor: number): number {
    const step = this.digits === 0 ? 10 : 10 ** Math.max(0, this.digits - 2) * 5;
    return Math.max(step, minor + this.rng.int(-4, 6) * step);
  }

  /** The whole catalogue over long ranges. */
  firstPublication(): Record<string, unknown>[] {
    const pieces = this.options.rangesPerKey ?? 1;
    return this.catalogue.map((item) => this.fullItem(item, this.firstDay, this.lastDay, pieces));
  }

  private fullItem(item: CatalogueItem, first: number, last: number, pieces: number): Record<string, unknown> {
    const prices: Record<string, unknown>[] = [];
    for (const tariff of item.tariffs) {
      let minor = item.basePriceMinor;
      for (const [from, to] of cutPoints(first, last, pieces, this.rng)) {
        prices.push(this.price(from, to, tariff, minor));
        minor = this.vary(minor);
      }
    }
    const schedule: Record<string, unknown>[] = [];
    for (const period of item.mealPeriods) {
      for (const [from, to] of cutPoints(first, last, pieces, this.rng)) {
        schedule.push(this.schedule(from, to, period, this.rng.chance(0.1) ? 'UNAVAILABLE' : 'AVAILABLE'));
      }
    }
    return { ...this.itemHeader(item), PriceUpdates: prices, ScheduleUpdates: schedule };
  }

  /** A short edit: a few items, one-day to one-week ranges. */
  edit(): Record<string, unknown>[] {
    const rng = this.rng;
    const [min, max] = this.options.editItems ?? [1, 4];
    const out: Record<string, unknown>[] = [];
    if (rng.chance(0.08)) {
      // A new dish joins the menu for the rest of the cycle.
      const item = this.newItem(this.catalogue.length);
      this.catalogue.push(item);
      const from = rng.int(this.firstDay, this.lastDay);
      out.push(this.fullItem(item, from, this.lastDay, 1));
    }
    const chosen = new Set<CatalogueItem>();
    const count = Math.min(this.catalogue.length, rng.int(min, max));
    while (chosen.size < count) chosen.add(rng.pick(this.catalogue));
    for (const item of chosen) {
      if (rng.chance(0.05)) item.name = `${item.name.replace(/ \(v\d+\)$/, '')} (v${rng.int(2, 9)})`;
      const prices: Record<string, unknown>[] = [];
      const schedule: Record<string, unknown>[] = [];
      const edits = rng.int(1, 3);
      for (let e = 0; e < edits; e++) {
        // Mostly inside the published horizon; sometimes just past either end.
        const from = rng.int(this.firstDay - 3, this.lastDay + 3);
        const to = from + (rng.chance(0.5) ? 0 : rng.int(1, 6));
        const kind = rng.next();
        if (kind < 0.45 || item.mealPeriods.length === 0) {
          prices.push(this.price(from, to, rng.pick(item.tariffs), this.vary(item.basePriceMinor)));
        } else if (kind < 0.8) {
          schedule.push(this.schedule(from, to, rng.pick(item.mealPeriods), 'UNAVAILABLE'));
        } else {
          schedule.push(this.schedule(from, to, rng.pick(item.mealPeriods), 'AVAILABLE'));
        }
      }
      out.push({ ...this.itemHeader(item), PriceUpdates: prices, ScheduleUpdates: schedule });
    }
    return out;
  }
}

/** Generates every location's chain. Deterministic for a given options object. */
export function generateChains(options: GeneratorOptions): LocationChain[] {
  const root = new Prng(options.seed);
  const currencies = options.currencies ?? ['GBP'];
  const chains: LocationChain[] = [];
  for (let l = 0; l < options.locations; l++) {
    const rng = root.fork(l + 1);
    const locationId = (options.firstLocationId ?? 3000) + l;
    const currency = currencies[l % currencies.length] as string;
    const locationName = `Site ${locationId}`;
    const generator = new LocationGenerator(options, locationId, currency, rng);
    const updates: GeneratedUpdate[] = [];
    let parent = rng.int(1, 50_000);
    for (let index = 0; index < options.updatesPerLocation; index++) {
      const change = parent + rng.int(1, 3);
      const items = index === 0 ? generator.firstPublication() : generator.edit();
      updates.push({
        locationId,
        changeSequence: change,
        parentChangeSequence: parent,
        index,
        body: {
          ChangeSequence: change,
          ParentChangeSequence: parent,
          LocationID: rng.chance(0.5) ? String(locationId) : locationId,
          LocationName: locationName,
          CurrencyIsoCode: currency,
          ScheduledItems: items,
        },
      });
      parent = change;
    }
    chains.push({ locationId, locationName, currency, updates });
  }
  return chains;
}

/** The bytes head office would send for an update. */
export function encode(update: GeneratedUpdate): Buffer {
  return Buffer.from(JSON.stringify(update.body), 'utf8');
}

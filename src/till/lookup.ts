import { preparedStatement, type Db } from '../store/database';
import type { TillAnswer } from '../store/read-models';

/**
 * The agent's own lookups through the POS views (the status window's "What will the till charge?",
 * `pos-sync-agent lookup`). Each bound value is written `+@name`: the same value, the same plan and
 * the same rows as `@name`, but SQLite's planner does not look at a value behind a unary plus, so a
 * statement kept prepared is not planned again when its binding clears the values between runs (as
 * better-sqlite3 does; docs/pos-database.md, "Prepared lookups", says which forms re-plan on which
 * SQLite, and test/system/lookup-replan.test.ts measures it). The statements are kept prepared with
 * the connection (preparedStatement).
 */
export function lookupStatements(byLocation: boolean): { prices: string; availability: string; items: string } {
  const where = byLocation ? 'AND location_id = +@locationId' : '';
  return {
    prices: `SELECT location_id, plu, item_id, item_name, item_type, tariff_name, price_model, tax_code, tax_rate,
              sell_price_minor, sell_price, currency, date_from, date_to
       FROM pos_prices WHERE plu = +@plu AND +@date BETWEEN date_from AND date_to ${where}
       ORDER BY location_id, item_id, tariff_name`,
    availability: `SELECT location_id, plu, item_id, item_name, meal_period, status, date_from, date_to
       FROM pos_availability WHERE plu = +@plu AND +@date BETWEEN date_from AND date_to ${where}
       ORDER BY location_id, item_id, meal_period`,
    items: `SELECT location_id, plu, item_id, item_name, item_type FROM items WHERE plu = +@plu ${where} ORDER BY location_id, item_id`,
  };
}

/**
 * What the till will charge for a PLU on a date, read through the POS views themselves so the answer
 * is the one the POS gets. Every item with that PLU is listed (PLUs are not unique).
 */
export function lookupPlu(till: Db, plu: string, date: string, locationId: number | null): TillAnswer[] {
  const sql = lookupStatements(locationId !== null);
  const prices = preparedStatement(till, sql.prices)
    .all({ plu, date, ...(locationId === null ? {} : { locationId }) }) as {
    location_id: number; plu: string; item_id: string; item_name: string; item_type: string; tariff_name: string;
    price_model: string | null; tax_code: string; tax_rate: number; sell_price_minor: number; sell_price: string;
    currency: string; date_from: string; date_to: string;
  }[];
  const availability = preparedStatement(till, sql.availability)
    .all({ plu, date, ...(locationId === null ? {} : { locationId }) }) as {
    location_id: number; plu: string; item_id: string; item_name: string; meal_period: string; status: 'AVAILABLE' | 'UNAVAILABLE';
    date_from: string; date_to: string;
  }[];
  const items = preparedStatement(till, sql.items)
    .all({ plu, ...(locationId === null ? {} : { locationId }) }) as { location_id: number; plu: string; item_id: string; item_name: string; item_type: string }[];
  return items.map((i) => ({
    locationId: i.location_id,
    plu: i.plu,
    date,
    itemId: i.item_id,
    itemName: i.item_name,
    itemType: i.item_type,
    prices: prices
      .filter((p) => p.location_id === i.location_id && p.item_id === i.item_id)
      .map((p) => ({
        tariffName: p.tariff_name,
        priceModel: p.price_model,
        taxCode: p.tax_code,
        taxRate: p.tax_rate,
        sellPriceMinor: p.sell_price_minor,
        sellPrice: p.sell_price,
        currency: p.currency,
        dateFrom: p.date_from,
        dateTo: p.date_to,
      })),
    availability: availability
      .filter((a) => a.location_id === i.location_id && a.item_id === i.item_id)
      .map((a) => ({ mealPeriod: a.meal_period, status: a.status, dateFrom: a.date_from, dateTo: a.date_to })),
  }));
}

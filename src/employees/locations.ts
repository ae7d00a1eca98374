import type { Config } from '../config/schema';
import type { Db } from '../store/database';
import { timezoneForCountry } from './views';

/**
 * The webhook's LocationID is the one GET /Locations lists; these read the cached list with any
 * connection to the agent's database (the core's, the CLI's), so status output can name locations
 * and timezones can default from Country.
 */

function cachedRow(db: Db, locationId: number): { description: string; country: string | null } | null {
  try {
    return (db.prepare('SELECT description, country FROM staff_locations WHERE location_id = ?').get(locationId) as { description: string; country: string | null } | undefined) ?? null;
  } catch {
    // A database without the staff tables (not migrated yet, or opened read-only by a tool).
    return null;
  }
}

/** The Description GET /Locations gives this LocationID, or null when not cached. */
export function locationDescription(db: Db, locationId: number): string | null {
  return cachedRow(db, locationId)?.description ?? null;
}

/** The timezone implied by the cached Country of this LocationID, or null (not cached, unknown country). */
export function cachedLocationTimezone(db: Db, locationId: number): string | null {
  return timezoneForCountry(cachedRow(db, locationId)?.country);
}

export interface ResolvedTimezone {
  readonly timezone: string;
  /** config: locations.<id>.timezone; country: from the cached /Locations Country; default: defaultTimezone. */
  readonly source: 'config' | 'country' | 'default';
  /** Why the default was used, when it was. */
  readonly note: string | null;
}

/** The configured timezone, else one from the cached Country, else the default, saying which and why. */
export function resolveLocationTimezone(config: Pick<Config, 'locations' | 'defaultTimezone'>, db: Db, locationId: number): ResolvedTimezone {
  const configured = config.locations[String(locationId)]?.timezone;
  if (configured) return { timezone: configured, source: 'config', note: null };
  const row = cachedRow(db, locationId);
  if (!row) return { timezone: config.defaultTimezone, source: 'default', note: `location ${locationId} is not in the cached /Locations list; using the default timezone ${config.defaultTimezone}` };
  const fromCountry = timezoneForCountry(row.country);
  if (fromCountry) return { timezone: fromCountry, source: 'country', note: null };
  return {
    timezone: config.defaultTimezone,
    source: 'default',
    note: `location ${locationId} has country ${JSON.stringify(row.country ?? '')}, which this agent does not map to a timezone; using the default ${config.defaultTimezone} (set locations.${locationId}.timezone)`,
  };
}

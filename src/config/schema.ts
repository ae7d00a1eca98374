import { z } from 'zod';
import { isValidTimeZone } from '../domain/dates';

/**
 * The one schema for the agent's configuration. Objects are strict, so a misspelt key stops start-up
 * with its name instead of being silently ignored.
 */

const timeZone = z.string().refine(isValidTimeZone, { message: 'not an IANA timezone, e.g. Europe/London' });

const TlsSchema = z.union([
  z.strictObject({ certFile: z.string().min(1), keyFile: z.string().min(1) }),
  z.strictObject({ pfxFile: z.string().min(1), passphrase: z.string().nullable().default(null) }),
]);

export const WebhookSchema = z.strictObject({
  host: z.string().min(1).default('127.0.0.1'),
  /** 0 picks a free port (tests). */
  port: z.number().int().min(0).max(65535).default(8787),
  path: z.string().regex(/^\/[A-Za-z0-9._~/-]*$/, 'must start with / and contain only URL path characters').default('/webhooks/menu-cycles'),
  /** Host name the service sends in `Origin` (bare host or https://host). null: not checked (logged at start-up). */
  expectedOrigin: z.string().min(1).nullable().default(null),
  /** Bearer token configured at webhook registration; null when head office sends none. */
  bearerToken: z.string().min(1).nullable().default(null),
  maxBodyBytes: z.number().int().min(1024).max(1024 * 1024 * 1024).default(64 * 1024 * 1024),
  tls: TlsSchema.nullable().default(null),
  /** Refuse bodies whose Content-Type says they are not JSON (415). A missing Content-Type is accepted. */
  requireJsonContentType: z.boolean().default(true),
  headersTimeoutMs: z.number().int().min(1000).default(20_000),
  requestTimeoutMs: z.number().int().min(1000).default(300_000),
  keepAliveTimeoutMs: z.number().int().min(100).default(5_000),
});

export const LocationSchema = z.strictObject({
  timezone: timeZone.optional(),
  name: z.string().min(1).optional(),
});

export const SyncSchema = z.strictObject({
  /** auto: the first update seen for a location becomes its baseline; operator: it waits for force-apply. */
  baseline: z.enum(['auto', 'operator']).default('auto'),
  /** How often the applier looks for work that another process (the CLI) stored. */
  pollIntervalMs: z.number().int().min(100).default(5_000),
});

export const LogSchema = z.strictObject({
  level: z.enum(['error', 'warn', 'info', 'verbose', 'debug']).default('info'),
  /** Default: <dataDir>/logs */
  dir: z.string().min(1).nullable().default(null),
  maxFileBytes: z.number().int().min(64 * 1024).default(5 * 1024 * 1024),
});

export const AdminSchema = z.strictObject({
  /** Loopback only; the admin server refuses any other address. */
  host: z.enum(['127.0.0.1', '::1']).default('127.0.0.1'),
  port: z.number().int().min(0).max(65535).default(8780),
  enabled: z.boolean().default(true),
});

export const EmployeeAuthSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('none') }),
  z.strictObject({ type: z.literal('bearer'), token: z.string().min(1) }),
  z.strictObject({ type: z.literal('basic'), username: z.string().min(1), password: z.string() }),
  z.strictObject({ type: z.literal('header'), name: z.string().regex(/^[A-Za-z0-9-]+$/), value: z.string().min(1) }),
]);

export const EmployeesSchema = z.strictObject({
  baseUrl: z.url({ protocol: /^https?$/ }),
  organisationId: z.number().int().nonnegative(),
  /** Path prefix of /Divisions, /EmployeeSource and /Locations ("not shown" in the spec). */
  referencePathPrefix: z.string().default(''),
  auth: EmployeeAuthSchema.default({ type: 'none' }),
  timeoutMs: z.number().int().min(100).default(30_000),
  retries: z.number().int().min(0).max(10).default(3),
  retryBaseDelayMs: z.number().int().min(1).default(500),
  syncIntervalMinutes: z.number().min(0).default(60),
  /** Warn of residency-proof expiry this many days ahead. */
  residencyWarningDays: z.number().int().min(0).default(60),
  /** Cached accrual older than this is refetched when online. */
  accrualMaxAgeMinutes: z.number().min(0).default(60),
});

export const ConfigSchema = z.strictObject({
  dataDir: z.string().min(1),
  webhook: WebhookSchema.prefault({}),
  locations: z.record(z.string().regex(/^\d+$/, 'location keys are LocationID numbers'), LocationSchema).default({}),
  defaultTimezone: timeZone.default('Europe/London'),
  sync: SyncSchema.prefault({}),
  log: LogSchema.prefault({}),
  admin: AdminSchema.prefault({}),
  employees: EmployeesSchema.nullable().default(null),
});

export type Config = z.infer<typeof ConfigSchema>;
export type ConfigInput = z.input<typeof ConfigSchema>;

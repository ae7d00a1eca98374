import { z } from 'zod';
import { canonicalZone, timeZoneProblem } from '../domain/timezones';

/**
 * The one schema for the agent's configuration. Objects are strict, so a misspelt key stops start-up
 * with its name instead of being silently ignored.
 */

/** A canonical IANA zone name only: Intl would also take `BST` and read it as Asia/Dhaka (src/domain/timezones.ts). */
const timeZone = z
  .string()
  .superRefine((name, ctx) => {
    const problem = timeZoneProblem(name);
    if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
  })
  .transform(canonicalZone);

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
  /**
   * Allow a webhook reachable from outside (tunnel, TLS or a non-loopback host) without a bearer token.
   * Off: such an agent refuses to start. On: it starts, logs it and shows it red (src/webhook/exposure.ts).
   */
  allowUnauthenticated: z.boolean().default(false),
  maxBodyBytes: z.number().int().min(1024).max(1024 * 1024 * 1024).default(64 * 1024 * 1024),
  /**
   * A body of at least this many bytes is written to a file of its own in <dataDir>/bodies/ as it
   * arrives, never held whole in memory (src/webhook/body.ts, src/store/body-files.ts): from its first
   * byte when it declares its Content-Length and no Content-Encoding, otherwise (chunked, compressed)
   * once what it decodes to reaches this size.
   */
  fileBodyFromBytes: z.number().int().min(64 * 1024).max(1024 * 1024 * 1024).default(1024 * 1024),
  tls: TlsSchema.nullable().default(null),
  /** Refuse bodies whose Content-Type says they are not JSON (415). A missing Content-Type is accepted. */
  requireJsonContentType: z.boolean().default(true),
  headersTimeoutMs: z.number().int().min(1000).default(20_000),
  requestTimeoutMs: z.number().int().min(1000).default(300_000),
  keepAliveTimeoutMs: z.number().int().min(100).default(5_000),
  /**
   * How long a refused call's body (wrong token or Origin, a browser's request, an unknown path) may
   * take to arrive, read and discarded so a proxy in front passes our answer on; then the answer goes
   * out and the connection is closed. Short, so a flood of slow bodies cannot hold connections.
   */
  refusedBodyWaitMs: z.number().int().min(0).max(60_000).default(2_000),
  /**
   * Connections held at once. Beyond it a new connection takes the place of the oldest one that carries
   * no authenticated call (still sending headers, refused, or idle); one carrying a call is never cut.
   */
  maxConnections: z.number().int().min(8).max(100_000).default(1_000),
  /** Bytes of request bodies held in memory at once, over all calls; beyond it a call gets 503 and Retry-After. */
  maxBodyMemoryBytes: z.number().int().min(1024 * 1024).max(4 * 1024 * 1024 * 1024).default(256 * 1024 * 1024),
}).superRefine((webhook, ctx) => {
  // One call holds at most this much of its body in memory: a body of fileBodyFromBytes or more is
  // written to a file as it arrives (a chunked or compressed one once it reaches that size). With a
  // budget below it, such a body would be answered 503 every time it is sent.
  const heldAtMost = Math.min(webhook.maxBodyBytes, webhook.fileBodyFromBytes);
  if (webhook.maxBodyMemoryBytes < heldAtMost) {
    const which = heldAtMost === webhook.fileBodyFromBytes ? 'webhook.fileBodyFromBytes' : 'webhook.maxBodyBytes';
    ctx.addIssue({ code: 'custom', path: ['maxBodyMemoryBytes'], message: `must be at least ${which} (${heldAtMost}), the most of one body held in memory` });
  }
});

export const LocationSchema = z.strictObject({
  timezone: timeZone.optional(),
  name: z.string().min(1).optional(),
});

export const SyncSchema = z.strictObject({
  /** auto: the first update seen for a location becomes its baseline; operator: it waits for force-apply. */
  baseline: z.enum(['auto', 'operator']).default('auto'),
  /**
   * With baseline "auto": how long to collect a new location's first deliveries before adopting the
   * lowest ChangeSequence among them as the baseline. A retried first publication that arrives after a
   * later edit is then still taken as the baseline, instead of being discarded as stale.
   */
  baselineSettleSeconds: z.number().min(0).max(86_400).default(60),
  /** How often the applier looks for work that another process (the CLI) stored. */
  pollIntervalMs: z.number().int().min(100).default(5_000),
  /**
   * "background": applies run below normal CPU priority, so the till reading pos-sync.db and the
   * receiver come first (Linux: the applier's thread; Windows, macOS: the agent's process). "normal":
   * as any other program. src/threads/priority.ts.
   */
  applyPriority: z.enum(['background', 'normal']).default('background'),
  /**
   * With `locations` configured, an update for another location is stored but not applied to the till
   * (shown as "not for this site"). true: apply every location's updates as a site without `locations`
   * does. A location already on the till is applied whatever this says.
   */
  acceptOtherLocations: z.boolean().default(false),
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
  /**
   * With host 127.0.0.1: listen on a loopback address drawn afresh at each start (127.x.y.z), so the
   * window's origin is new each time and nothing a page stored in the browser under an earlier one
   * (served by another program while the agent was stopped) applies to it. false: 127.0.0.1 always.
   */
  newAddressEachStart: z.boolean().default(true),
  enabled: z.boolean().default(true),
  /** File holding the per-install access token (created random, mode 0600). Relative to dataDir. Default: <dataDir>/admin-token */
  tokenFile: z.string().min(1).nullable().default(null),
  /** The HTTPS address head office should call (tunnel or proxy). null: the window shows the local listener's URL. */
  publicWebhookUrl: z.url({ protocol: /^https$/ }).nullable().default(null),
  /** How often the live view looks for changes in the database. */
  liveCheckMs: z.number().int().min(100).max(60_000).default(1000),
  /** An update waiting this long for its parent turns the status light red. */
  gapAlertMinutes: z.number().int().min(1).default(30),
  /** A window session ends after this long without a request (sliding); then the login link is needed again. */
  sessionHours: z.number().min(0.01).max(24 * 30).default(12),
  /** How long a login link (printed by `serve` or `admin-url`) can be used, once. */
  loginLinkMinutes: z.number().min(1).max(7 * 24 * 60).default(15),
  /** A client must send its request headers within this time (slow-client guard). */
  headersTimeoutMs: z.number().int().min(1000).default(20_000),
});

export const TillSchema = z.strictObject({
  /**
   * POSIX: a group (name or numeric gid) that may read the till's file pos-sync.db (and its -wal/-shm);
   * the agent's account must be a member. Windows: a group or account name given read access.
   * null: the till's file is owner-only like everything else.
   */
  readerGroup: z.string().min(1).nullable().default(null),
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
  /** Per attempt, including reading the body. */
  timeoutMs: z.number().int().min(100).default(30_000),
  /** Extra attempts after the first, on network errors, timeouts, 429 and 5xx only. */
  retries: z.number().int().min(0).max(10).default(3),
  /** First back-off delay; doubles per attempt, capped by retryMaxDelayMs, with jitter. */
  retryBaseDelayMs: z.number().int().min(1).default(500),
  /** Cap of a back-off delay; a Retry-After longer than this ends the retries with a rate-limited error. */
  retryMaxDelayMs: z.number().int().min(1).default(30_000),
  /** POST is retried only when it surely was not processed (429, connection refused) unless this is true. */
  retryPost: z.boolean().default(false),
  /** Page through listings with start (offset) and duration (page size); null: one request, no paging. */
  pageSize: z.number().int().min(1).nullable().default(null),
  /** Incremental pulls with delta=true&dateFrom=...; false: always a full pull. */
  deltaSync: z.boolean().default(true),
  /** A full pull at least this often, even when delta pulls work (catches deletions). */
  fullSyncEveryHours: z.number().min(0).default(24),
  /** Query parameter naming the employee on GET .../Employees/Accrual ("not shown" in the spec). */
  accrualEmployeeParam: z.string().min(1).default('employeeId'),
  /** Record fields the spec does not show, by the names this site's service uses. */
  fieldNames: z
    .strictObject({
      employeeNumber: z.string().min(1).default('EmployeeNumber'),
      firstName: z.string().min(1).default('FirstName'),
      lastName: z.string().min(1).default('LastName'),
      /** Preferred name, searched too; absent fields are fine. */
      knownAs: z.string().min(1).default('KnownAs'),
    })
    .prefault({}),
  /** 0 disables the schedule (sync only on demand). */
  syncIntervalMinutes: z.number().min(0).default(60),
  /** Warn of residency-proof expiry this many days ahead. */
  residencyWarningDays: z.number().int().min(0).default(60),
  /** A holiday balance fetched less than this long ago is shown without asking again (0: always live). */
  accrualMaxAgeMinutes: z.number().min(0).default(5),
});

// ---- Operations (issue 6: tunnel, backups, retention, disk, secrets, clock; see docs/operations.md) ----

export const TunnelSchema = z.strictObject({
  /** The tunnel program, e.g. `cloudflared` or `ngrok` (a full path if it is not on PATH). */
  command: z.string().min(1),
  /**
   * Its arguments. `{webhookPort}` and `{webhookUrl}` are replaced by the receiver's actual port and base URL.
   * Name the webhook exactly (`127.0.0.1:{webhookPort}`, `{webhookUrl}`), never `localhost` or a bare port.
   */
  args: z.array(z.string()).default([]),
  /** The public base URL head office calls (without the webhook path); `/healthz` is checked through it. */
  publicUrl: z.url({ protocol: /^https?$/ }),
  /** The tunnel's own secret (cloudflared token, ngrok authtoken): given to the child in `tokenEnv`, never on its command line. */
  token: z.string().min(1).nullable().default(null),
  tokenEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name').default('TUNNEL_TOKEN'),
  /**
   * Names of the agent's environment variables the tunnel program also gets, beyond the base list
   * (PATH, HOME, TEMP, proxies, ...: src/ops/tunnel-process.ts). POS_SYNC_* variables never pass.
   */
  passEnv: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name')).default([]),
  healthCheckIntervalSeconds: z.number().min(0.05).default(60),
  healthCheckTimeoutSeconds: z.number().min(0.05).default(10),
  /** Restart the tunnel after this many failed checks in a row while it runs (0: never restart for that). */
  restartAfterFailedChecks: z.number().int().min(0).default(3),
  restartInitialDelayMs: z.number().int().min(10).default(1_000),
  restartMaxDelayMs: z.number().int().min(10).default(60_000),
  /** Failed checks this soon after a (re)start are not held against it: the program is still connecting. */
  startupGraceSeconds: z.number().min(0).default(30),
  /** A run at least this long resets the back-off. */
  stableAfterSeconds: z.number().min(0).default(60),
  /** The wake-from-sleep detector ticks this often and... */
  wakeCheckIntervalSeconds: z.number().min(0.05).default(10),
  /** ...treats a wall-clock jump this much longer than a tick as the machine waking up (restarts the tunnel). */
  wakeJumpSeconds: z.number().min(0.05).default(30),
  outputLines: z.number().int().min(1).max(10_000).default(200),
  stopTimeoutMs: z.number().int().min(100).default(5_000),
});

export const BackupSchema = z.strictObject({
  enabled: z.boolean().default(true),
  /** Default: <dataDir>/backups (a relative path is taken relative to dataDir). */
  dir: z.string().min(1).nullable().default(null),
  keep: z.number().int().min(1).default(7),
  /** Also copy staff.db (the staff cache, personal data) into each backup. Off: it is a cache the next staff sync refills. */
  includeStaff: z.boolean().default(false),
  /** Machine-local time of the daily backup; a missed one (machine off or asleep) is made as soon as possible. */
  time: z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'HH:MM').default('03:00'),
  /** Instead of daily at `time`: every this many hours. */
  intervalHours: z.number().min(0.001).nullable().default(null),
  checkIntervalMinutes: z.number().min(0.001).default(5),
});

export const RetentionSchema = z.strictObject({
  enabled: z.boolean().default(true),
  /** Raw bodies of applied (and stale or superseded) updates are dropped after this many days; the row stays. */
  rawPayloadDays: z.number().int().min(1).default(30),
  /** Quarantined bodies (and conflicting bodies) are deleted after this many days. */
  quarantineDays: z.number().int().min(1).default(90),
  /**
   * Refused bodies kept byte for byte per day (UTC), in number and in bytes; beyond either (and when
   * keeping one would leave less than disk.criticalFreeBytes free) only the row is kept: size, SHA-256, reason.
   */
  quarantineBodiesPerDay: z.number().int().min(0).default(1_000),
  quarantineBytesPerDay: z.number().int().min(0).default(256 * 1024 * 1024),
  /** Price and availability ranges whose DateTo is more than this many days before today are deleted. */
  rangeDays: z.number().int().min(1).default(365),
  /** Delivery history rows are deleted after this many days. */
  deliveryDays: z.number().int().min(1).default(365),
  /**
   * A finished update's inbox row (applied, stale or superseded) and the till's record of its apply
   * are deleted this many days after it was applied (or received), once no delivery row names it and
   * it has no open warning. Each location's latest applied update, waiting updates and unresolved
   * conflicts are never deleted.
   */
  updateDays: z.number().int().min(1).default(365),
  /** Acknowledged warnings are deleted this many days after they were acknowledged (open ones are kept). */
  warningDays: z.number().int().min(1).default(90),
  /** Audit log entries (operator actions) are deleted after this many days. */
  auditDays: z.number().int().min(1).default(1095),
  pruneIntervalMinutes: z.number().min(0.001).default(60),
  /** Rows per transaction: small, so the applier and webhook never wait long behind a prune. */
  batchSize: z.number().int().min(1).max(100_000).default(500),
});

export const DiskSchema = z.strictObject({
  /** Warn when free space on the data folder's disk falls below this many bytes... */
  warnFreeBytes: z.number().int().min(0).default(2 * 1024 * 1024 * 1024),
  /** ...or below this share of the disk. */
  warnFreePercent: z.number().min(0).max(100).default(5),
  /** Critical (the window shows it red): below this many bytes. */
  criticalFreeBytes: z.number().int().min(0).default(256 * 1024 * 1024),
  checkIntervalMinutes: z.number().min(0.001).default(5),
});

export const SecretsSchema = z.strictObject({
  /** Headless secret file (JSON, owner-only). Default: <dataDir>/secrets.json. */
  file: z.string().min(1).nullable().default(null),
});

export const ClockSchema = z.strictObject({
  /** Warn when the system clock differs from a server's Date header by more than this. */
  maxSkewSeconds: z.number().min(1).default(120),
  checkIntervalMinutes: z.number().min(0.001).default(60),
});

export const MetricsSchema = z.strictObject({
  /**
   * The bearer token a Prometheus scraper sends to GET /metrics on the status window's server (a secret
   * of its own, never the window's token). null: /metrics is off (404).
   */
  bearerToken: z.string().min(16, 'at least 16 characters').nullable().default(null),
  /** Also answer GET /metrics on the webhook's listener, so a scraper can reach it through the tunnel. */
  throughTunnel: z.boolean().default(false),
}).refine((m) => !m.throughTunnel || m.bearerToken !== null, {
  path: ['bearerToken'],
  message: 'metrics.throughTunnel needs a metrics token: pos-sync-agent secrets set metrics.bearerToken',
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
  tunnel: TunnelSchema.nullable().default(null),
  backup: BackupSchema.prefault({}),
  retention: RetentionSchema.prefault({}),
  disk: DiskSchema.prefault({}),
  secrets: SecretsSchema.prefault({}),
  clock: ClockSchema.prefault({}),
  till: TillSchema.prefault({}),
  metrics: MetricsSchema.prefault({}),
});

export type Config = z.infer<typeof ConfigSchema>;
export type ConfigInput = z.input<typeof ConfigSchema>;

/** Which locations are this site's (src/domain/sequence.ts siteRoleOf): the configured ones, unless none are. */
export function sitePolicyOf(config: Pick<Config, 'locations' | 'sync'>): { configured: number[]; acceptOthers: boolean } {
  return { configured: Object.keys(config.locations).map(Number), acceptOthers: config.sync.acceptOtherLocations };
}

import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { AgentService } from '../../../src/agent';
import { utcOffsetMinutes, machineTimezone } from '../../../src/clock';
import { opsServices } from '../../../src/ops/services';
import { RetentionService } from '../../../src/ops/retention';
import { silentLogger } from '../../../src/log';
import { startAdminAgent, type RunningAdminAgent } from '../admin';
import { tempDir, testConfig } from '../fixtures';

/**
 * A real agent with the status window and the real operations services (as `serve` runs them), for
 * the admin API and browser tests. With `tunnel`, the stand-in tunnel (a loopback TCP proxy) is the
 * supervised program; write 'ok', 'die' or 'hang' with `tunnelMode()` to control it.
 */

export const STAND_IN_TUNNEL = path.resolve(__dirname, 'stand-in-tunnel.mjs');

/**
 * How long a health check through the stand-in tunnel may take. The checks run on the test process's
 * main thread, so a short timeout would turn any event-loop stall on a busy machine (SQLite, a
 * backup, another test file) into a failed check and a red banner. A hung tunnel is still reported,
 * one timeout after it hangs.
 */
export const TUNNEL_CHECK_TIMEOUT_SECONDS = 2;

/**
 * Hours between scheduled backups in these agents: far beyond any test run, so the daily 03:00
 * backup cannot add a set while a test counts them. The first backup (none yet: due at start) and
 * "Back up now" work as usual.
 */
const NO_SCHEDULED_BACKUP_HOURS = 100_000;

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((r) => server.close(r));
  return port;
}

export async function until(what: string, predicate: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A timezone whose local time differs from this machine's now (for the clock warning). */
export function zoneDifferentFromMachine(): string {
  const now = new Date();
  const machine = utcOffsetMinutes(machineTimezone(), now);
  return ['Asia/Tokyo', 'America/New_York', 'Pacific/Auckland'].find((z) => utcOffsetMinutes(z, now) !== machine)!;
}

export interface OpsAdminAgent extends RunningAdminAgent {
  /** The stand-in tunnel's control: 'ok' (forwards), 'die' (exits 3), 'hang' (accepts, never answers). */
  tunnelMode(mode: 'ok' | 'die' | 'hang'): void;
  readonly publicUrl: string | null;
}

export async function startOpsAdminAgent(
  overrides: Record<string, unknown> = {},
  options: { tunnel?: Record<string, unknown> | false; retentionClock?: () => Date } = {},
): Promise<OpsAdminAgent> {
  const dataDir = tempDir();
  const control = path.join(tempDir(), 'tunnel-control');
  fs.writeFileSync(control, 'ok');
  let publicUrl: string | null = null;
  const all: Record<string, unknown> = {
    dataDir,
    defaultTimezone: machineTimezone(),
    ...overrides,
    backup: { intervalHours: NO_SCHEDULED_BACKUP_HOURS, ...(overrides.backup as Record<string, unknown> | undefined) },
  };
  if (options.tunnel !== false && options.tunnel !== undefined) {
    const port = await freePort();
    publicUrl = `http://127.0.0.1:${port}`;
    all.tunnel = {
      command: process.execPath,
      args: [STAND_IN_TUNNEL, '--listen', String(port), '--target', '{webhookPort}', '--control', control],
      publicUrl,
      healthCheckIntervalSeconds: 0.2,
      healthCheckTimeoutSeconds: TUNNEL_CHECK_TIMEOUT_SECONDS,
      restartInitialDelayMs: 100,
      restartMaxDelayMs: 400,
      startupGraceSeconds: 5,
      stopTimeoutMs: 2000,
      ...options.tunnel,
    };
  }
  const config = testConfig(all);
  let services: AgentService[] = opsServices(config, silentLogger);
  if (options.retentionClock) {
    // The same service with a clock moved ahead, so data ages without waiting days.
    services = services.map((s) => (s.name === 'retention' ? new RetentionService(config, silentLogger, options.retentionClock) : s));
  }
  const running = await startAdminAgent(all, { services });
  return { ...running, publicUrl, tunnelMode: (mode) => fs.writeFileSync(control, mode) };
}

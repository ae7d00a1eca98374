import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { AdminService, type AdminServiceOptions } from '../../src/admin/service';
import { tokenFilePath } from '../../src/admin/token';
import type { AgentService } from '../../src/agent';
import { silentLogger, type Logger } from '../../src/log';
import { startTestAgent, type RunningTestAgent } from './agent';

const ROOT = path.resolve(__dirname, '..', '..');
export const RENDERER_DIST = path.join(ROOT, 'renderer', 'dist');

/** Builds the renderer once if it is missing (CI builds it before the tests; this covers a direct run). */
export function ensureRendererBuilt(): void {
  if (fs.existsSync(path.join(RENDERER_DIST, 'index.html'))) return;
  const result = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'build-renderer.mjs')], { stdio: 'inherit' });
  if (result.status !== 0) throw new Error('building the renderer failed');
}

export interface RunningAdminAgent extends RunningTestAgent {
  readonly admin: AdminService;
  /** http://HOST:PORT/ (HOST a fresh 127.x.y.z unless admin.newAddressEachStart is off) */
  readonly adminUrl: string;
  readonly adminPort: number;
  /** HOST:PORT, as a browser sends it in `Host`. */
  readonly adminHost: string;
  /** http://HOST:PORT, as a browser sends it in `Origin`. */
  readonly adminOrigin: string;
  /** A new one-time login link each time it is read. */
  readonly loginUrl: string;
  /** The admin token (for `Authorization: Bearer` in API tests). */
  readonly token: string;
}

/** A real agent with the admin service on loopback port 0 (and any extra services, e.g. staff). */
export async function startAdminAgent(
  overrides: Record<string, unknown> = {},
  options: { log?: Logger; services?: AgentService[]; admin?: AdminServiceOptions } = {},
): Promise<RunningAdminAgent> {
  ensureRendererBuilt();
  const admin = new AdminService(options.log ?? silentLogger, options.admin);
  const running = await startTestAgent(overrides, { log: options.log ?? silentLogger, services: [...(options.services ?? []), admin] });
  const adminUrl = admin.url!;
  const token = fs.readFileSync(tokenFilePath(running.config.dataDir, running.config.admin.tokenFile), 'utf8').trim();
  return {
    ...running,
    admin,
    adminUrl,
    adminPort: Number(new URL(adminUrl).port),
    adminHost: new URL(adminUrl).host,
    adminOrigin: new URL(adminUrl).origin,
    // A login link works once: each read mints a new one, as the tray's "Open status window" does.
    get loginUrl() {
      return admin.loginUrl!;
    },
    token,
  };
}

export interface RawResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** A request with full control of headers (fetch forbids setting Host and some others). */
export function rawRequest(url: string, options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<RawResponse> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: u.hostname.replace(/^\[|\]$/g, ''), port: u.port, path: `${u.pathname}${u.search}`, method: options.method ?? 'GET', headers: options.headers ?? {}, setHost: !Object.keys(options.headers ?? {}).some((k) => k.toLowerCase() === 'host') },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

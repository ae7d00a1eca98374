import type { SiteConfig } from '../config/site';
import type { TrayColour } from './policy';

/**
 * Client mode: where a service agent runs for this PC (the machine-wide configuration exists), the
 * desktop app does not start a second agent on it. It shows whether the service answers and opens the
 * service's status window; logging in takes a link from `pos-sync-agent admin-url`, run by an
 * administrator (the access token lives in the service's private data folder, which other accounts
 * on the PC cannot read: that is the point). Nothing here imports Electron, so it is tested under Node.
 */

export interface ServiceEndpoints {
  readonly configFile: string;
  /** The service's status window (loopback). */
  readonly adminUrl: string;
  /** The receiver's health check (loopback): answers while the service runs. */
  readonly healthUrl: string;
}

export type DesktopMode = { readonly kind: 'own' } | { readonly kind: 'client'; readonly service: ServiceEndpoints };

function portOf(section: unknown, fallback: number): number {
  const port = (section as { port?: unknown } | undefined)?.port;
  return typeof port === 'number' && Number.isInteger(port) && port > 0 && port <= 65535 ? port : fallback;
}

function loopbackHost(section: unknown, fallback: string): string {
  const host = (section as { host?: unknown } | undefined)?.host;
  // A receiver on all interfaces is still reached here on loopback.
  if (host === '::1') return '[::1]';
  return host === '127.0.0.1' || host === '0.0.0.0' || host === '::' || host === undefined ? fallback : '127.0.0.1';
}

/** Own agent, or client of the service: decided by the site's configuration alone (config/site.ts). */
export function desktopMode(site: SiteConfig, raw: Record<string, unknown>): DesktopMode {
  if (!site.machine || site.file === null) return { kind: 'own' };
  const admin = raw.admin;
  const webhook = raw.webhook as { path?: unknown } | undefined;
  return {
    kind: 'client',
    service: {
      configFile: site.file,
      adminUrl: `http://${loopbackHost(admin, '127.0.0.1')}:${portOf(admin, 8780)}/`,
      healthUrl: `http://${loopbackHost(webhook, '127.0.0.1')}:${portOf(webhook, 8787)}/healthz`,
    },
  };
}

export type ServiceState = 'running' | 'not-answering';

/** Does the service answer? One loopback request with a short timeout. */
export async function probeService(service: ServiceEndpoints, timeoutMs = 3000): Promise<ServiceState> {
  try {
    const res = await fetch(service.healthUrl, { signal: AbortSignal.timeout(timeoutMs) });
    const body = (await res.json()) as { status?: unknown };
    return res.ok && body.status === 'ok' ? 'running' : 'not-answering';
  } catch {
    return 'not-answering';
  }
}

/** The tray in client mode: it says it is a client, and whether the service answers. */
export function clientTrayState(state: ServiceState | null): { colour: TrayColour; tooltip: string } {
  // Grey, not green: without the service's token this app cannot see its severity, only that it answers.
  if (state === 'running') return { colour: 'grey', tooltip: 'POS Sync Agent — connected to the service agent; open the window for its status' };
  if (state === null) return { colour: 'grey', tooltip: 'POS Sync Agent — looking for the service agent' };
  return { colour: 'red', tooltip: 'POS Sync Agent — the service agent does not answer (Services: POS Sync Agent)' };
}

/** The line the window and tray show on how to log in to the service's window. */
export const CLIENT_LOGIN_HINT = 'Log in with a link from `pos-sync-agent admin-url`, run as an administrator.';

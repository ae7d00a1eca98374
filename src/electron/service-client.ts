import os from 'node:os';
import type { z } from 'zod';
import type { SiteConfig } from '../config/site';
import { AppError } from '../errors';
import { controlEndpoint, LoginLinkReply, SummaryReply } from '../ops/control-protocol';
import { ControlClient } from '../ops/control-request';
import { acceptLoginLink, loginLinkOrigin, trayState, type TrayColour } from './policy';

/**
 * Client mode: where a service agent runs for this PC (the machine-wide configuration exists), the
 * desktop app does not start a second agent on it. It asks the service, over the service's control
 * channel (ops/control-protocol.ts, ops/control-access.ts), for its severity (the tray's colour and
 * tooltip) and for a one-time login link to its status window; pausing and everything else is done in
 * that window. The operating system decides who may open the channel: the service's own account,
 * root / SYSTEM and, on Windows, administrators in an elevated process. For anyone else the channel is
 * refused and the app falls back to the service's health check, with one line on how to get access
 * (docs/operations.md, "Who may see the service's state"). Nothing here imports Electron or opens a
 * database, so it is tested under Node against a real `serve`.
 */

export interface ServiceEndpoints {
  readonly configFile: string;
  /**
   * The configured address of the service's status window server (loopback). With
   * admin.newAddressEachStart that is its front door, not the window: the window is at the address
   * each login link names, drawn afresh at each start.
   */
  readonly adminUrl: string;
  /** The receiver's health check (loopback): answers while the service runs. */
  readonly healthUrl: string;
  /** The service's control channel: its socket (Unix) or named pipe (Windows). */
  readonly control: string;
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

/**
 * Own agent, or client of the service: decided by the site's configuration alone (config/site.ts).
 * `dataDir` is the service's data folder by that configuration (ops/secrets.ts dataDirFor).
 */
export function desktopMode(site: SiteConfig, raw: Record<string, unknown>, dataDir: string, platform: NodeJS.Platform = process.platform): DesktopMode {
  if (!site.machine || site.file === null) return { kind: 'own' };
  const admin = raw.admin;
  const webhook = raw.webhook as { path?: unknown } | undefined;
  return {
    kind: 'client',
    service: {
      configFile: site.file,
      adminUrl: `http://${loopbackHost(admin, '127.0.0.1')}:${portOf(admin, 8780)}/`,
      healthUrl: `http://${loopbackHost(webhook, '127.0.0.1')}:${portOf(webhook, 8787)}/healthz`,
      control: controlEndpoint(dataDir, platform),
    },
  };
}

export type ServiceState = 'running' | 'not-answering';

/** Does the service answer? One loopback request with a short timeout. */
export async function probeService(service: Pick<ServiceEndpoints, 'healthUrl'>, timeoutMs = 3000): Promise<ServiceState> {
  try {
    const res = await fetch(service.healthUrl, { signal: AbortSignal.timeout(timeoutMs) });
    const body = (await res.json()) as { status?: unknown };
    return res.ok && body.status === 'ok' ? 'running' : 'not-answering';
  } catch {
    return 'not-answering';
  }
}

/** What this app knows of the service, from its control channel or, failing that, its health check. */
export type ServiceView =
  /** Not asked yet. */
  | { readonly kind: 'looking' }
  /** The channel answered with the severity model. */
  | { readonly kind: 'status'; readonly summary: z.infer<typeof SummaryReply> }
  /** The operating system refused this account the channel; `running` is the health check's answer. */
  | { readonly kind: 'refused'; readonly running: boolean }
  /** The channel answered with an error (its storage failing, say). */
  | { readonly kind: 'failed'; readonly message: string }
  /** Nothing answers on the channel (stopped, starting, or a version without it); the health check's answer. */
  | { readonly kind: 'no-channel'; readonly running: boolean };

/** Who asks, for the service's audit log: this account on this PC. */
export function desktopActor(): string {
  try {
    return `${os.userInfo().username}@${os.hostname()}`;
  } catch {
    return 'desktop user';
  }
}

/** The channel refused this account (permissions), as opposed to nothing listening. */
export function isRefusal(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'EACCES' || code === 'EPERM';
}

/** The route does not exist (a service of a version before it): as good as no channel. */
function isMissingRoute(err: unknown): boolean {
  return err instanceof AppError && err.id === 'not_found';
}

function client(service: ServiceEndpoints, actor: string, timeoutMs: number): ControlClient {
  return new ControlClient(service.control, actor, timeoutMs);
}

/** Asks the service for its state: the channel first, then the health check. */
export async function askService(service: ServiceEndpoints, options: { actor?: string; timeoutMs?: number } = {}): Promise<ServiceView> {
  const timeoutMs = options.timeoutMs ?? 5000;
  try {
    const summary = await client(service, options.actor ?? desktopActor(), timeoutMs).request(SummaryReply, { method: 'GET', route: '/summary' });
    return { kind: 'status', summary };
  } catch (err) {
    if (err instanceof AppError && !isMissingRoute(err)) return { kind: 'failed', message: err.message };
    const running = (await probeService(service, timeoutMs)) === 'running';
    return isRefusal(err) ? { kind: 'refused', running } : { kind: 'no-channel', running };
  }
}

export type LoginLinkResult = { readonly kind: 'link'; readonly url: string } | { readonly kind: 'refused' } | { readonly kind: 'unavailable'; readonly message: string };

/**
 * A one-time login link to the service's window. The service binds its window to a new loopback
 * address at each start, so the window's origin is the link's own (`adminOrigin` null, as the desktop
 * app asks): any loopback http origin, with a one-time code in it. With `adminOrigin` given, a link for
 * any other origin is not loaded, whoever answered on the channel. Never the configured address alone.
 */
export async function serviceLoginLink(service: ServiceEndpoints, adminOrigin: string | null, options: { actor?: string; timeoutMs?: number } = {}): Promise<LoginLinkResult> {
  try {
    const reply = await client(service, options.actor ?? desktopActor(), options.timeoutMs ?? 10_000).request(LoginLinkReply, { method: 'POST', route: '/login-link', body: { via: 'desktop app' } });
    const accepted = adminOrigin === null ? loginLinkOrigin(reply.url) !== null : acceptLoginLink(reply.url, adminOrigin);
    if (!accepted) return { kind: 'unavailable', message: adminOrigin === null ? 'the service gave a link that is not a login link to a loopback address' : `the service gave a link for another address than ${adminOrigin}` };
    return { kind: 'link', url: reply.url };
  } catch (err) {
    if (isRefusal(err)) return { kind: 'refused' };
    return { kind: 'unavailable', message: err instanceof Error ? err.message : String(err) };
  }
}

/** Whether the service runs, by what this app knows of it: null while not asked yet. */
export function serviceRunning(view: ServiceView): boolean | null {
  switch (view.kind) {
    case 'looking':
      return null;
    case 'status':
    case 'failed':
      // The channel answered: the service runs (failing to report is shown in the window).
      return true;
    case 'refused':
    case 'no-channel':
      return view.running;
  }
}

/** What the client's window shows: nothing yet, the service's window (by a login link), or the app's local page. */
export type ClientWindowShows = 'nothing' | 'page' | 'not-running' | 'refused';

/**
 * At each poll of the service, what the client's window does. It leaves the service's window for the
 * local page as soon as the control channel that gave its link no longer answers, whatever the health
 * check says: the service may be stopped, and another account may then listen on the window's port
 * (and on the health check's: its answer proves nothing), where the page's own requests and reloads
 * would reach it. It asks again for a login link once a service that gave none answers again. A refusal
 * is not retried by itself: an account's rights do not change while the app runs (Open status window
 * in the tray asks again).
 */
export function clientWindowStep(view: ServiceView, shows: ClientWindowShows): 'show-not-running' | 'ask-link' | 'none' {
  if (shows === 'page' && (view.kind === 'no-channel' || view.kind === 'refused')) return 'show-not-running';
  if (shows === 'not-running' && serviceRunning(view) === true) return 'ask-link';
  return 'none';
}

/** The one line on how to get access, for an account the channel refuses. */
export function accessHint(platform: NodeJS.Platform = process.platform): string {
  return platform === 'win32'
    ? 'To see its status and log in, start POS Sync Agent with "Run as administrator".'
    : "To see its status and log in, run as root or the service's account (sudo pos-sync-agent admin-url).";
}

export interface ClientTray {
  readonly colour: TrayColour;
  readonly tooltip: string;
  /** Lines the tray menu shows above its items (disabled entries). */
  readonly lines: readonly string[];
}

const PREFIX = 'POS Sync Agent (service)';

function clip(text: string): string {
  // Windows truncates tray tooltips at 127 characters.
  return text.length > 127 ? `${text.slice(0, 126)}…` : text;
}

/**
 * The tray in client mode, rendered from the service's severity model when the channel answers: the
 * tray decides no colour of its own. It always says it shows the service agent.
 */
export function clientTrayState(view: ServiceView, platform: NodeJS.Platform = process.platform): ClientTray {
  switch (view.kind) {
    case 'looking':
      return { colour: 'grey', tooltip: `${PREFIX} — looking for the service agent`, lines: ['Client of the service agent: looking for it'] };
    case 'status': {
      const s = view.summary;
      return {
        colour: s.light,
        tooltip: clip(`${PREFIX} — ${s.headline}`),
        lines: [`Service agent: ${s.label}${s.paused ? ' (pause or resume in the status window)' : ''}`],
      };
    }
    case 'failed':
      return { colour: 'red', tooltip: clip(`${PREFIX} — the service agent could not report its state: ${view.message}`), lines: ['Service agent: could not report its state', 'Open the status window for details'] };
    case 'refused':
    case 'no-channel': {
      if (!view.running) {
        // The model's "cannot be reached": red.
        const down = trayState(null, { phase: 'down', why: 'the service agent does not answer (Services: POS Sync Agent)' });
        return { colour: down.colour, tooltip: clip(down.tooltip.replace(/^POS Sync Agent/, PREFIX)), lines: ['The service agent does not answer', ...(view.kind === 'refused' ? [accessHint(platform)] : [])] };
      }
      // It runs, but its state cannot be read from here: grey (not known), never green.
      if (view.kind === 'refused') {
        return { colour: 'grey', tooltip: clip(`${PREFIX} — running; this account may not see its status`), lines: ['Connected to the service agent (status not shown to this account)', accessHint(platform)] };
      }
      return { colour: 'grey', tooltip: `${PREFIX} — running; open the window for its status`, lines: ['Connected to the service agent; open the window for its status'] };
    }
  }
}

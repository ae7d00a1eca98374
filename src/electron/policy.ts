/**
 * The desktop shell's security and start-up decisions as pure functions (no `electron` import), so
 * they are unit-tested under plain Node. main.ts and harden.ts only wire them to Electron's events.
 */

import path from 'node:path';
import { clockTime } from '../domain/local-time';
import { assessSeverity, type Light } from '../domain/severity';

/**
 * Loopback hosts the status window may be served from, as the URL parser writes them: any 127.0.0.0/8
 * address (the agent binds a fresh random one at each start) and ::1. Not `localhost`: the agent never
 * makes links with it, and it is a name to resolve rather than an address.
 */
function isLoopbackHost(hostname: string): boolean {
  return hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/** The admin server's origin (scheme, loopback host, port) from its login or base URL. */
export function adminOriginOf(url: string): string {
  const u = new URL(url);
  if (u.protocol !== 'http:' || !isLoopbackHost(u.hostname)) {
    throw new Error(`the status window must be served from a loopback http origin, not ${u.origin}`);
  }
  return u.origin;
}

/** The query parameter of a login link's one-time code (src/admin/security.ts LOGIN_PARAM; a test keeps them equal). */
export const LOGIN_LINK_PARAM = 'login';

/**
 * The origin of a login link the agent gave (its own process's message, or the service's control
 * channel), or null when it is not one: not loopback http, or no one-time code in it. The window takes
 * its origin from the link it loads (the agent binds a new address at each start), never from the
 * configuration, and never loads a plain address of a port.
 */
export function loginLinkOrigin(url: string): string | null {
  try {
    const origin = adminOriginOf(url);
    return new URL(url).searchParams.get(LOGIN_LINK_PARAM) ? origin : null;
  } catch {
    return null;
  }
}

/** Whether the window may load this login link: only on the origin the agent announced at ready. */
export function acceptLoginLink(url: string, announcedOrigin: string | null): boolean {
  return announcedOrigin !== null && loginLinkOrigin(url) === announcedOrigin;
}

function originOf(url: string): string | null {
  try {
    const u = new URL(url);
    // Opaque origins (data:, javascript:, file: on some platforms) come back as the string "null".
    return u.origin === 'null' ? null : u.origin;
  } catch {
    return null;
  }
}

/** The window may only ever show the admin server's own pages. */
export function isAllowedNavigation(targetUrl: string, adminOrigin: string): boolean {
  return originOf(targetUrl) === adminOrigin;
}

/** window.open / target=_blank: never a new window (a page that could open one could escape the policy). */
export function windowOpenDecision(_url: string): { action: 'deny' } {
  return { action: 'deny' };
}

/**
 * Permission requests (camera, notifications, geolocation, ...): all refused, except writing plain text
 * to the clipboard from our own origin (the "Copy" button next to the webhook address).
 */
export function permissionDecision(permission: string, requestingUrl: string, adminOrigin: string): boolean {
  return permission === 'clipboard-sanitized-write' && originOf(requestingUrl) === adminOrigin;
}

/** Web preferences of the status window: isolated, sandboxed, no Node, no preload. */
export const SECURE_WEB_PREFERENCES = {
  contextIsolation: true,
  sandbox: true,
  nodeIntegration: false,
  nodeIntegrationInWorker: false,
  nodeIntegrationInSubFrames: false,
  webSecurity: true,
  allowRunningInsecureContent: false,
  experimentalFeatures: false,
  navigateOnDragDrop: false,
  webviewTag: false,
  safeDialogs: true,
  spellcheck: false,
} as const;

export type TrayColour = Light | 'grey';

/**
 * Tray icon colour and tooltip, rendered from the severity model (src/domain/severity.ts): the tray
 * decides nothing. `agent` says whether the shell's agent process is starting (grey, not yet known) or
 * down after it ran or failed (the model's unreachable state, red).
 */
export function trayState(summary: { light: Light; headline: string } | null, agent: { readonly phase: 'starting' | 'running' | 'down'; readonly since?: string | null; readonly why?: string | null } = { phase: 'running' }): { colour: TrayColour; tooltip: string } {
  if (!summary) {
    if (agent.phase === 'starting') return { colour: 'grey', tooltip: 'POS Sync Agent — starting' };
    const down = assessSeverity({ now: new Date(), reachable: false, unreachableSince: agent.since ?? null, unreachableWhy: agent.why ?? null, paused: false, locations: [], gapAlertMinutes: 0 }, clockTime);
    return trayState(down);
  }
  const tooltip = `POS Sync Agent — ${summary.headline}`;
  // Windows truncates tray tooltips at 127 characters.
  return { colour: summary.light, tooltip: tooltip.length > 127 ? `${tooltip.slice(0, 126)}…` : tooltip };
}

/**
 * The `--config FILE` the desktop app was started with, if any. Without one it finds the site as every
 * entry point does (config/site.ts: POS_SYNC_CONFIG, the machine-wide file, the user's own).
 */
export function desktopConfigOption(argv: readonly string[]): string | null {
  const i = argv.indexOf('--config');
  if (i >= 0 && argv[i + 1]) return argv[i + 1]!;
  const inline = argv.find((a) => a.startsWith('--config='));
  return inline ? inline.slice('--config='.length) || null : null;
}

/** Started by the login item: stay in the tray, no window. */
export const HIDDEN_ARG = '--hidden';

export function startHidden(argv: readonly string[]): boolean {
  return argv.includes(HIDDEN_ARG);
}

/**
 * The file Electron's utilityProcess runs as the agent: the bundle `npm run build` writes for it
 * (dist/agent/agent-process.js, beside the worker threads' bundles it starts), else, in a tree built
 * by tsc alone, the compiled module beside main.js. `mainDir` is main.js's folder (dist/src/electron).
 */
export function agentProcessEntry(mainDir: string, exists: (file: string) => boolean): string {
  const bundled = path.join(mainDir, '..', '..', 'agent', 'agent-process.js');
  return exists(bundled) ? bundled : path.join(mainDir, 'agent-process.js');
}

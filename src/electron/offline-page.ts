import crypto from 'node:crypto';

/**
 * The page the desktop window shows, from the app itself, whenever it has no login link to load: the
 * agent (its own, or the service) is stopped, starting or does not answer, or this account may not ask
 * the service for a link. The window never loads a plain address of the status window's port instead:
 * while the agent is stopped any program of another account may listen there. A data: URL, so nothing
 * is read from disk or the network; no script; its policy allows nothing but its own inline style.
 */

export type OfflineReason =
  /** The app's own agent stopped; the supervisor restarts it. */
  | { readonly kind: 'own-restarting' }
  /** The app's own agent stopped too often and is no longer restarted (the tray can start it again). */
  | { readonly kind: 'own-gave-up'; readonly detail?: string | null }
  /** The service agent is stopped, starting, or gave no login link; the app asks again by itself. */
  | { readonly kind: 'service-not-running'; readonly detail?: string | null }
  /** The operating system refused this account the service's control channel: no login link. */
  | { readonly kind: 'service-refused'; readonly hint: string }
  /** The window's session could not be cleared before a load, so no link was loaded. */
  | { readonly kind: 'session-not-cleared' };

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const STYLE = [
  'body{font:15px/1.5 system-ui,sans-serif;margin:0;padding:48px;color:#1f2328;background:#f6f8fa}',
  'main{max-width:640px}',
  'h1{font-size:22px;margin:0 0 16px}',
  'code{font:14px ui-monospace,monospace;background:#eaeef2;padding:1px 4px;border-radius:4px}',
  '.detail{color:#59636e}',
].join('');

/** Only the inline style above: no script, no other source of anything, no form, no base. */
export const OFFLINE_PAGE_POLICY = `default-src 'none'; style-src 'sha256-${crypto.createHash('sha256').update(STYLE).digest('base64')}'; base-uri 'none'; form-action 'none'`;

function content(reason: OfflineReason, platform: NodeJS.Platform): { title: string; paragraphs: string[]; detail: string | null } {
  const status = 'Check it with <code>pos-sync-agent status</code>.';
  switch (reason.kind) {
    case 'own-restarting':
      return {
        title: 'The agent is not running',
        paragraphs: ['The POS Sync Agent on this PC has stopped and is being started again.', 'This window shows the status window again by itself once the agent is back. The tray icon shows its state.'],
        detail: null,
      };
    case 'own-gave-up':
      return {
        title: 'The agent is not running',
        paragraphs: [
          'The POS Sync Agent on this PC stopped and is no longer started again by itself.',
          'Start it with <strong>Start the agent again</strong> in the tray menu; <strong>Open logs folder</strong> there shows why it stopped. This window shows the status window again by itself once the agent is back.',
        ],
        detail: reason.detail ?? null,
      };
    case 'service-not-running': {
      const start =
        platform === 'win32'
          ? 'Start the service: <strong>Services</strong> (<code>services.msc</code>), <strong>POS Sync Agent</strong>, <strong>Start</strong> (as an administrator).'
          : 'Start the service: <code>sudo systemctl start pos-sync-agent</code>.';
      return {
        title: 'The agent is not running',
        paragraphs: [
          'The POS Sync Agent service on this PC is not running, is starting, or does not answer, so there is no status window to show.',
          `${start} ${status} The tray icon shows the service's state.`,
          'This window asks the service for a login link again by itself and shows the status window once it answers.',
        ],
        detail: reason.detail ?? null,
      };
    }
    case 'service-refused':
      return {
        title: 'This account may not open the status window',
        paragraphs: ['The POS Sync Agent service runs on this PC, but it gives login links only to accounts it lets ask.', escapeHtml(reason.hint)],
        detail: null,
      };
    case 'session-not-cleared':
      return {
        title: 'The status window was not opened',
        paragraphs: ['This window could not clear what earlier pages left in it, so it does not open the status window.', 'Quit POS Sync Agent from the tray menu and start it again.'],
        detail: null,
      };
  }
}

/** The page as HTML (exported for its tests). Every text that does not come from this file is escaped. */
export function offlinePageHtml(reason: OfflineReason, platform: NodeJS.Platform = process.platform): string {
  const { title, paragraphs, detail } = content(reason, platform);
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${OFFLINE_PAGE_POLICY}">`,
    '<meta name="referrer" content="no-referrer">',
    `<title>POS Sync Agent — ${escapeHtml(title)}</title>`,
    `<style>${STYLE}</style>`,
    '</head><body><main>',
    `<h1>${escapeHtml(title)}</h1>`,
    ...paragraphs.map((p) => `<p>${p}</p>`),
    ...(detail ? [`<p class="detail">${escapeHtml(detail)}</p>`] : []),
    '</main></body></html>',
  ].join('\n');
}

/** The page as the data: URL the window loads. */
export function offlinePageUrl(reason: OfflineReason, platform: NodeJS.Platform = process.platform): string {
  return `data:text/html;charset=utf-8;base64,${Buffer.from(offlinePageHtml(reason, platform), 'utf8').toString('base64')}`;
}

import { summarise, locationLabel, type Light, type OperationsAlert, type Summary } from '../../src/admin/summary';
import { formatUpdateName } from '../../src/domain/update-name';
import { errorText, send } from './api';
import { ConflictsView } from './conflicts';
import { ago, byId, confirmDialog, fullTime, h, replace, shortTime, toast, type Child } from './dom';
import type { StatusLocation, StatusResponse } from './types';
import { cliCommand } from './cli';

const LIGHT_LABEL: Record<Light, string> = { green: 'Up to date', amber: 'Check', red: 'Attention' };

export function lightBadge(light: Light): HTMLElement {
  return h('span', { class: `badge badge-${light}` }, h('span', { class: `light light-${light}`, 'aria-hidden': 'true' }), LIGHT_LABEL[light]);
}

export function summaryOf(status: StatusResponse): Summary {
  return summarise(status.locations, {
    now: new Date(),
    paused: status.paused,
    pausedBy: status.pausedBy ?? null,
    pausedAt: status.pausedAt ?? null,
    gapAlertMinutes: status.gapAlertMinutes,
    baselineSettleSeconds: status.baselineSettleSeconds,
    alerts: status.alerts ?? [],
    formatTime: (iso) => shortTime(iso),
  });
}

/** The bar at the top: light, label and headline, and the pause button's state. */
export function renderHeader(status: StatusResponse, summary: Summary): void {
  byId('summary-light').className = `light light-${summary.light}`;
  const label = byId('summary-label');
  label.className = `badge badge-${summary.light}`;
  label.textContent = LIGHT_LABEL[summary.light];
  const text = byId('summary-text');
  text.textContent = summary.headline;
  // The headline can be long (an operations problem comes first); the whole of it stays readable on hover.
  text.title = summary.headline;
  const pause = byId<HTMLButtonElement>('pause-button');
  pause.textContent = status.paused ? 'Resume applying' : 'Pause applying';
  pause.setAttribute('aria-pressed', String(status.paused));
}

/**
 * One banner per operations problem (tunnel, disk, clock, backups), worst first, above the location
 * cards: these are why updates may stop arriving, so they come before the per-location detail.
 */
function alertBanners(alerts: readonly OperationsAlert[], openOperations: () => void): HTMLElement {
  return h(
    'div',
    { id: 'ops-alerts', class: 'ops-alerts' },
    ...alerts.map((a) => {
      const kind = a.light ?? 'info';
      const titleId = `alert-${a.id}-title`;
      return h(
        'section',
        { class: `alert alert-${kind}`, 'data-alert': a.id, 'aria-labelledby': titleId },
        h('h2', { id: titleId }, a.light ? lightBadge(a.light) : h('span', { class: 'badge' }, 'Note'), ' ', a.title),
        h('p', {}, a.text),
        a.details && a.details.length > 0 ? h('ul', { class: 'alert-details' }, ...a.details.map((d) => h('li', {}, d))) : null,
        h('button', { type: 'button', class: 'link', onclick: () => openOperations() }, 'Details under Settings → Operations'),
      );
    }),
  );
}

const REFUSAL_WORDS: Record<string, string> = {
  missing_bearer_token: 'without the token',
  invalid_bearer_token: 'with a wrong token',
  origin_not_allowed: 'from an unexpected Origin',
  browser_request: 'made by a web browser',
  payload_too_large: 'too large',
  unsupported_content_type: 'not sent as JSON',
  unsupported_encoding: 'in an unsupported encoding',
  invalid_encoding: 'not UTF-8 or not decodable',
  invalid_json: 'not JSON',
  invalid_envelope: 'without a valid envelope',
  receiver_busy: 'while too many bodies were arriving',
};

/** Refused webhook calls over the last hour, in plain words (counted by the agent, not logged one by one). */
function refusalLine(status: StatusResponse): HTMLElement {
  const lastHour = Object.entries(status.refusals?.lastHour ?? {}).filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1]);
  if (lastHour.length === 0) return h('p', { id: 'refusals', class: 'refusals', hidden: 'hidden' });
  const total = lastHour.reduce((sum, [, n]) => sum + n, 0);
  const parts = lastHour.map(([reason, n]) => `${n.toLocaleString()} ${REFUSAL_WORDS[reason] ?? reason}`);
  return h(
    'p',
    { id: 'refusals', class: 'refusals', 'data-total': String(total) },
    `Refused webhook calls in the last hour: ${parts.join(', ')}. `,
    'If head office\'s own calls are among them, check the token and Origin they were given (Settings).',
  );
}
/** One per window: it keeps the comparisons it built, so a refresh does not fetch both bodies again. */
let conflictsView: ConflictsView | null = null;

export function renderStatus(container: HTMLElement, status: StatusResponse, summary: Summary, refresh: () => void, openOperations: () => void = () => undefined): void {
  conflictsView ??= new ConflictsView(refresh);
  void conflictsView.update(status.locations.some((l) => l.conflicts > 0));
  const chartHolder = container.querySelector('#chart-section');
  const banners = alertBanners(summary.alerts, openOperations);
  const cards: Child[] = status.locations.map((l) => locationCard(l, summary.locations.find((s) => s.locationId === l.locationId)!, refresh));
  const list = h('div', { class: 'cards', id: 'location-cards' }, ...cards);
  if (status.locations.length === 0) {
    list.append(h('p', { class: 'empty' }, 'No update has been received yet. Give head office the webhook address shown under Settings.'));
  }
  // The chart keeps its element across refreshes (uPlot owns it); only the location cards are rebuilt.
  const existing = container.querySelector('#location-cards');
  const refusals = refusalLine(status);
  if (existing) {
    container.querySelector('#ops-alerts')?.replaceWith(banners);
    existing.replaceWith(list);
    container.querySelector('#refusals')?.replaceWith(refusals);
  } else replace(container, h('h1', { class: 'visually-hidden' }, 'Sync status'), banners, conflictsView.element, list, refusals, chartHolder);
}

function locationCard(l: StatusLocation, s: Summary['locations'][number], refresh: () => void): HTMLElement {
  const headingId = `loc-${l.locationId}`;
  const facts = h(
    'dl',
    { class: 'facts' },
    h('dt', {}, 'Last applied update'),
    h('dd', {}, l.lastChangeSequence === null ? 'none yet' : String(l.lastChangeSequence)),
    h('dt', {}, 'Applied at'),
    h('dd', {}, l.lastAppliedAt ? h('time', { datetime: l.lastAppliedAt, title: fullTime(l.lastAppliedAt) }, `${shortTime(l.lastAppliedAt)} (${ago(l.lastAppliedAt)})`) : '—'),
    h('dt', {}, 'Currency'),
    h('dd', {}, l.currency ?? '—'),
    h('dt', {}, 'Updates waiting'),
    h('dd', {}, String(l.waiting.length)),
  );
  const lines = h('ul', { class: 'lines' }, ...s.lines.map((line) => h('li', {}, line)));
  const waiting =
    l.waiting.length === 0
      ? null
      : h(
          'table',
          { class: 'data' },
          h('caption', {}, 'Updates waiting'),
          h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Update'), h('th', { scope: 'col' }, 'Waits for'), h('th', { scope: 'col' }, 'Received'), h('th', { scope: 'col' }, 'Why'), h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Action')))),
          h(
            'tbody',
            {},
            ...l.waiting.map((w) =>
              h(
                'tr',
                {},
                h('td', {}, String(w.changeSequence)),
                h('td', {}, w.waitingFor === null ? '—' : `update ${w.waitingFor}`),
                h('td', {}, h('time', { datetime: w.receivedAt, title: fullTime(w.receivedAt) }, shortTime(w.receivedAt))),
                h('td', {}, w.reason === 'waiting' ? 'its parent has not arrived' : w.reason === 'fork' ? 'continues a different chain' : w.reason === 'settling' ? 'new location: waiting for the first publication' : 'first update: needs acceptance'),
                h('td', {}, h('button', { type: 'button', class: 'secondary small', 'data-update': formatUpdateName(l.locationId, w.changeSequence), onclick: () => void forceApply(l, w.changeSequence, refresh) }, `Force apply update ${w.changeSequence} for location ${l.locationId}…`)),
              ),
            ),
          ),
        );
  const warnings =
    l.recentWarnings.length === 0
      ? null
      : h(
          'details',
          { class: 'warnings' },
          h('summary', {}, `${l.warnings} warning${l.warnings === 1 ? '' : 's'} from applied updates`),
          h('ul', {}, ...l.recentWarnings.map((w) => h('li', {}, h('strong', {}, `Update ${w.changeSequence}, ${w.path}: `), w.message))),
          h('button', { type: 'button', class: 'secondary small', onclick: () => void acknowledge(l, refresh) }, 'Mark warnings as seen'),
        );
  return h(
    'article',
    { class: `card card-${s.light}`, 'aria-labelledby': headingId, 'data-location': l.locationId },
    h('header', { class: 'card-head' }, h('h2', { id: headingId }, locationLabel(l)), lightBadge(s.light)),
    lines,
    facts,
    waiting,
    warnings,
  );
}

async function forceApply(l: StatusLocation, changeSequence: number, refresh: () => void): Promise<void> {
  // The one name of an update (LOCATION:SEQUENCE), the same the CLI takes and support quotes.
  const name = formatUpdateName(l.locationId, changeSequence);
  const answer = await confirmDialog({
    title: `Force apply update ${changeSequence} for location ${l.locationId}?`,
    body: [
      h('p', {}, `This applies update ${changeSequence} to ${locationLabel(l)} without the update it is waiting for. Prices from the missing update may then be wrong until support resends it.`),
      h('p', {}, 'Do this only when support has told you to. Your name and reason go to the audit log.'),
      h('p', { class: 'muted' }, 'From the command line: ', h('code', {}, cliCommand(`force-apply ${name} --reason "…"`))),
    ],
    confirmLabel: `Force apply update ${changeSequence}`,
    danger: true,
    input: { label: 'Reason (required)', required: true },
  });
  if (!answer.confirmed) return;
  try {
    await send('POST', `/api/updates/${encodeURIComponent(name)}/force-apply`, { reason: answer.value });
    toast(`Update ${changeSequence} for location ${l.locationId} applied.`);
  } catch (err) {
    toast(`Not applied: ${errorText(err)}`, 'error');
  }
  refresh();
}

async function acknowledge(l: StatusLocation, refresh: () => void): Promise<void> {
  try {
    const r = await send<{ acknowledged: number }>('POST', '/api/warnings/acknowledge', { locationId: l.locationId });
    toast(`${r.acknowledged} warning${r.acknowledged === 1 ? '' : 's'} marked as seen.`);
  } catch (err) {
    toast(errorText(err), 'error');
  }
  refresh();
}

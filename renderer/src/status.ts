import { locationLabel, severityOf, type Light, type OperationsAlert, type Summary } from '../../src/admin/summary';
import { gapsOf } from '../../src/domain/severity';
import { formatUpdateName } from '../../src/domain/update-name';
import { errorText, send } from './api';
import { ConflictsView } from './conflicts';
import { ago, byId, confirmDialog, fullTime, h, replace, shortTime, toast, type Child } from './dom';
import type { StatusLocation, StatusResponse } from './types';
import { cliCommand } from './cli';
import { keepPlace, setText } from './keep-place';

const LIGHT_LABEL: Record<Light, string> = { green: 'Up to date', amber: 'Check', red: 'Attention' };

export function lightBadge(light: Light, label: string = LIGHT_LABEL[light]): HTMLElement {
  return h('span', { class: `badge badge-${light}` }, h('span', { class: `light light-${light}`, 'aria-hidden': 'true' }), label);
}

/** Whether the agent answers, as the window last saw it (set by main.ts from its requests). */
export interface Reachability {
  readonly reachable: boolean;
  readonly since?: string | null;
  readonly why?: string | null;
  readonly storageError?: string | null;
}

/** The severity model over the last status read (src/domain/severity.ts decides; this only renders). */
export function summaryOf(status: StatusResponse, reach: Reachability = { reachable: true }): Summary {
  return severityOf(status, new Date(), (iso) => shortTime(iso), reach);
}

/** The bar at the top: light, label and headline, and the pause button's state. */
export function renderHeader(status: StatusResponse, summary: Summary): void {
  byId('summary-light').className = `light light-${summary.light}`;
  const label = byId('summary-label');
  label.className = `badge badge-${summary.light}`;
  // The summary is a live region: the same words written again would be announced again.
  setText(label, summary.label);
  const text = byId('summary-text');
  setText(text, summary.headline);
  // The headline can be long (an operations problem comes first); the whole of it stays readable on hover.
  text.title = summary.reasons.map((r) => r.text).join('\n') || summary.headline;
  document.documentElement.dataset.light = summary.light;
  const pause = byId<HTMLButtonElement>('pause-button');
  setText(pause, status.paused ? 'Resume applying' : 'Pause applying');
  pause.setAttribute('aria-pressed', String(status.paused));
}

/** Every reason for the light, worst first, when there is more than the headline says. */
function reasonList(summary: Summary): HTMLElement {
  // A green reason is news (a resume under way), never "Up to date": the model says when that holds.
  const list = h('ul', { id: 'reasons', class: 'reasons' }, ...summary.reasons.map((r) => h('li', { class: `reason reason-${r.light}`, 'data-reason': r.id }, lightBadge(r.light, r.light === 'green' ? 'Note' : undefined), ' ', r.text)));
  if (summary.reasons.length < 2) list.hidden = true;
  return list;
}

/** The apply under way, as a progress bar (the applier reports items written of the total). */
function progressBar(status: StatusResponse): HTMLElement {
  const p = status.applying;
  if (!p) return h('div', { id: 'apply-progress', hidden: 'hidden' });
  const label = `Applying update ${p.changeSequence} for location ${p.locationId}: ${p.done.toLocaleString('en-GB')} of ${p.total.toLocaleString('en-GB')} items`;
  return h(
    'div',
    { id: 'apply-progress', class: 'apply-progress' },
    h('label', { for: 'apply-progress-bar' }, label),
    h('progress', { id: 'apply-progress-bar', max: String(Math.max(1, p.total)), value: String(p.done) }, label),
  );
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
        { class: `alert alert-${kind}`, 'data-alert': a.id, 'data-key': `alert-${a.id}`, 'aria-labelledby': titleId },
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
  item_too_large: 'with an item too large to read',
  too_many_items: 'with more items than one update may hold',
  member_too_large: 'with members too large to read',
  too_deep: 'nested too deep to read',
  too_many_values: 'with an item of too many values to read',
  lone_surrogate: 'with text that is not valid Unicode',
  storage_unavailable: 'while the agent could not store them (disk full or failing)',
  refusal_not_recorded: 'that could not be recorded (disk full or failing)',
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
/** The locations as last shown: a button kept across refreshes acts on these, not on what it was built with. */
let shownLocations = new Map<number, StatusLocation>();

export function renderStatus(container: HTMLElement, status: StatusResponse, summary: Summary, refresh: () => void, openOperations: () => void = () => undefined): void {
  conflictsView ??= new ConflictsView(refresh);
  shownLocations = new Map(status.locations.map((l) => [l.locationId, l]));
  void conflictsView.update(status.locations.some((l) => l.conflicts > 0));
  const chartHolder = container.querySelector('#chart-section');
  const banners = alertBanners(summary.alerts, openOperations);
  const cards: Child[] = status.locations.map((l) => locationCard(l, summary.locations.find((s) => s.locationId === l.locationId)!, refresh));
  const list = h('div', { class: 'cards', id: 'location-cards' }, ...cards);
  for (const n of status.neverReceived ?? []) list.append(neverReceivedCard(n));
  if (status.locations.length === 0 && (status.neverReceived ?? []).length === 0) {
    list.append(h('p', { class: 'empty' }, 'No update has been received yet. Give head office the webhook address shown under Settings.'));
  }
  // A refresh updates what is shown in place (keep-place.ts), so focus, open details and scrolling stay;
  // the chart keeps its element (uPlot owns it).
  const existing = container.querySelector('#location-cards');
  const refusals = refusalLine(status);
  const reasons = reasonList(summary);
  const progress = progressBar(status);
  if (existing) {
    for (const fresh of [reasons, progress, banners, list, refusals]) {
      const shown = container.querySelector(`#${fresh.id}`);
      if (shown) keepPlace(shown, fresh);
    }
  } else replace(container, h('h1', { class: 'visually-hidden' }, 'Sync status'), reasons, progress, banners, conflictsView.element, list, refusals, chartHolder);
}

/** A configured location that has never received anything: shown, so a wrong LocationID is noticed. */
function neverReceivedCard(n: { locationId: number; name: string | null }): HTMLElement {
  const headingId = `loc-${n.locationId}`;
  return h(
    'article',
    { class: 'card card-amber', 'aria-labelledby': headingId, 'data-location': n.locationId, 'data-key': `location-${n.locationId}`, 'data-never-received': 'true' },
    h('header', { class: 'card-head' }, h('h2', { id: headingId }, locationLabel({ locationId: n.locationId, locationName: n.name })), lightBadge('amber', 'Nothing received')),
    h('ul', { class: 'lines' }, h('li', {}, 'Configured for this site, but head office has never sent an update for it. Check that head office sends to this LocationID.')),
  );
}

const WHY: Record<StatusLocation['waiting'][number]['reason'], string> = {
  queued: 'queued: applied in turn',
  waiting: 'an earlier update has not arrived',
  fork: 'continues a different chain',
  settling: 'new location: waiting for the first publication',
  'needs-adoption': 'first update: needs acceptance',
  'not-for-site': 'not for this site: stored, not applied',
};

function locationCard(l: StatusLocation, s: Summary['locations'][number], refresh: () => void): HTMLElement {
  const headingId = `loc-${l.locationId}`;
  const gaps = gapsOf(l);
  // A gap's missing update that arrived and was refused (the model's line says what to do).
  const refused = new Map((l.refusedMissing ?? []).map((r) => [r.changeSequence, r.receivedAt]));
  const facts = h(
    'dl',
    { class: 'facts' },
    h('dt', {}, 'Last applied update'),
    h('dd', {}, l.lastChangeSequence === null ? 'none yet' : String(l.lastChangeSequence)),
    h('dt', {}, 'Applied at'),
    h('dd', {}, l.lastAppliedAt ? h('time', { datetime: l.lastAppliedAt, title: fullTime(l.lastAppliedAt) }, `${shortTime(l.lastAppliedAt)} (${ago(l.lastAppliedAt)})`) : '—'),
    h('dt', {}, 'Currency'),
    h('dd', {}, l.currency ?? '—'),
    h('dt', {}, 'Updates not applied yet'),
    h('dd', {}, String(l.waiting.length)),
    ...(gaps.length > 0
      ? [
          h('dt', {}, 'Missing'),
          h(
            'dd',
            { 'data-missing': gaps.map((g) => g.missing).join(' ') },
            gaps.map((g) => (refused.has(g.missing) ? `update ${g.missing} (refused ${shortTime(refused.get(g.missing)!)})` : `update ${g.missing} (since ${shortTime(g.since)})`)).join(', '),
          ),
        ]
      : []),
  );
  const lines = h('ul', { class: 'lines' }, ...s.lines.map((line) => h('li', {}, line)));
  // Force-apply is offered where a person may need it: past a gap, a fork, a first update to accept, or
  // (support's call) a new location's first update adopted before the settle window ends.
  const forceable = (w: StatusLocation['waiting'][number]): boolean => w.reason === 'waiting' || w.reason === 'fork' || w.reason === 'needs-adoption' || w.reason === 'settling';
  const waiting =
    l.waiting.length === 0
      ? null
      : h(
          'details',
          // Opened for a person when an update can be forced: a list kept closed across refreshes
          // (keep-place.ts) is shown again, open, once that becomes so.
          { class: 'waiting', 'data-key': l.waiting.some(forceable) ? 'waiting-to-force' : 'waiting', ...(l.waiting.some(forceable) ? { open: 'open' } : {}) },
          h('summary', {}, `Updates not applied yet (${l.waiting.length})`),
          h(
            'div',
            { class: 'table-scroll' },
            h(
              'table',
              { class: 'data' },
              h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Update'), h('th', { scope: 'col' }, 'Follows'), h('th', { scope: 'col' }, 'Received'), h('th', { scope: 'col' }, 'Why'), h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Action')))),
              h(
                'tbody',
                {},
                ...l.waiting.slice(0, 50).map((w) =>
                  h(
                    'tr',
                    { 'data-reason': w.reason, 'data-key': formatUpdateName(l.locationId, w.changeSequence) },
                    h('td', {}, String(w.changeSequence)),
                    h('td', {}, `update ${w.parentChangeSequence}`),
                    h('td', {}, h('time', { datetime: w.receivedAt, title: fullTime(w.receivedAt) }, shortTime(w.receivedAt))),
                    h('td', {}, w.reason === 'waiting' && w.missing !== null ? `update ${w.missing} ${refused.has(w.missing) ? 'was refused' : 'has not arrived'}` : WHY[w.reason]),
                    h(
                      'td',
                      {},
                      forceable(w)
                        ? h('button', { type: 'button', class: 'secondary small action', 'data-update': formatUpdateName(l.locationId, w.changeSequence), onclick: () => void forceApply(l, w.changeSequence, refresh) }, `Force apply update ${w.changeSequence} for location ${l.locationId}…`)
                        : null,
                    ),
                  ),
                ),
              ),
            ),
          ),
          l.waiting.length > 50 ? h('p', { class: 'muted' }, `and ${l.waiting.length - 50} more`) : null,
        );
  const notApplied =
    l.notAppliedCount === 0
      ? null
      : h(
          'details',
          { class: 'not-applied', 'data-key': 'not-applied' },
          h('summary', {}, `Not applied, by design (${l.notAppliedCount})`),
          h('ul', {}, ...l.notApplied.map((n) => h('li', { 'data-update': formatUpdateName(l.locationId, n.changeSequence) }, h('strong', {}, `Update ${n.changeSequence}`), ` (received ${shortTime(n.receivedAt)}): ${n.why}`))),
        );
  const warnings =
    l.recentWarnings.length === 0
      ? null
      : h(
          'details',
          { class: 'warnings', 'data-key': 'warnings' },
          h('summary', {}, `${l.warnings} warning${l.warnings === 1 ? '' : 's'} from applied updates`),
          h('ul', {}, ...l.recentWarnings.map((w) => h('li', {}, h('strong', {}, `Update ${w.changeSequence}, ${w.path}: `), w.message))),
          h('button', { type: 'button', class: 'secondary small action', onclick: () => void acknowledge(l, refresh) }, 'Mark warnings as seen'),
        );
  return h(
    'article',
    { class: `card card-${s.light}`, 'aria-labelledby': headingId, 'data-location': l.locationId, 'data-key': `location-${l.locationId}`, 'data-site-role': l.siteRole },
    h('header', { class: 'card-head' }, h('h2', { id: headingId }, locationLabel(l)), lightBadge(s.light, s.label)),
    lines,
    facts,
    waiting,
    notApplied,
    warnings,
  );
}

async function forceApply(builtWith: StatusLocation, changeSequence: number, refresh: () => void): Promise<void> {
  const l = shownLocations.get(builtWith.locationId) ?? builtWith;
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

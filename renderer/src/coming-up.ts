import { errorText, get } from './api';
import { fullTime, h, replace, shortTime } from './dom';
import type { ComingUpReply, StatusLocation, UpcomingChange } from './types';
import { notYetOnTillNotes } from '../../src/domain/wording';

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** "Monday 3 June 2030" for a location's calendar date (no timezone: it is a date, not an instant). */
function longDate(date: string): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const weekday = WEEKDAYS[new Date(Date.UTC(y, m - 1, d)).getUTCDay()]!;
  return `${weekday} ${d} ${MONTHS[m - 1]!} ${y}`;
}

function valueText(c: UpcomingChange, value: string | null): string {
  if (c.kind === 'price') return value === null ? 'no price' : `${value} ${c.currency ?? ''}`.trim();
  if (value === null) return 'not scheduled';
  return value === 'AVAILABLE' ? 'Available' : 'Not available';
}

function valueCell(c: UpcomingChange, value: string | null, tax: string | null): HTMLElement {
  const cls = c.kind === 'availability' && value !== null ? `result ${value === 'AVAILABLE' ? 'result-applied' : 'result-rejected'}` : value === null ? 'muted' : '';
  const showTax = c.kind === 'price' && tax !== null && c.taxBefore !== null && c.taxAfter !== null && c.taxBefore !== c.taxAfter;
  return h('td', { class: c.kind === 'price' ? 'num' : null }, h('span', { class: cls || null }, valueText(c, value)), showTax ? h('span', { class: 'muted' }, ` (tax ${tax})`) : null);
}

/** The update that caused a change, and when it was applied: in local time, as every time the window shows. */
function causeCell(c: UpcomingChange): HTMLElement {
  if (!c.cause) return h('td', { class: 'muted' }, 'not known');
  const at = c.cause.appliedAt;
  return h('td', { class: 'muted' }, `update ${c.cause.changeSequence}, applied `, h('time', { datetime: at, title: fullTime(at) }, shortTime(at)));
}

/**
 * "Coming up": what the till will charge or offer differently over the next two weeks, by date,
 * searchable by item name or PLU, with the update from head office that caused each change.
 */
export class ComingUpView {
  readonly element: HTMLElement;
  private readonly search: HTMLInputElement;
  private readonly location: HTMLSelectElement;
  private readonly results: HTMLElement;
  private locationNames = new Map<number, string>();
  /** Per location with updates sent but not on the till yet: what to say above its changes. */
  private notYetOnTill = new Map<number, string>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private asked = 0;

  constructor() {
    this.search = h('input', { id: 'coming-search', name: 'q', type: 'search', autocomplete: 'off', maxlength: 100, size: 24, placeholder: 'e.g. burger or 1001' });
    this.location = h('select', { id: 'coming-location', name: 'location' }, h('option', { value: '' }, 'All locations'));
    this.results = h('div', { id: 'coming-results', 'aria-live': 'polite' });
    const form = h(
      'form',
      { class: 'row', role: 'search', 'aria-label': 'Search coming changes' },
      h('label', { for: 'coming-search' }, 'Item name or PLU'),
      this.search,
      h('label', { for: 'coming-location' }, 'Location'),
      this.location,
    );
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      void this.refresh();
    });
    // Search as you type, once the typing pauses.
    this.search.addEventListener('input', () => {
      if (this.timer) clearTimeout(this.timer);
      this.timer = setTimeout(() => void this.refresh(), 250);
    });
    this.location.addEventListener('change', () => void this.refresh());
    this.element = h(
      'div',
      {},
      h('h1', { class: 'visually-hidden' }, 'Coming up'),
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'coming-heading' },
        h('h2', { id: 'coming-heading' }, 'Coming up on the till'),
        h('p', { class: 'muted' }, 'Every price and meal-period change in the next 14 days, from the updates head office has already sent. Dates are each location\'s own.'),
        form,
      ),
      this.results,
    );
  }

  setLocations(locations: readonly StatusLocation[], paused: boolean): void {
    const selected = this.location.value;
    this.locationNames = new Map(locations.map((l) => [l.locationId, l.locationName ?? `Location ${l.locationId}`]));
    this.notYetOnTill = notYetOnTillNotes(locations, paused);
    replace(this.location, h('option', { value: '' }, 'All locations'), ...locations.map((l) => h('option', { value: String(l.locationId) }, `${l.locationName ?? 'Location'} (${l.locationId})`)));
    this.location.value = selected;
  }

  async refresh(): Promise<void> {
    // Only the latest answer is shown when searches overlap.
    const ask = ++this.asked;
    try {
      const reply = await get<ComingUpReply>('/api/changes', { q: this.search.value.trim(), location: this.location.value });
      if (ask === this.asked) this.show(reply);
    } catch (err) {
      if (ask === this.asked) replace(this.results, h('p', { class: 'error' }, errorText(err)));
    }
  }

  /**
   * For each location shown with updates head office has sent that are not on the till yet: the
   * changes listed are the till's, and those updates may add or change some once applied.
   */
  private notYetOnTillBlock(reply: ComingUpReply): HTMLElement {
    const ids = [...new Set(reply.windows.map((w) => w.locationId))];
    return h(
      'div',
      { id: 'coming-not-yet' },
      ...ids.flatMap((id) => {
        const note = this.notYetOnTill.get(id);
        return note === undefined ? [] : [h('p', { class: 'warn', id: `coming-not-yet-${id}` }, `${this.locationNames.get(id) ?? 'Location'} (${id}): ${note}`)];
      }),
    );
  }

  private show(reply: ComingUpReply): void {
    const span = reply.windows.length === 1 ? `${reply.windows[0]!.from} to ${reply.windows[0]!.to}` : `the next ${reply.days} days`;
    if (reply.changes.length === 0) {
      const what = reply.search ? `No changes for “${reply.search}”` : 'No changes';
      const notYet = this.notYetOnTillBlock(reply);
      const keeps = notYet.childElementCount === 0 ? 'the till keeps charging and offering what it does today' : 'on the till as it is now';
      replace(this.results, notYet, h('p', { class: 'empty card' }, `${what} in ${span}: ${keeps}.`));
      return;
    }
    const byDate = new Map<string, UpcomingChange[]>();
    for (const c of reply.changes) {
      const list = byDate.get(c.date);
      if (list) list.push(c);
      else byDate.set(c.date, [c]);
    }
    const several = new Set(reply.changes.map((c) => c.locationId)).size > 1 || this.location.value === '';
    replace(
      this.results,
      this.notYetOnTillBlock(reply),
      h(
        'p',
        { class: 'muted', id: 'coming-count' },
        `${reply.total} change${reply.total === 1 ? '' : 's'} in ${span}${reply.total > reply.changes.length ? ` (the first ${reply.changes.length} shown: search to narrow)` : ''}.`,
      ),
      ...[...byDate].map(([date, changes]) => this.dayCard(date, changes, several)),
    );
  }

  private dayCard(date: string, changes: readonly UpcomingChange[], showLocation: boolean): HTMLElement {
    const headingId = `coming-${date}`;
    const columns = ['PLU', 'Item', ...(showLocation ? ['Location'] : []), 'Tariff or meal period', 'Until then', 'From this day', 'Caused by'];
    return h(
      'section',
      { class: 'card coming-day', 'aria-labelledby': headingId },
      h('h2', { id: headingId }, longDate(date)),
      h(
        'table',
        { class: 'data' },
        h('thead', {}, h('tr', {}, ...columns.map((t) => h('th', { scope: 'col' }, t)))),
        h(
          'tbody',
          {},
          ...changes.map((c) =>
            h(
              'tr',
              {},
              h('td', {}, c.plu),
              h('td', {}, c.itemName),
              showLocation ? h('td', {}, `${this.locationNames.get(c.locationId) ?? 'Location'} (${c.locationId})`) : null,
              h('td', {}, c.kind === 'price' ? `${c.tariffName ?? ''} price` : `${c.mealPeriod ?? ''}`),
              valueCell(c, c.before, c.taxBefore),
              valueCell(c, c.after, c.taxAfter),
              causeCell(c),
            ),
          ),
        ),
      ),
    );
  }
}

import { errorText, get } from './api';
import { tillDayNotes } from '../../src/domain/wording';
import { h, replace } from './dom';
import type { StatusLocation, TillAnswer } from './types';

/** "What will the till charge?": the POS views' answer for a PLU on a date. */
export class TillView {
  readonly element: HTMLElement;
  private readonly results: HTMLElement;
  private readonly plu: HTMLInputElement;
  private readonly date: HTMLInputElement;
  private readonly location: HTMLSelectElement;
  private locationNames = new Map<number, string>();

  constructor() {
    this.plu = h('input', { id: 'till-plu', name: 'plu', type: 'text', inputmode: 'numeric', autocomplete: 'off', required: true, maxlength: 64, size: 10 });
    // Text as YYYY-MM-DD, the form the till and the CLI use: a date picker shows the browser's own
    // order (mm/dd/yyyy on an en-US Windows), which reads wrongly next to the dates in the answers.
    this.date = h('input', { id: 'till-date', name: 'date', type: 'text', inputmode: 'numeric', placeholder: 'YYYY-MM-DD', maxlength: 10, size: 11, 'aria-describedby': 'till-date-hint' });
    this.location = h('select', { id: 'till-location', name: 'location' }, h('option', { value: '' }, 'All locations'));
    this.results = h('div', { id: 'till-results', 'aria-live': 'polite' });
    const form = h(
      'form',
      { class: 'row', role: 'search', 'aria-label': 'Look up a PLU' },
      h('label', { for: 'till-plu' }, 'PLU'),
      this.plu,
      h('label', { for: 'till-date' }, 'Date (optional, default today)'),
      this.date,
      h('span', { id: 'till-date-hint', class: 'muted' }, 'as YYYY-MM-DD'),
      h('label', { for: 'till-location' }, 'Location'),
      this.location,
      h('button', { type: 'submit', class: 'primary' }, 'Look up'),
    );
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      void this.lookup();
    });
    this.element = h(
      'div',
      {},
      h('h1', { class: 'visually-hidden' }, 'What will the till charge?'),
      h('section', { class: 'card', 'aria-labelledby': 'till-heading' }, h('h2', { id: 'till-heading' }, 'What will the till charge?'), h('p', { class: 'muted' }, 'The same answer the till reads from its price and availability views.'), form),
      this.results,
    );
  }

  setLocations(locations: readonly StatusLocation[]): void {
    const selected = this.location.value;
    this.locationNames = new Map(locations.map((l) => [l.locationId, l.locationName ?? `Location ${l.locationId}`]));
    replace(this.location, h('option', { value: '' }, 'All locations'), ...locations.map((l) => h('option', { value: String(l.locationId) }, `${l.locationName ?? 'Location'} (${l.locationId})`)));
    this.location.value = selected;
  }

  private async lookup(): Promise<void> {
    const plu = this.plu.value.trim();
    if (!plu) {
      this.plu.focus();
      return;
    }
    const date = this.date.value.trim();
    if (date !== '' && !/^\d{4}-\d{2}-\d{2}$/.test(date)) {
      replace(this.results, h('p', { class: 'error', id: 'till-date-error' }, `Write the date as YYYY-MM-DD (for example ${new Date().toISOString().slice(0, 10)}), or leave it empty for today.`));
      this.date.focus();
      return;
    }
    replace(this.results, h('p', { class: 'muted' }, 'Looking up…'));
    try {
      const answer = await get<{ date: string | null; items: TillAnswer[] }>('/api/lookup', { plu, date, location: this.location.value });
      this.show(plu, answer, date !== '');
    } catch (err) {
      replace(this.results, h('p', { class: 'error' }, errorText(err)));
    }
  }

  /**
   * The items found, each card with the date it is answered for: a date asked for is every item's;
   * without one each location's own today, which differs between timezones (the answer's date is
   * then null and the count says so instead of naming one date).
   */
  private show(plu: string, answer: { date: string | null; items: TillAnswer[] }, dateAsked: boolean): void {
    if (answer.items.length === 0) {
      replace(this.results, h('p', { class: 'empty card' }, `No item with PLU ${plu} is known to the till.`));
      return;
    }
    const count = `${answer.items.length} item${answer.items.length === 1 ? '' : 's'} with PLU ${plu}`;
    replace(
      this.results,
      h('p', { class: 'muted', id: 'till-count' }, answer.date !== null ? `${count} on ${answer.date}:` : `${count}, each on today's date at its own location (the locations' dates differ):`),
      answer.items.length > 1
        ? h('p', { class: 'muted', id: 'till-plu-repeats' }, `PLUs can repeat: these ${answer.items.length} items share PLU ${plu} (at different locations, or as different items of one menu). The till tells them apart by location and item ID; each is shown with its own prices.`)
        : null,
      ...answer.items.map((item) => this.itemCard(item, item.date, dateAsked)),
    );
  }

  private itemCard(item: TillAnswer, date: string, dateAsked: boolean): HTMLElement {
    const headingId = `item-${item.locationId}-${item.itemId}`;
    const notes = tillDayNotes(date, item.prices.length > 0, item.availability.length > 0);
    const prices =
      notes.prices !== null
        ? h('p', { class: 'warn' }, notes.prices)
        : h(
            'table',
            { class: 'data' },
            h('caption', {}, 'Prices'),
            h('thead', {}, h('tr', {}, ...['Tariff', 'Price', 'Tax code', 'Tax rate', 'Price model', 'Valid'].map((t) => h('th', { scope: 'col' }, t)))),
            h(
              'tbody',
              {},
              ...item.prices.map((p) =>
                h(
                  'tr',
                  {},
                  h('td', {}, p.tariffName),
                  h('td', { class: 'num' }, `${p.sellPrice} ${p.currency}`),
                  h('td', {}, p.taxCode),
                  h('td', { class: 'num' }, `${p.taxRate}%`),
                  h('td', {}, p.priceModel ?? '—'),
                  h('td', {}, p.dateFrom === p.dateTo ? p.dateFrom : `${p.dateFrom} to ${p.dateTo}`),
                ),
              ),
            ),
          );
    const mealPeriods =
      item.availability.length === 0
        ? null
        : h(
            'table',
            { class: 'data' },
            h('caption', {}, 'Availability by meal period'),
            h('thead', {}, h('tr', {}, ...['Meal period', 'Status', 'Valid'].map((t) => h('th', { scope: 'col' }, t)))),
            h(
              'tbody',
              {},
              ...item.availability.map((a) =>
                h(
                  'tr',
                  {},
                  h('td', {}, a.mealPeriod),
                  h('td', {}, h('span', { class: `result ${a.status === 'AVAILABLE' ? 'result-applied' : 'result-rejected'}` }, a.status === 'AVAILABLE' ? 'Available' : 'Not available')),
                  h('td', {}, a.dateFrom === a.dateTo ? a.dateFrom : `${a.dateFrom} to ${a.dateTo}`),
                ),
              ),
            ),
          );
    // Beside the meal periods, or in their place: what they mean for selling the item that day.
    const availability = h('div', { class: 'item-availability' }, mealPeriods, notes.mealPeriods === null ? null : h('p', { class: item.prices.length === 0 && mealPeriods ? 'warn' : 'muted' }, notes.mealPeriods));
    return h(
      'article',
      { class: 'card item', 'aria-labelledby': headingId },
      h('h2', { id: headingId, class: 'item-name' }, item.itemName),
      h('p', { class: 'muted' }, `PLU ${item.plu} · item ${item.itemId} · ${item.itemType === 'MENU' ? 'menu' : 'recipe'} · ${this.locationNames.get(item.locationId) ?? 'location'} (${item.locationId})`),
      h('p', { class: 'item-date' }, `On ${date}${dateAsked ? '' : ' (today at this location)'}:`),
      h('div', { class: 'two-col' }, prices, availability),
    );
  }
}

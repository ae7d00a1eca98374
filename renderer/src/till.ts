import { ApiError, errorText, get } from './api';
import { notYetOnTillNotes, tillDayNotes } from '../../src/domain/wording';
import { h, replace, shortTime } from './dom';
import type { StatusLocation, TillAnswer } from './types';
import { setText } from './keep-place';

type LookupReply = { date: string | null; items: TillAnswer[] };

/** What a shown answer was asked with; the same question is asked again when the till may have changed. */
interface Question {
  readonly plu: string;
  readonly date: string;
  readonly location: string;
}

/** "What will the till charge?": the POS views' answer for a PLU on a date. */
export class TillView {
  readonly element: HTMLElement;
  private readonly results: HTMLElement;
  private readonly plu: HTMLInputElement;
  private readonly date: HTMLInputElement;
  private readonly location: HTMLSelectElement;
  private locationNames = new Map<number, string>();
  /** Per location with updates sent but not on the till yet: what to say beside its answers. */
  private notYetOnTill = new Map<number, string>();
  /** The answer on show (its question, its reply, and that as JSON to compare), or null while none is (asking, an error). */
  private shown: { readonly question: Question; readonly json: string; readonly answer: LookupReply } | null = null;

  constructor() {
    // No maxlength: it would cut a pasted PLU without a word, and it counts UTF-16 units where the
    // till's limit counts characters. The agent answers a PLU over the limit with the limit.
    this.plu = h('input', { id: 'till-plu', name: 'plu', type: 'text', inputmode: 'numeric', autocomplete: 'off', required: true, size: 10 });
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

  setLocations(locations: readonly StatusLocation[], paused: boolean): void {
    const selected = this.location.value;
    this.locationNames = new Map(locations.map((l) => [l.locationId, l.locationName ?? `Location ${l.locationId}`]));
    this.notYetOnTill = notYetOnTillNotes(locations, paused);
    replace(this.location, h('option', { value: '' }, 'All locations'), ...locations.map((l) => h('option', { value: String(l.locationId) }, `${l.locationName ?? 'Location'} (${l.locationId})`)));
    this.location.value = selected;
    this.showNotYetOnTill();
  }

  /**
   * Above the answer on show: for each of its locations (the one asked for, or every location when
   * none was asked and nothing was found) with updates head office has sent that are not on the till
   * yet, that the answer may change. Kept up to date in place at every refresh, apart from the answer.
   */
  private showNotYetOnTill(): void {
    const block = this.results.querySelector('#till-not-yet');
    if (!block || this.shown === null) return;
    const { question, answer } = this.shown;
    const asked = question.location === '' ? null : Number(question.location);
    const ids = asked !== null ? [asked] : answer.items.length > 0 ? [...new Set(answer.items.map((i) => i.locationId))] : [...this.notYetOnTill.keys()];
    const notes = ids.flatMap((id) => {
      const note = this.notYetOnTill.get(id);
      return note === undefined ? [] : [{ id, text: `${this.locationNames.get(id) ?? 'Location'} (${id}): ${note}` }];
    });
    const wanted = notes.map((n) => n.text).join('\n');
    const present = [...block.children].map((c) => c.textContent ?? '').join('\n');
    // The results are a live region: a note is written again only when it changed.
    if (wanted !== present) replace(block as HTMLElement, ...notes.map((n) => h('p', { class: 'warn', id: `till-not-yet-${n.id}` }, n.text)));
  }

  private async lookup(): Promise<void> {
    const plu = this.plu.value.trim();
    if (!plu) {
      this.plu.focus();
      return;
    }
    this.shown = null;
    const date = this.date.value.trim();
    if (date !== '' && !/^\d{4}-\d{2}-\d{2}$/.test(date)) {
      replace(this.results, h('p', { class: 'error', id: 'till-date-error' }, `Write the date as YYYY-MM-DD (for example ${new Date().toISOString().slice(0, 10)}), or leave it empty for today.`));
      this.date.focus();
      return;
    }
    const question: Question = { plu, date, location: this.location.value };
    replace(this.results, h('p', { class: 'muted' }, 'Looking up…'));
    try {
      const answer = await this.ask(question);
      this.shown = { question, json: JSON.stringify(answer), answer };
      this.show(question, answer, null);
    } catch (err) {
      const text = errorText(err);
      replace(this.results, h('p', { class: 'error', id: 'till-error' }, text.charAt(0).toUpperCase() + text.slice(1)));
      // The agent names what it refused: the field to correct gets the focus.
      if (err instanceof ApiError && err.id === 'plu_too_long') this.plu.focus();
      else if (err instanceof ApiError && err.id === 'invalid_date') this.date.focus();
    }
  }

  private ask(question: Question): Promise<LookupReply> {
    return get<LookupReply>('/api/lookup', { plu: question.plu, date: question.date, location: question.location });
  }

  /**
   * Asks the shown answer's question again (something changed on the agent, or the slow poll): the
   * till's prices may have changed since. A different reply replaces the answer and says when it
   * changed; the same one leaves the page as it is. The fields, what is typed in them and the focus
   * are left alone; a lookup asked meanwhile wins.
   */
  async refresh(): Promise<void> {
    const shown = this.shown;
    if (shown === null) return;
    let answer: LookupReply;
    try {
      answer = await this.ask(shown.question);
    } catch (err) {
      if (this.shown !== shown) return;
      const text = `This answer could not be checked again (${errorText(err)}): it may be out of date.`;
      // The results are a live region: the same note written again would be announced again.
      const old = this.results.querySelector('#till-stale');
      if (old) setText(old, text);
      else this.results.prepend(h('p', { class: 'warn', id: 'till-stale' }, text));
      return;
    }
    if (this.shown !== shown) return;
    const json = JSON.stringify(answer);
    if (json === shown.json) {
      this.results.querySelector('#till-stale')?.remove();
      this.showNotYetOnTill();
      return;
    }
    this.shown = { question: shown.question, json, answer };
    this.show(shown.question, answer, new Date().toISOString());
  }

  /**
   * The items found, each card with the date it is answered for: a date asked for is every item's;
   * without one each location's own today, which differs between timezones (the answer's date is
   * then null and the count says so instead of naming one date).
   */
  private show(question: Question, answer: LookupReply, changedAt: string | null): void {
    const { plu } = question;
    const dateAsked = question.date !== '';
    // Said when the answer was asked again and came back different: what is shown is the till's now.
    const changed = changedAt === null ? null : h('p', { class: 'muted', id: 'till-updated' }, 'Updated ', h('time', { datetime: changedAt }, shortTime(changedAt)), ': the till\'s answer changed since it was first shown.');
    const notYet = h('div', { id: 'till-not-yet' });
    if (answer.items.length === 0) {
      replace(this.results, changed, notYet, h('p', { class: 'empty card' }, `No item with PLU ${plu} is known to the till.`));
      this.showNotYetOnTill();
      return;
    }
    const count = `${answer.items.length} item${answer.items.length === 1 ? '' : 's'} with PLU ${plu}`;
    replace(
      this.results,
      changed,
      notYet,
      h('p', { class: 'muted', id: 'till-count' }, answer.date !== null ? `${count} on ${answer.date}:` : `${count}, each on today's date at its own location (the locations' dates differ):`),
      answer.items.length > 1
        ? h('p', { class: 'muted', id: 'till-plu-repeats' }, `PLUs can repeat: these ${answer.items.length} items share PLU ${plu} (at different locations, or as different items of one menu). The till tells them apart by location and item ID; each is shown with its own prices.`)
        : null,
      ...answer.items.map((item) => this.itemCard(item, item.date, dateAsked)),
    );
    this.showNotYetOnTill();
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


import { get, setPerson } from './api';
import { byId, fullTime, h, replace, shortTime } from './dom';

interface AuditRow {
  readonly id: number;
  readonly at: string;
  readonly actor: string;
  readonly person: string;
  readonly action: string;
  readonly text: string;
}

/** Activity: who did what and when (the audit log), newest first; `pos-sync-agent audit` prints the same. */
export class ActivityView {
  readonly element: HTMLElement;
  private readonly body: HTMLTableSectionElement;
  private readonly more: HTMLButtonElement;
  private oldest: number | null = null;

  constructor() {
    this.body = h('tbody', {});
    this.more = h('button', { type: 'button', class: 'secondary small', onclick: () => void this.load(false) }, 'Show older');
    this.element = h(
      'div',
      {},
      h('h1', { class: 'visually-hidden' }, 'Activity'),
      h(
        'section',
        { class: 'card' },
        h('h2', {}, 'Who did what'),
        h('p', { class: 'muted' }, 'Pauses, force-applies, resolved conflicts, imports, secrets, restores and sign-ins, newest first. From the command line: ', h('code', {}, 'pos-sync-agent audit')),
        h('div', { class: 'table-scroll' }, h('table', { class: 'data', id: 'activity-table' }, h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'When'), h('th', { scope: 'col' }, 'Who'), h('th', { scope: 'col' }, 'What'))), this.body)),
        this.more,
      ),
    );
  }

  async refresh(): Promise<void> {
    await this.load(true);
  }

  private async load(fromStart: boolean): Promise<void> {
    const r = await get<{ records: AuditRow[] }>('/api/audit', { limit: 100, before: fromStart ? null : this.oldest });
    const rows = r.records.map((a) =>
      h(
        'tr',
        { 'data-action': a.action },
        h('td', {}, h('time', { datetime: a.at, title: fullTime(a.at) }, shortTime(a.at))),
        h('td', { title: a.actor }, a.person),
        h('td', {}, a.text),
      ),
    );
    if (fromStart) replace(this.body, ...rows);
    else this.body.append(...rows);
    if (fromStart && rows.length === 0) this.body.append(h('tr', {}, h('td', { colspan: '3' }, 'Nothing recorded yet.')));
    this.oldest = r.records.at(-1)?.id ?? this.oldest;
    this.more.hidden = r.records.length < 100;
  }
}

const PERSON_KEY = 'pos-sync-person';

/**
 * Asks the person's name once per window session (kept in sessionStorage, so a new window asks
 * again): it is recorded with each change they make. Not a sign-in; nothing is blocked until given.
 */
export function askPerson(): void {
  const saved = sessionStorage.getItem(PERSON_KEY);
  if (saved) {
    usePerson(saved);
    return;
  }
  const holder = byId('person-ask');
  const input = h('input', { id: 'person-name', type: 'text', maxlength: 60, autocomplete: 'name', required: 'required' });
  const form = h(
    'form',
    { class: 'person-form' },
    h('label', { for: 'person-name' }, 'Your name'),
    input,
    h('button', { type: 'submit' }, 'Save'),
    h('span', { class: 'muted' }, 'Recorded with each change you make here (see Activity). Asked once per window.'),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const name = input.value.trim();
    if (!name) return;
    sessionStorage.setItem(PERSON_KEY, name);
    usePerson(name);
  });
  replace(holder, h('p', { class: 'person-question' }, h('strong', {}, 'Who is using this window?')), form);
  holder.hidden = false;
}

function usePerson(name: string): void {
  setPerson(name);
  byId('person-ask').hidden = true;
  const change = h(
    'button',
    {
      type: 'button',
      class: 'link small',
      onclick: () => {
        sessionStorage.removeItem(PERSON_KEY);
        setPerson(null);
        replace(byId('person'));
        askPerson();
      },
    },
    'change',
  );
  replace(byId('person'), 'You: ', h('strong', { id: 'person-current' }, name), ' ', change);
}

import { ApiError, errorText, get, send } from './api';
import { ago, clockTime, h, replace, shortTime, toast } from './dom';

// The staff lookups' own JSON types (src/employees/model.ts is type-only and import-free).
import type { AccrualView as Accrual, Freshness, ResidencyView as Residency, StaffLink, StaffSummary as Summary } from '../../src/employees/model';
import { plainServiceProblem, staffRetryText } from '../../src/domain/wording';

/** Expired, or ending today (the severity model counts it red: src/admin/summary.ts staffSeverityOf). */
function isExpired(r: Residency): boolean {
  return r.warning !== null && r.daysToExpiry !== null && r.daysToExpiry <= 0;
}

/** The person card the admin API builds from the staff lookups (src/admin/server.ts). */
interface Card {
  readonly employeeId: number;
  readonly employeeNumber: string | null;
  readonly name: string;
  readonly knownAs: string | null;
  readonly former: boolean;
  readonly formerSince: string | null;
  readonly startDate: string | null;
  readonly leaveDate: string | null;
  readonly ir35: boolean | null;
  readonly furloughed: boolean | null;
  readonly contractHours: number | null;
  readonly employments: { jobTitle: string | null; locationId: number | null; locationName: string | null; startDate: string | null; endDate: string | null }[];
  readonly manager: { name: string | null; employeeNumber: string | null; employeeId: number | null } | null;
  readonly residency: Residency;
  readonly accrual: Accrual | null;
  readonly freshness: Freshness;
}

interface StaffState {
  readonly configured: boolean;
  readonly syncing?: boolean;
  /** The employee service as the latest attempt found it, live while a sync retries. */
  readonly link?: StaffLink;
  readonly freshness?: Freshness[];
  readonly residencyWarnings?: { employee: Summary; residency: Residency }[];
  readonly residencyWarningCount?: number;
}

const yesNo = (v: boolean | null): string => (v === null ? 'not known' : v ? 'Yes' : 'No');

/** Staff lookup: search as you type, a person's card, holiday balance on demand, offline banner. */
export class StaffView {
  readonly element: HTMLElement;
  private readonly header: HTMLElement;
  private readonly warnings: HTMLElement;
  private readonly results: HTMLUListElement;
  private readonly card: HTMLElement;
  private readonly input: HTMLInputElement;
  private readonly layout: HTMLElement;
  private searchSeq = 0;
  private debounce: number | undefined;
  private selected: number | null = null;
  private lastQuery: string | null = null;

  constructor() {
    this.header = h('div', { id: 'staff-header' });
    this.warnings = h('div', {});
    this.input = h('input', { id: 'staff-search', type: 'search', autocomplete: 'off', spellcheck: 'false', maxlength: 100, 'aria-controls': 'staff-results', placeholder: 'Name or employee number' });
    this.results = h('ul', { id: 'staff-results', class: 'staff-results', 'aria-label': 'Matching staff' });
    this.card = h('div', { id: 'staff-card', 'aria-live': 'polite' }, h('p', { class: 'muted card' }, 'Choose a person to see their card.'));
    this.input.addEventListener('input', () => {
      window.clearTimeout(this.debounce);
      this.debounce = window.setTimeout(() => void this.search(), 200);
    });
    this.layout = h(
      'div',
      { class: 'staff-layout' },
      h('section', { class: 'card', 'aria-labelledby': 'staff-search-heading' }, h('h2', { id: 'staff-search-heading' }, 'Find a person'), h('label', { for: 'staff-search' }, 'Search staff'), h('div', {}, this.input), h('p', { id: 'staff-count', class: 'muted', 'aria-live': 'polite' }), this.results),
      this.card,
    );
    this.element = h('div', {}, h('h1', { class: 'visually-hidden' }, 'Staff'), this.header, this.warnings, this.layout);
  }

  async refresh(): Promise<void> {
    const state = await get<StaffState>('/api/staff');
    if (!state.configured) {
      replace(this.header, h('section', { class: 'card' }, h('h2', {}, 'Staff lookups'), h('p', {}, 'Staff lookups are not configured on this agent.'), h('p', { class: 'muted' }, 'IT adds an "employees" section to the agent configuration to connect the employee interface.')));
      this.layout.hidden = true;
      this.warnings.hidden = true;
      return;
    }
    this.layout.hidden = false;
    this.warnings.hidden = false;
    this.renderHeader(state);
    this.renderWarnings(state);
  }

  private renderHeader(state: StaffState): void {
    const employees = state.freshness?.find((f) => f.resource === 'employees') ?? null;
    const refresh = h('button', { type: 'button', class: 'secondary small', onclick: () => void this.syncNow(refresh) }, state.syncing ? 'Refreshing…' : 'Refresh staff data now');
    if (state.syncing) refresh.disabled = true;
    const link = state.link ?? null;
    // Offline from the first failed attempt (link), not only once a whole sync has given up (lastError).
    const offline = (link !== null && link.problem !== null) || (employees !== null && (employees.lastError !== null || employees.stale));
    replace(
      this.header,
      offline ? this.offlineBanner(employees, link, state.syncing === true) : null,
      h(
        'div',
        { class: 'row' },
        h('span', { class: 'muted', id: 'staff-freshness' }, employees?.refreshedAt ? `Staff data refreshed ${ago(employees.refreshedAt)} (${shortTime(employees.refreshedAt)}).` : 'Staff data has not been downloaded yet.'),
        refresh,
      ),
    );
  }

  private offlineBanner(f: Freshness | null, link: StaffLink | null, syncing: boolean): HTMLElement {
    const age = f?.refreshedAt ? `last refreshed ${ago(f.refreshedAt)} (${shortTime(f.refreshedAt)})` : 'never downloaded';
    const problem = link?.problem ?? f?.lastError ?? null;
    // While a sync goes on, what it is doing about it: the next attempt and when, with a way to try now.
    const retry = link !== null && link.problem !== null ? staffRetryText(link.retry, syncing, clockTime) : null;
    const tryNow = link?.retry?.at ? h('button', { type: 'button', class: 'secondary small', id: 'staff-retry-now', onclick: () => void this.retryNow() }, 'Try again now') : null;
    return h(
      'div',
      { class: 'banner banner-offline', role: 'status', id: 'staff-offline', 'data-retrying': String(link?.retry != null) },
      h('strong', {}, 'Offline: '),
      `staff data is from the offline cache, ${age}.`,
      problem ? ` ${plainServiceProblem(problem)}` : '',
      retry ? h('span', { id: 'staff-retry' }, ` ${retry}`) : null,
      tryNow ? ' ' : null,
      tryNow,
      // The raw error (address, system error code) is for support, folded away.
      problem ? h('details', { class: 'tech' }, h('summary', {}, 'Technical details'), h('code', {}, problem)) : null,
    );
  }

  private async retryNow(): Promise<void> {
    try {
      await send('POST', '/api/staff/retry', {});
    } catch (err) {
      toast(`Could not try again: ${errorText(err)}`, 'error');
    }
    await this.refresh();
  }

  private renderWarnings(state: StaffState): void {
    const list = state.residencyWarnings ?? [];
    if (list.length === 0) {
      replace(this.warnings);
      return;
    }
    // Expired (or ending today) needs a person now: red and open. Ending soon: amber, folded.
    const expired = list.filter((w) => isExpired(w.residency));
    const soon = list.filter((w) => !isExpired(w.residency));
    const item = (w: { employee: Summary; residency: Residency }): HTMLElement =>
      h('li', {}, h('button', { type: 'button', class: 'link', onclick: () => void this.open(w.employee.employeeId) }, w.employee.name), `: ${w.residency.warning ?? ''}`);
    replace(
      this.warnings,
      expired.length === 0
        ? null
        : h(
            'details',
            { class: 'card card-red', id: 'residency-expired', open: 'open' },
            h('summary', {}, h('span', { class: 'badge badge-red' }, 'Attention'), ` ${expired.length} right-to-work permission${expired.length === 1 ? ' has' : 's have'} expired or end${expired.length === 1 ? 's' : ''} today — this person may not work until it is renewed`),
            h('ul', {}, ...expired.map(item)),
          ),
      soon.length === 0
        ? null
        : h(
            'details',
            { class: 'card card-amber', id: 'residency-warnings' },
            h('summary', {}, h('span', { class: 'badge badge-amber' }, 'Check'), ` ${soon.length} right-to-work permission${soon.length === 1 ? '' : 's'} expiring soon`),
            h('ul', {}, ...soon.map(item)),
          ),
    );
  }

  private async syncNow(button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    button.textContent = 'Refreshing…';
    try {
      const r = await send<{ errors: { resource: string; message: string }[] }>('POST', '/api/staff/sync', {});
      toast(r.errors.length ? `Staff data refresh failed for: ${r.errors.map((e) => e.resource).join(', ')}.` : 'Staff data refreshed.', r.errors.length ? 'error' : 'ok');
    } catch (err) {
      toast(`Could not refresh: ${errorText(err)}`, 'error');
    }
    await this.refresh();
    if (this.lastQuery !== null) await this.search(true);
  }

  private async search(force = false): Promise<void> {
    const q = this.input.value.trim();
    if (!force && q === this.lastQuery) return;
    this.lastQuery = q;
    const seq = ++this.searchSeq;
    const count = this.element.querySelector('#staff-count');
    if (q === '') {
      replace(this.results);
      if (count) count.textContent = '';
      return;
    }
    try {
      const r = await get<{ results: Summary[]; truncated: boolean }>('/api/staff/search', { q });
      if (seq !== this.searchSeq) return; // a newer search has started: drop this answer
      if (count) count.textContent = r.results.length === 0 ? `Nobody matches "${q}".` : `${r.results.length}${r.truncated ? '+' : ''} match${r.results.length === 1 ? '' : 'es'}`;
      replace(
        this.results,
        ...r.results.map((p) =>
          h(
            'li',
            {},
            h(
              'button',
              { type: 'button', 'data-employee': p.employeeId, 'aria-current': String(p.employeeId === this.selected), onclick: () => void this.open(p.employeeId) },
              p.name,
              h('span', { class: 'sub' }, [p.employeeNumber ?? `ID ${p.employeeId}`, p.former ? 'former' : null, p.furloughed ? 'furloughed' : null].filter(Boolean).join(' · ')),
            ),
          ),
        ),
      );
    } catch (err) {
      if (seq === this.searchSeq && count) count.textContent = errorText(err);
    }
  }

  private async open(employeeId: number): Promise<void> {
    this.selected = employeeId;
    for (const b of this.results.querySelectorAll('button')) b.setAttribute('aria-current', String(b.dataset.employee === String(employeeId)));
    try {
      const card = await get<Card>(`/api/staff/${employeeId}`);
      this.renderCard(card);
    } catch (err) {
      replace(this.card, h('p', { class: 'error card' }, errorText(err)));
    }
  }

  private renderCard(c: Card): void {
    const balance = h('div', { id: 'staff-accrual' }, c.accrual ? this.accrualBlock(c.accrual) : h('p', { class: 'muted' }, 'Not fetched yet.'));
    const fetch = h('button', { type: 'button', class: 'secondary small', onclick: () => void this.fetchAccrual(c.employeeId, balance, fetch) }, 'Get current holiday balance');
    const residencyText = c.residency.status === null ? 'none recorded' : `${c.residency.status}${c.residency.expiryDate ? `, expires ${c.residency.expiryDate}` : ''}`;
    replace(
      this.card,
      h(
        'article',
        { class: 'card', 'aria-labelledby': 'staff-name' },
        h(
          'header',
          { class: 'card-head' },
          h('h2', { id: 'staff-name' }, c.name),
          c.former
            ? h('span', { class: 'badge badge-amber' }, 'Former employee')
            : isExpired(c.residency)
              ? h('span', { class: 'badge badge-red' }, 'Right to work expired')
              : h('span', { class: 'badge badge-green' }, 'Current'),
        ),
        c.residency.warning
          ? h('p', { class: isExpired(c.residency) ? 'error' : 'warn', id: 'residency-warning', 'data-expired': String(isExpired(c.residency)) }, h('strong', {}, 'Right to work: '), c.residency.warning, '.')
          : null,
        h(
          'dl',
          { class: 'facts' },
          h('dt', {}, 'Employee number'),
          h('dd', {}, c.employeeNumber ?? '—'),
          c.knownAs ? h('dt', {}, 'Known as') : null,
          c.knownAs ? h('dd', {}, c.knownAs) : null,
          h('dt', {}, 'Started'),
          h('dd', {}, c.startDate ?? '—'),
          c.former ? h('dt', {}, 'Left') : null,
          c.former ? h('dd', {}, c.leaveDate ?? (c.formerSince ? shortTime(c.formerSince) : '—')) : null,
          h('dt', {}, 'Manager'),
          h('dd', {}, c.manager ? `${c.manager.name ?? 'unknown name'}${c.manager.employeeNumber ? ` (${c.manager.employeeNumber})` : ''}` : '—'),
          h('dt', {}, 'IR35 (off-payroll)'),
          h('dd', {}, yesNo(c.ir35)),
          h('dt', {}, 'Furloughed'),
          h('dd', {}, yesNo(c.furloughed)),
          h('dt', {}, 'Contract hours'),
          h('dd', {}, c.contractHours === null ? '—' : `${c.contractHours} hours a week`),
          h('dt', {}, 'Right to work'),
          h('dd', {}, residencyText),
        ),
        c.employments.length === 0
          ? null
          : h(
              'table',
              { class: 'data' },
              h('caption', {}, 'Employment'),
              h('thead', {}, h('tr', {}, ...['Job', 'Location', 'From', 'To'].map((t) => h('th', { scope: 'col' }, t)))),
              h('tbody', {}, ...c.employments.map((e) => h('tr', {}, h('td', {}, e.jobTitle ?? '—'), h('td', {}, e.locationName ? `${e.locationName} (${e.locationId})` : e.locationId === null ? '—' : String(e.locationId)), h('td', {}, e.startDate ?? '—'), h('td', {}, e.endDate ?? '—')))),
            ),
        h('h3', {}, 'Holiday balance'),
        balance,
        fetch,
        h('p', { class: 'muted' }, `Card from staff data refreshed ${c.freshness.refreshedAt ? ago(c.freshness.refreshedAt) : 'never'}.`),
      ),
    );
  }

  private accrualBlock(a: Accrual): HTMLElement {
    const when = `${a.source === 'live' ? 'fetched from the employee service' : 'from the offline cache, fetched'} ${ago(a.fetchedAt)} (${shortTime(a.fetchedAt)})`;
    return h(
      'div',
      {},
      h('p', {}, h('strong', { class: 'balance' }, a.balanceText), ` — ${when}.`),
      a.liveError ? h('p', { class: 'warn' }, `This is the last balance fetched. ${plainServiceProblem(a.liveError)}`) : null,
      a.flexible === true
        ? h('p', { class: 'muted' }, `Flexible worker: about ${a.avgHoursPerWeek ?? '?'} hours over ${a.avgDaysPerWeek ?? '?'} days a week${a.dayRate ? `, day rate ${a.dayRate}` : ''}.`)
        : a.flexible === false
          ? h('p', { class: 'muted' }, 'Fixed hours: the flexible-worker averages do not apply.')
          : null,
    );
  }

  private async fetchAccrual(employeeId: number, target: HTMLElement, button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    replace(target, h('p', { class: 'muted' }, 'Asking the employee service…'));
    try {
      const r = await get<{ accrual: Accrual | null }>(`/api/staff/${employeeId}/accrual`, { refresh: 1 });
      replace(target, r.accrual ? this.accrualBlock(r.accrual) : h('p', { class: 'muted' }, 'The employee service has no holiday record for this person.'));
    } catch (err) {
      // The employee service's failure in a manager's words, its technical text one click away (as the banner).
      const technical = err instanceof ApiError && err.id.startsWith('employee_api_') ? err.message : null;
      replace(
        target,
        h('p', { class: 'error' }, technical === null ? `Could not get the balance: ${errorText(err)}` : `Could not get the balance. ${plainServiceProblem(technical)}`),
        technical === null ? null : h('details', { class: 'tech' }, h('summary', {}, 'Technical details'), h('code', {}, technical)),
      );
    }
    button.disabled = false;
  }
}

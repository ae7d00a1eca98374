import { errorText, get, send } from './api';
import { confirmDialog, h, replace, toast } from './dom';

const byIdOrNull = (id: string): HTMLElement | null => document.getElementById(id);
import { secretsCard, type SecretsListing } from './secrets';
import type { Panel, RetentionDayKey, SettingsResponse } from './types';
import { webhookTokenRow } from './webhook-token';

const RETENTION_FIELDS: { key: RetentionDayKey; label: string; help: string }[] = [
  { key: 'rawPayloadDays', label: 'Update bodies', help: 'the stored copy of each update, counted from when it was applied' },
  { key: 'quarantineDays', label: 'Refused and conflicting bodies', help: 'updates the agent could not accept' },
  { key: 'rangeDays', label: 'Ended prices and availability', help: 'counted from the day a price or meal period ended' },
  { key: 'deliveryDays', label: 'Delivery history', help: 'the list under Deliveries' },
];

/** Settings a manager may change, the webhook address for head office, and panels other modules add. */
export class SettingsView {
  readonly element: HTMLElement;
  private readonly main: HTMLElement;
  private readonly panels: HTMLElement;
  /** The last result of each panel action, kept across refreshes (a toast alone would vanish). */
  private readonly results = new Map<string, { text: string; kind: 'ok' | 'error' }>();
  private scrollToOperations = false;
  private secrets: SecretsListing | null = null;

  constructor() {
    this.main = h('div', {});
    this.panels = h('div', { id: 'ops-panels', class: 'ops-panels' });
    this.element = h(
      'div',
      {},
      h('h1', { class: 'visually-hidden' }, 'Settings'),
      this.main,
      h('section', { class: 'card', 'aria-labelledby': 'ops-heading' }, h('h2', { id: 'ops-heading' }, 'Operations'), this.panels),
    );
  }

  /** `force`: rebuild the forms even while one has focus (after saving), keeping focus on the same control. */
  async refresh(force = false): Promise<void> {
    const [s, panels] = await Promise.all([get<SettingsResponse>('/api/settings'), get<{ panels: Panel[] }>('/api/panels')]);
    // Only the desktop app stores secrets from the window (headless: `pos-sync-agent secrets set`).
    this.secrets = s.shell === 'electron' ? await get<SecretsListing>('/api/secrets') : null;
    // Keep what the manager is typing: the 30 s poll and live events do not rebuild a form in use.
    const focused = this.main.contains(document.activeElement) ? (document.activeElement as HTMLElement) : null;
    if (force || !focused) {
      this.renderMain(s);
      if (focused?.id) byIdOrNull(focused.id)?.focus();
    }
    this.renderPanels(panels.panels);
    if (this.scrollToOperations) {
      this.scrollToOperations = false;
      byIdOrNull('ops-heading')?.scrollIntoView({ block: 'start' });
    }
  }

  /** The next render scrolls to the Operations section (from a banner on the status tab). */
  showOperationsNext(): void {
    this.scrollToOperations = true;
  }

  private renderMain(s: SettingsResponse): void {
    const urlInput = h('input', { id: 'webhook-url', type: 'text', readonly: true, value: s.webhookUrl ?? 'the webhook receiver is not running', size: 60 });
    const copy = h(
      'button',
      {
        type: 'button',
        class: 'secondary',
        onclick: () => {
          urlInput.select();
          navigator.clipboard?.writeText(urlInput.value).then(
            () => toast('Webhook address copied.'),
            () => toast('Select the address and copy it with Ctrl+C.', 'error'),
          );
        },
      },
      'Copy',
    );
    const desktop = s.shell === 'electron';
    const startAtLogin = h('input', { id: 'start-at-login', type: 'checkbox', disabled: !desktop });
    startAtLogin.checked = s.settings.startAtLogin;
    startAtLogin.addEventListener('change', () => void this.save({ startAtLogin: startAtLogin.checked }, startAtLogin));
    replace(
      this.main,
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'webhook-heading' },
        h('h2', { id: 'webhook-heading' }, 'Webhook address for head office'),
        h('p', { class: 'muted' }, 'Give this address and the token to head office support when they set up (or change) the menu cycle webhook. Head office sends the token with every update.'),
        h('div', { class: 'row' }, h('label', { for: 'webhook-url' }, 'Address'), urlInput, copy),
        webhookTokenRow(s.webhookToken),
        s.webhookUrlIsPublic
          ? null
          : h('p', { class: 'warn' }, 'This is the local address of the receiver. Head office needs a public HTTPS address (a tunnel or proxy in front of it); ask IT to set admin.publicWebhookUrl once it exists.'),
      ),
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'desktop-heading' },
        h('h2', { id: 'desktop-heading' }, 'Desktop app'),
        h('div', { class: 'row' }, startAtLogin, h('label', { for: 'start-at-login' }, 'Start the agent when this PC user logs in')),
        desktop ? null : h('p', { class: 'muted', id: 'start-at-login-note' }, 'This applies to the desktop app only; this window is open in a browser.'),
        h('p', { class: 'muted' }, `Saved in ${s.settingsFile}. Data folder: ${s.dataDir}.`),
      ),
      this.secrets ? secretsCard(this.secrets, () => this.refresh(true)) : null,
      this.retentionCard(s),
    );
  }

  /**
   * How long data is kept. A period set here wins over the agent configuration; clearing it (or
   * entering the configured value) follows the configuration again. Applies from the next prune.
   */
  private retentionCard(s: SettingsResponse): HTMLElement {
    const enabled = s.retention.enabled;
    const inputs = new Map<RetentionDayKey, HTMLInputElement>();
    const rows = RETENTION_FIELDS.map((f) => {
      const configured = s.retention.configured[f.key];
      const override = s.settings.retention[f.key];
      const id = `retention-${f.key}`;
      const input = h('input', { id, type: 'number', min: 1, max: 3650, step: 1, required: true, value: override ?? configured, disabled: !enabled, 'aria-describedby': `${id}-note`, class: 'days' });
      inputs.set(f.key, input);
      return h(
        'tr',
        {},
        h('th', { scope: 'row' }, h('label', { for: id }, f.label), h('span', { class: 'sub' }, f.help)),
        h('td', {}, input, ' days'),
        h('td', { id: `${id}-note`, class: override === undefined ? 'muted' : 'level-warn' }, override === undefined ? 'as configured' : `set here (configured: ${configured})`),
      );
    });
    const save = h('button', { type: 'button', class: 'primary', disabled: !enabled }, 'Save retention');
    const reset = h('button', { type: 'button', class: 'secondary', disabled: !enabled || Object.keys(s.settings.retention).length === 0 }, 'Use configured values');
    save.addEventListener('click', () => {
      const patch: Partial<Record<RetentionDayKey, number | null>> = {};
      for (const f of RETENTION_FIELDS) {
        const input = inputs.get(f.key)!;
        if (!input.reportValidity()) return;
        const value = Number(input.value);
        // The configured value typed back means "follow the configuration" again.
        patch[f.key] = value === s.retention.configured[f.key] ? null : value;
      }
      void this.save({ retention: patch }, save);
    });
    reset.addEventListener('click', () => void this.save({ retention: Object.fromEntries(RETENTION_FIELDS.map((f) => [f.key, null])) }, reset));
    return h(
      'section',
      { class: 'card', 'aria-labelledby': 'retention-heading', id: 'retention-settings' },
      h('h2', { id: 'retention-heading' }, 'How long the agent keeps data'),
      enabled
        ? h('p', { class: 'muted' }, 'A period set here wins over the agent configuration and applies from the next prune (see Retention under Operations). Updates still waiting to be applied are never deleted.')
        : h('p', { class: 'warn' }, 'Retention is switched off in the agent configuration: nothing is deleted. Ask IT to switch it on.'),
      h('table', { class: 'data retention' }, h('caption', { class: 'visually-hidden' }, 'Retention periods'), h('tbody', {}, ...rows)),
      h('div', { class: 'row' }, save, reset),
    );
  }

  private async save(patch: Record<string, unknown>, control: HTMLInputElement | HTMLButtonElement): Promise<void> {
    control.disabled = true;
    try {
      await send('PUT', '/api/settings', patch);
      toast('Setting saved.');
    } catch (err) {
      toast(`Not saved: ${errorText(err)}`, 'error');
    }
    await this.refresh(true);
  }

  private renderPanels(panels: Panel[]): void {
    if (panels.length === 0) {
      replace(this.panels, h('p', { class: 'muted' }, 'No operations panel is installed (tunnel, retention and diagnostics appear here when they are).'));
      return;
    }
    // A refresh while an action runs must not re-enable its button or drop its "working" state.
    if (this.panels.querySelector('button[aria-busy="true"]')) return;
    // Rebuilt on every live refresh: keep keyboard focus on the same action button.
    const focused = this.panels.contains(document.activeElement) ? (document.activeElement as HTMLElement) : null;
    const focusKey = focused?.dataset.action ? `[data-panel="${focused.closest<HTMLElement>('[data-panel]')?.dataset.panel ?? ''}"] [data-action="${focused.dataset.action}"]` : null;
    replace(
      this.panels,
      ...panels.map((p) => {
        const result = this.results.get(p.name);
        const headingId = `panel-${p.name}-heading`;
        return h(
          'section',
          { class: 'panel', 'data-panel': p.name, 'aria-labelledby': headingId },
          h('h3', { id: headingId }, p.title),
          h('dl', { class: 'facts' }, ...p.items.flatMap((i) => [h('dt', {}, i.label), h('dd', { class: `${i.level ? `level-${i.level}` : ''}${i.value.includes('\n') ? ' pre' : ''}` }, i.value)])),
          p.actions.length === 0 ? null : h('div', { class: 'row' }, ...p.actions.map((a) => h('button', { type: 'button', class: 'secondary', 'data-action': a.id, onclick: (e: Event) => void this.runAction(p, a, e.currentTarget as HTMLButtonElement) }, a.label))),
          h('p', { class: `action-result${result ? ` action-result-${result.kind}` : ''}`, role: 'status', 'aria-live': 'polite' }, result?.text ?? ''),
        );
      }),
    );
    if (focusKey) this.panels.querySelector<HTMLElement>(focusKey)?.focus();
  }

  private async runAction(panel: Panel, action: Panel['actions'][number], button: HTMLButtonElement): Promise<void> {
    if (action.confirm) {
      const answer = await confirmDialog({ title: `${action.label}?`, body: [h('p', {}, action.confirm)], confirmLabel: action.label });
      if (!answer.confirmed) return;
    }
    button.disabled = true;
    button.setAttribute('aria-busy', 'true');
    const label = button.textContent;
    button.textContent = 'Working…';
    try {
      const r = await send<{ message: string }>('POST', `/api/panels/${encodeURIComponent(panel.name)}/actions/${encodeURIComponent(action.id)}`, {});
      // Shown in the panel (a live region) rather than a toast: it stays, and a toast would cover it.
      this.results.set(panel.name, { text: r.message, kind: 'ok' });
    } catch (err) {
      this.results.set(panel.name, { text: errorText(err), kind: 'error' });
    }
    button.removeAttribute('aria-busy');
    button.textContent = label;
    await this.refresh();
    // The panel was rebuilt: give focus back to the (new) button, so a keyboard user stays in place.
    this.panels.querySelector<HTMLElement>(`[data-panel="${panel.name}"] [data-action="${action.id}"]`)?.focus();
  }
}

import { errorText, get, send } from './api';
import { confirmDialog, h, replace, toast } from './dom';
import type { Panel, SettingsResponse } from './types';

/** Settings a manager may change, the webhook address for head office, and panels other modules add. */
export class SettingsView {
  readonly element: HTMLElement;
  private readonly main: HTMLElement;
  private readonly panels: HTMLElement;

  constructor() {
    this.main = h('div', {});
    this.panels = h('div', { id: 'ops-panels' });
    this.element = h(
      'div',
      {},
      h('h1', { class: 'visually-hidden' }, 'Settings'),
      this.main,
      h('section', { class: 'card', 'aria-labelledby': 'ops-heading' }, h('h2', { id: 'ops-heading' }, 'Operations'), this.panels),
    );
  }

  async refresh(): Promise<void> {
    const [s, panels] = await Promise.all([get<SettingsResponse>('/api/settings'), get<{ panels: Panel[] }>('/api/panels')]);
    this.renderMain(s);
    this.renderPanels(panels.panels);
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
        h('p', { class: 'muted' }, 'Give this address to head office support when they set up (or change) the menu cycle webhook.'),
        h('div', { class: 'row' }, h('label', { for: 'webhook-url' }, 'Address'), urlInput, copy),
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
    );
  }

  private async save(patch: Record<string, unknown>, control: HTMLInputElement): Promise<void> {
    control.disabled = true;
    try {
      await send('PUT', '/api/settings', patch);
      toast('Setting saved.');
    } catch (err) {
      toast(`Not saved: ${errorText(err)}`, 'error');
    }
    await this.refresh();
  }

  private renderPanels(panels: Panel[]): void {
    if (panels.length === 0) {
      replace(this.panels, h('p', { class: 'muted' }, 'No operations panel is installed (tunnel, retention and diagnostics appear here when they are).'));
      return;
    }
    replace(
      this.panels,
      ...panels.map((p) =>
        h(
          'div',
          { class: 'panel', 'data-panel': p.name },
          h('h3', {}, p.title),
          h('dl', { class: 'facts' }, ...p.items.flatMap((i) => [h('dt', {}, i.label), h('dd', { class: i.level ? `level-${i.level}` : '' }, i.value)])),
          h('div', { class: 'row' }, ...p.actions.map((a) => h('button', { type: 'button', class: 'secondary', onclick: () => void this.runAction(p, a) }, a.label))),
        ),
      ),
    );
  }

  private async runAction(panel: Panel, action: Panel['actions'][number]): Promise<void> {
    if (action.confirm) {
      const answer = await confirmDialog({ title: action.label, body: [h('p', {}, action.confirm)], confirmLabel: action.label });
      if (!answer.confirmed) return;
    }
    try {
      const r = await send<{ message: string }>('POST', `/api/panels/${encodeURIComponent(panel.name)}/actions/${encodeURIComponent(action.id)}`, {});
      toast(r.message);
    } catch (err) {
      toast(errorText(err), 'error');
    }
    await this.refresh();
  }
}

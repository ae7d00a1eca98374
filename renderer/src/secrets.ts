import { errorText, send } from './api';
import { h, toast } from './dom';

/**
 * Secrets in the desktop app (Settings): the app keeps them encrypted with the system's credential
 * store; this card only sends new values and never shows one (the API returns names and sources).
 * A changed secret is used by the agent after a restart, which the card offers.
 */

export interface SecretRow {
  readonly name: string;
  readonly source: 'environment' | 'store' | null;
  readonly environmentVariable: string;
}

export interface SecretsListing {
  readonly secrets: readonly SecretRow[];
  readonly restartNeeded: boolean;
}

const LABELS: Record<string, string> = {
  'webhook.bearerToken': 'Webhook token (head office sends it with every update)',
  'webhook.tls.passphrase': 'Passphrase of the TLS certificate',
  'employees.auth.token': 'Employee interface token',
  'employees.auth.password': 'Employee interface password',
  'employees.auth.value': 'Employee interface header value',
  'tunnel.token': 'Tunnel token',
};

export function secretsCard(listing: SecretsListing, changed: () => Promise<void>): HTMLElement {
  const rows = listing.secrets.map((s, i) => {
    const id = `secret-${i}`;
    const state =
      s.source === 'environment' ? `set by ${s.environmentVariable} where the app starts (change it there)` : s.source === 'store' ? 'set (stored encrypted)' : 'not set';
    if (s.source === 'environment') {
      return h('tr', { 'data-secret': s.name }, h('th', { scope: 'row' }, LABELS[s.name] ?? s.name), h('td', { class: 'muted' }, state), h('td', {}));
    }
    const input = h('input', { id, type: 'password', autocomplete: 'new-password', spellcheck: 'false', size: 28, 'aria-label': `New value for ${LABELS[s.name] ?? s.name}` });
    const save = h('button', { type: 'button', class: 'secondary' }, s.source === 'store' ? 'Replace' : 'Save');
    save.addEventListener('click', () => {
      if (input.value.length === 0) {
        toast('Type or paste the value first.', 'error');
        return;
      }
      void change(save, s.name, input.value, changed);
    });
    const remove = s.source === 'store' ? h('button', { type: 'button', class: 'secondary', onclick: (e: Event) => void change(e.currentTarget as HTMLButtonElement, s.name, null, changed) }, 'Remove') : null;
    return h('tr', { 'data-secret': s.name }, h('th', { scope: 'row' }, h('label', { for: id }, LABELS[s.name] ?? s.name)), h('td', { class: s.source ? '' : 'muted' }, state), h('td', {}, input, ' ', save, ' ', remove));
  });
  const restart = h('button', { type: 'button', class: 'primary', id: 'secrets-restart' }, 'Restart the agent now');
  restart.addEventListener('click', () => {
    restart.disabled = true;
    send('POST', '/api/secrets/restart', {}).then(
      // The app reopens this window on the new agent when it is ready.
      () => toast('Restarting the agent…'),
      (err: unknown) => {
        restart.disabled = false;
        toast(`Not restarted: ${errorText(err)}`, 'error');
      },
    );
  });
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'secrets-heading', id: 'secrets-settings' },
    h('h2', { id: 'secrets-heading' }, 'Secrets'),
    h('p', { class: 'muted' }, "Tokens and passwords the agent uses. They are kept encrypted with this PC user's credential store and are never shown again."),
    h('table', { class: 'data' }, h('caption', { class: 'visually-hidden' }, 'Secrets'), h('tbody', {}, ...rows)),
    listing.restartNeeded ? h('div', { class: 'row' }, h('p', { class: 'warn' }, 'The agent uses changed secrets after a restart.'), restart) : null,
  );
}

/** Stores a value, or removes the secret (null). */
async function change(button: HTMLButtonElement, name: string, value: string | null, changed: () => Promise<void>): Promise<void> {
  button.disabled = true;
  try {
    await send('PUT', `/api/secrets/${encodeURIComponent(name)}`, { value });
    toast(value === null ? 'Secret removed.' : 'Secret saved.');
  } catch (err) {
    toast(`Not saved: ${errorText(err)}`, 'error');
  }
  await changed();
}

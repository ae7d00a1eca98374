import type { WebhookTokenReply } from '../../src/admin/webhook-token-schema';
import { errorText, send } from './api';
import { cliCommand } from './cli';
import { h, toast } from './dom';

/**
 * The webhook token beside the webhook address (Settings), both of which head office needs for the
 * site's registration. Hidden until the manager asks: "Show" fetches it (POST, recorded in the
 * Activity view with their name) and "Copy" puts it on the clipboard (fetching it first if needed).
 * The value lives only in this field; "Hide" or any rebuild of the card clears it.
 */

/** What GET /api/settings says about the token (never its value). */
export type WebhookTokenState = 'set' | 'not-set' | 'not-required';

const REVEAL_ROUTE = '/api/webhook-token/reveal';

export function webhookTokenRow(state: WebhookTokenState): HTMLElement {
  if (state === 'not-required') {
    return h(
      'p',
      { class: 'error', id: 'webhook-token-none' },
      'No token: the webhook takes updates without one (webhook.allowUnauthenticated is on), so any program or account on this PC can change your prices. Ask IT to turn it off once head office sends the token.',
    );
  }
  if (state === 'not-set') {
    return h('p', { class: 'error', id: 'webhook-token-none' }, `No webhook token is set, so the webhook takes updates without one. Ask IT to set the one head office registered (${cliCommand('secrets set webhook.bearerToken')}).`);
  }
  const input = h('input', { id: 'webhook-token', type: 'password', readonly: true, value: '', placeholder: 'hidden', size: 48, autocomplete: 'off', spellcheck: 'false' });
  const show = h('button', { type: 'button', class: 'secondary', 'aria-controls': 'webhook-token' }, 'Show');
  const copy = h('button', { type: 'button', class: 'secondary' }, 'Copy');
  const hide = (): void => {
    input.value = '';
    input.type = 'password';
    show.textContent = 'Show';
  };
  const reveal = async (): Promise<string | null> => {
    if (input.value !== '') return input.value;
    try {
      const reply = await send<WebhookTokenReply>('POST', REVEAL_ROUTE, {});
      if (reply.value === null) {
        toast('The agent checks no webhook token now.', 'error');
        return null;
      }
      input.value = reply.value;
      input.type = 'text';
      show.textContent = 'Hide';
      return reply.value;
    } catch (err) {
      toast(`Not shown: ${errorText(err)}`, 'error');
      return null;
    }
  };
  show.addEventListener('click', () => {
    if (input.value !== '') hide();
    else void reveal();
  });
  copy.addEventListener('click', () => {
    void reveal().then((value) => {
      if (value === null) return;
      input.select();
      navigator.clipboard?.writeText(value).then(
        () => toast('Webhook token copied.'),
        () => toast('Select the token and copy it with Ctrl+C.', 'error'),
      );
    });
  });
  return h(
    'div',
    { class: 'row', id: 'webhook-token-row' },
    h('label', { for: 'webhook-token' }, 'Token'),
    input,
    show,
    copy,
  );
}

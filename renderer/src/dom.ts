/**
 * The only way the window builds DOM: elements and text nodes. Strings always become text (never
 * HTML), so vendor data such as an item named `<img src=x onerror=...>` is shown, not run.
 */

export type Child = Node | string | number | null | undefined | false;

type Attrs = Record<string, string | number | boolean | null | undefined | EventListener>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') {
      el.addEventListener(name.slice(2).toLowerCase(), value);
    } else if (name === 'class') {
      el.className = String(value);
    } else if (typeof value === 'function') {
      throw new Error(`attribute ${name} cannot take a function`);
    } else if (/^(style|srcdoc|href|src|action|formaction)$/i.test(name) && !(name === 'href' && /^#|^\/(?!\/)/.test(String(value)))) {
      // Nothing dynamic may set script-bearing or navigating attributes (only in-app links).
      throw new Error(`attribute ${name} is not allowed here`);
    } else {
      el.setAttribute(name, value === true ? '' : String(value));
    }
  }
  append(el, ...children);
  return el;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    parent.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
}

/** Replaces an element's content with the given children. */
export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, ...children);
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`#${id} is missing from index.html`);
  return el as T;
}

let toastTimer: number | undefined;

/** A short message in the corner (role=alert, so screen readers announce it). */
export function toast(message: string, kind: 'ok' | 'error' = 'ok'): void {
  const el = byId('toast');
  el.textContent = message;
  el.className = `toast toast-${kind}`;
  el.hidden = false;
  window.clearTimeout(toastTimer);
  toastTimer = window.setTimeout(() => {
    el.hidden = true;
  }, 6000);
}

const timeFormat = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit' });
const dateTimeFormat = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' });
const secondsFormat = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', second: '2-digit' });
const fullFormat = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'medium' });

/** "09:14" today, "3 Jan, 09:14" another day. */
export function shortTime(iso: string, now: Date = new Date()): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toDateString() === now.toDateString() ? timeFormat.format(d) : dateTimeFormat.format(d);
}

/** "09:14:05": a moment a few seconds away (the next attempt of a retry). */
export function clockTime(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : secondsFormat.format(d);
}

export function fullTime(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : fullFormat.format(d);
}

/** "5 minutes ago", for freshness. */
export function ago(iso: string, now: Date = new Date()): string {
  const ms = now.getTime() - new Date(iso).getTime();
  if (!Number.isFinite(ms)) return '';
  const minutes = Math.round(ms / 60_000);
  if (minutes < 1) return 'just now';
  if (minutes < 60) return `${minutes} minute${minutes === 1 ? '' : 's'} ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `${hours} hour${hours === 1 ? '' : 's'} ago`;
  const days = Math.round(hours / 24);
  return `${days} days ago`;
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** A modal dialog; resolves with the button the user chose (Esc = cancel). */
export function confirmDialog(options: { title: string; body: Child[]; confirmLabel: string; danger?: boolean; input?: { label: string; required: boolean } }): Promise<{ confirmed: boolean; value: string }> {
  return new Promise((resolve) => {
    const inputId = `dialog-input-${Date.now()}`;
    const input = options.input ? h('textarea', { id: inputId, rows: 3, required: options.input.required, maxlength: 500 }) : null;
    const confirm = h('button', { type: 'submit', class: options.danger ? 'danger' : 'primary' }, options.confirmLabel);
    const cancel = h('button', { type: 'button', class: 'secondary' }, 'Cancel');
    const titleId = `dialog-title-${Date.now()}`;
    const form = h(
      'form',
      { method: 'dialog' },
      h('h2', { id: titleId }, options.title),
      ...options.body,
      input ? h('label', { for: inputId }, options.input!.label) : null,
      input,
      h('div', { class: 'dialog-actions' }, cancel, confirm),
    );
    const dialog = h('dialog', { 'aria-labelledby': titleId }, form);
    let result = { confirmed: false, value: '' };
    form.addEventListener('submit', (e) => {
      if (input && options.input?.required && input.value.trim().length < 3) {
        e.preventDefault();
        input.setCustomValidity('Please say why (at least 3 characters).');
        input.reportValidity();
        return;
      }
      result = { confirmed: true, value: input?.value.trim() ?? '' };
    });
    input?.addEventListener('input', () => input.setCustomValidity(''));
    cancel.addEventListener('click', () => dialog.close());
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(result);
    });
    document.body.appendChild(dialog);
    dialog.showModal();
    (input ?? confirm).focus();
  });
}

/** A dialog that shows text (a payload) in a scrollable, selectable block. */
export function textDialog(title: string, text: string, note: string | null): void {
  const titleId = `text-title-${Date.now()}`;
  const close = h('button', { type: 'button', class: 'primary' }, 'Close');
  const dialog = h(
    'dialog',
    { 'aria-labelledby': titleId, class: 'wide' },
    h('h2', { id: titleId }, title),
    note ? h('p', { class: 'muted' }, note) : null,
    h('pre', { class: 'payload', tabindex: 0, 'aria-label': 'Payload content' }, text),
    h('div', { class: 'dialog-actions' }, close),
  );
  close.addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => dialog.remove());
  document.body.appendChild(dialog);
  dialog.showModal();
  close.focus();
}

/**
 * A refresh shows new data without taking away what a person has in hand. `keepPlace(shown, fresh)`
 * makes an element on the page match one just built with h(), changing only what differs: the
 * control with focus stays the same element (so focus does not move and a screen reader has nothing
 * to announce again), details stay open or closed as the person left them, text typed into a field
 * stays, and so do scroll positions. Text that did not change is not written again.
 *
 * Children are paired by key (`data-key`, else `id`) or, without one, in order by tag; keys need only
 * differ between siblings. A control (button, field) that differs at all is swapped for its fresh copy,
 * so its handler acts on what it now shows; focus and typed text go over to the copy. Other elements
 * are updated in place and keep the handlers they had, so in what is passed here only controls have any.
 * Whether details are open is the person's choice: a refresh leaves it as it is.
 */

const CONTROLS = new Set(['BUTTON', 'INPUT', 'SELECT', 'TEXTAREA']);

/** The element with focus in what is updated; once a focused control is swapped, its fresh copy. */
interface Focus {
  el: HTMLElement | null;
}

export function keepPlace(shown: Element, fresh: Element): void {
  const active = document.activeElement;
  const focus: Focus = { el: active instanceof HTMLElement && shown.contains(active) ? active : null };
  if (sameKind(shown, fresh)) pair(shown, fresh, focus);
  else shown.replaceWith(fresh);
  // A control swapped for its copy, or one moved with its reordered card or row, gets focus back.
  if (focus.el?.isConnected && document.activeElement !== focus.el) focus.el.focus({ preventScroll: true });
}

/** Sets an element's text only when it differs: text written again into a live region is announced again. */
export function setText(el: Element, text: string): void {
  if (el.textContent !== text) el.textContent = text;
}

function keyOf(node: Node): string | null {
  return node instanceof Element ? (node.getAttribute('data-key') ?? (node.id || null)) : null;
}

function sameKind(a: Node, b: Node): boolean {
  return a.nodeName === b.nodeName && keyOf(a) === keyOf(b);
}

/** The node to show for `fresh`: `shown` brought up to date, or `fresh` itself for a control that changed. */
function pair(shown: Node, fresh: Node, focus: Focus): Node {
  if (!(shown instanceof Element) || !(fresh instanceof Element)) {
    if (shown.nodeValue !== fresh.nodeValue) shown.nodeValue = fresh.nodeValue;
    return shown;
  }
  if (CONTROLS.has(shown.nodeName)) {
    if (shown.isEqualNode(fresh)) return shown;
    carryInput(shown, fresh);
    if (focus.el === shown) focus.el = fresh as HTMLElement;
    return fresh;
  }
  const mine = (name: string): boolean => name === 'open' && shown.nodeName === 'DETAILS';
  for (const { name } of [...shown.attributes]) if (!fresh.hasAttribute(name) && !mine(name)) shown.removeAttribute(name);
  for (const { name, value } of fresh.attributes) if (shown.getAttribute(name) !== value && !mine(name)) shown.setAttribute(name, value);
  pairChildren(shown, fresh, focus);
  return shown;
}

function pairChildren(shown: Element, fresh: Element, focus: Focus): void {
  const byKey = new Map<string, ChildNode>();
  const unkeyed: ChildNode[] = [];
  for (const c of shown.childNodes) {
    const key = keyOf(c);
    if (key === null) unkeyed.push(c);
    else byKey.set(key, c);
  }
  const wanted: Node[] = [];
  let next = 0;
  for (const f of [...fresh.childNodes]) {
    const key = keyOf(f);
    let old: ChildNode | undefined;
    if (key !== null) {
      old = byKey.get(key);
      byKey.delete(key);
    } else {
      const at = unkeyed.findIndex((c, i) => i >= next && sameKind(c, f));
      if (at >= 0) [old, next] = [unkeyed[at], at + 1];
    }
    wanted.push(old && sameKind(old, f) ? pair(old, f, focus) : f);
  }
  // What is no longer shown goes first, so nodes that stay in order are never moved (moving one drops its focus).
  const keep = new Set(wanted);
  for (const c of [...shown.childNodes]) if (!keep.has(c)) c.remove();
  let at: ChildNode | null = shown.firstChild;
  for (const node of wanted) {
    if (node === at) at = at.nextSibling;
    else shown.insertBefore(node, at);
  }
}

/** What a person typed, ticked or chose in a field goes over to its fresh copy. */
function carryInput(shown: Element, fresh: Element): void {
  if (shown instanceof HTMLTextAreaElement && fresh instanceof HTMLTextAreaElement) {
    if (shown.value !== shown.defaultValue) fresh.value = shown.value;
  } else if (shown instanceof HTMLSelectElement && fresh instanceof HTMLSelectElement) {
    if ([...shown.options].some((o) => o.selected !== o.defaultSelected)) fresh.value = shown.value;
  } else if (shown instanceof HTMLInputElement && fresh instanceof HTMLInputElement && shown.type === fresh.type) {
    if (shown.type === 'checkbox' || shown.type === 'radio') {
      if (shown.checked !== shown.defaultChecked) fresh.checked = shown.checked;
    } else if (shown.type !== 'file' && shown.value !== shown.defaultValue) fresh.value = shown.value;
  }
}

import { bodyLines, diffHunks, diffLines, type DiffLine } from '../../src/domain/line-diff';
import { cliCommand } from './cli';
import type { Conflict, ConflictBody } from '../../src/store/conflicts';
import { errorText, get, getText, send } from './api';
import { bytes, confirmDialog, fullTime, h, replace, shortTime, toast } from './dom';

/**
 * Conflicting redeliveries, full width above the location cards: head office sent a different body
 * under an update number already used. Both bodies side by side (only the differing parts, with a
 * few lines around them), and a button under each to keep it (reason required, audited).
 */

type Row = DiffLine | { readonly kind: 'skipped'; readonly count: number };

const STATE_TEXT: Record<string, string> = { pending: 'waiting', applied: 'on the till', stale: 'behind the till', conflict: 'not applied' };

/** Rows shown per comparison: a first publication differs in thousands of lines, which no one reads here. */
const MAX_ROWS = 400;

/** Pairs removed and added lines into rows of two cells; unchanged lines fill both. */
function sideBySide(rows: readonly Row[], name: string): HTMLElement[] {
  const out: HTMLElement[] = [];
  const cell = (kind: 'same' | 'removed' | 'added' | 'empty', text: string): HTMLElement =>
    h('td', { class: `diff-${kind}` }, kind === 'removed' ? h('span', { class: 'visually-hidden' }, 'only in the first: ') : kind === 'added' ? h('span', { class: 'visually-hidden' }, 'only in the later: ') : null, text);
  let removed: string[] = [];
  let added: string[] = [];
  const flush = (): void => {
    for (let i = 0; i < Math.max(removed.length, added.length); i++) {
      out.push(h('tr', {}, removed[i] === undefined ? cell('empty', '') : cell('removed', removed[i]!), added[i] === undefined ? cell('empty', '') : cell('added', added[i]!)));
    }
    removed = [];
    added = [];
  };
  for (const r of rows) {
    if (r.kind === 'removed') removed.push(r.text);
    else if (r.kind === 'added') added.push(r.text);
    else {
      flush();
      if (r.kind === 'skipped') out.push(h('tr', { class: 'diff-skipped' }, h('td', { colspan: 2 }, `… ${r.count.toLocaleString()} identical line${r.count === 1 ? '' : 's'} …`)));
      else out.push(h('tr', {}, cell('same', r.text), cell('same', r.text)));
    }
  }
  flush();
  if (out.length > MAX_ROWS) {
    const more = out.length - MAX_ROWS;
    return [
      ...out.slice(0, MAX_ROWS),
      h('tr', { class: 'diff-skipped' }, h('td', { colspan: 2 }, `… ${more.toLocaleString()} more rows not shown; the whole comparison: ${cliCommand(`conflicts ${name}`)}`)),
    ];
  }
  return out;
}

function heading(b: ConflictBody, first: boolean): string {
  return `${first ? 'Received first' : 'Received later'}: ${shortTime(b.receivedAt)}, ${bytes(b.bytes)}, ${STATE_TEXT[b.state] ?? b.state}`;
}

export class ConflictsView {
  readonly element = h('section', { id: 'conflicts', class: 'conflicts', 'aria-label': 'Conflicting updates' });
  /** The comparison of each conflict as last built, by its bodies: rebuilt only when they change. */
  private readonly built = new Map<string, HTMLElement>();

  constructor(private readonly refresh: () => void) {}

  /** Shows the current conflicts (none: the section is empty). */
  async update(any: boolean): Promise<void> {
    if (!any) {
      replace(this.element);
      this.built.clear();
      return;
    }
    let conflicts: Conflict[];
    try {
      conflicts = (await get<{ conflicts: Conflict[] }>('/api/conflicts')).conflicts;
    } catch (err) {
      replace(this.element, h('p', { class: 'warn' }, `Cannot list the conflicting updates: ${errorText(err)}`));
      return;
    }
    const keys = new Set<string>();
    const parts: HTMLElement[] = [];
    for (const c of conflicts) {
      const key = `${c.name}:${c.bodies.map((b) => `${b.inboxId}${b.state}`).join(',')}`;
      keys.add(key);
      let part = this.built.get(key);
      if (!part) {
        part = await this.build(c);
        this.built.set(key, part);
      }
      parts.push(part);
    }
    for (const key of [...this.built.keys()]) if (!keys.has(key)) this.built.delete(key);
    // The same comparisons in the same order stay where they are: put back, they would lose focus
    // (a "Keep …" button a person tabbed to) at every refresh.
    const same = parts.length === this.element.children.length && parts.every((p, i) => this.element.children[i] === p);
    if (!same) replace(this.element, ...parts);
  }

  private async build(c: Conflict): Promise<HTMLElement> {
    const [first, ...later] = c.bodies;
    const text = async (b: ConflictBody): Promise<string | null> => (b.bodyKept ? getText(`/api/payloads/inbox/${b.inboxId}`).catch(() => null) : null);
    const firstText = await text(first!);
    const comparisons: HTMLElement[] = [];
    for (const b of later) {
      const laterText = await text(b);
      const table =
        firstText === null || laterText === null
          ? h('p', { class: 'muted' }, 'One of the bodies is no longer kept (retention), so they cannot be compared here.')
          : h(
              'table',
              { class: 'diff' },
              h('caption', { class: 'visually-hidden' }, `Differences between the first and the later body of update ${c.changeSequence}`),
              h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, heading(first!, true)), h('th', { scope: 'col' }, heading(b, false)))),
              h('tbody', {}, ...sideBySide(diffHunks(diffLines(bodyLines(firstText), bodyLines(laterText))), c.name)),
            );
      comparisons.push(table);
    }
    const keepButton = (b: ConflictBody, index: number): HTMLElement => {
      const label = index === 0 ? `Keep the first (received ${shortTime(b.receivedAt)})…` : `Keep the later (received ${shortTime(b.receivedAt)})…`;
      const button = h('button', { type: 'button', class: 'secondary', 'data-keep': b.inboxId, title: fullTime(b.receivedAt), onclick: () => void this.keep(c, b, index) }, label);
      if (index > 0 && c.onlyFirst) button.disabled = true;
      return button;
    };
    const titleId = `conflict-${c.locationId}-${c.changeSequence}`;
    return h(
      'article',
      { class: 'card card-red conflict', 'data-conflict': c.name, 'aria-labelledby': titleId },
      h('h2', { id: titleId }, `Update ${c.changeSequence} for location ${c.locationId} arrived again with different content`),
      h(
        'p',
        {},
        'Head office sent this update more than once, and the copies differ. Only one can be used. Compare them (only the differing lines are shown, with a few around them) and keep one; ' +
          'the other is set aside. Ask support if you are unsure which is right.',
      ),
      ...comparisons,
      c.onlyFirst ? h('p', { class: 'warn' }, `Only the first can be kept: ${c.onlyFirst}`) : null,
      h('div', { class: 'row' }, ...c.bodies.map(keepButton)),
      h('p', { class: 'muted' }, 'From the command line: ', h('code', {}, cliCommand(`conflicts ${c.name}`))),
    );
  }

  private async keep(c: Conflict, b: ConflictBody, index: number): Promise<void> {
    const which = index === 0 ? 'the first' : 'the later';
    const answer = await confirmDialog({
      title: `Keep ${which} copy of update ${c.changeSequence} for location ${c.locationId}?`,
      body: [
        h('p', {}, `The copy received ${fullTime(b.receivedAt)} is kept${b.state === 'applied' ? ' (it is already on the till)' : ' and applied when its turn comes'}; the other is set aside.`),
        h('p', {}, 'Your name and reason go to the audit log.'),
      ],
      confirmLabel: `Keep ${which}`,
      input: { label: 'Reason (required)', required: true },
    });
    if (!answer.confirmed) return;
    try {
      const r = await send<{ applied: { changeSequence: number }[] }>('POST', `/api/conflicts/${encodeURIComponent(c.name)}/keep`, { inboxId: b.inboxId, reason: answer.value });
      toast(`Kept ${which} copy of update ${c.changeSequence}${r.applied.length ? `; applied ${r.applied.map((a) => a.changeSequence).join(', ')}` : ''}.`);
    } catch (err) {
      toast(`Not changed: ${errorText(err)}`, 'error');
    }
    this.refresh();
  }
}

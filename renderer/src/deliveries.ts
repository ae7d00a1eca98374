import { prettyJson } from '../../src/domain/json-pretty';
import { errorText, get, getText, send } from './api';
import { bytes, confirmDialog, fullTime, h, shortTime, textDialog, toast } from './dom';
import { keepPlace } from './keep-place';
import type { DeliveryRow } from './types';

const RESULT_TEXT: Record<DeliveryRow['result'], string> = {
  applied: 'applied',
  waiting: 'waiting',
  duplicate: 'duplicate',
  conflict: 'rejected: conflict',
  stale: 'not applied: older than the till',
  superseded: 'skipped by a forced update',
  rejected: 'rejected',
};

/** The deliveries tab: operator import, the table, and the payload viewer. */
export class DeliveriesView {
  readonly element: HTMLElement;
  private readonly tableBody: HTMLTableSectionElement;
  private readonly fileInput: HTMLInputElement;

  constructor(private readonly refreshAll: () => void) {
    this.fileInput = h('input', { type: 'file', id: 'import-file', accept: '.json,application/json' });
    const importButton = h('button', { type: 'button', class: 'primary', onclick: () => void this.importFile() }, 'Import…');
    this.tableBody = h('tbody', {});
    this.element = h(
      'div',
      {},
      h('h1', { class: 'visually-hidden' }, 'Deliveries'),
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'import-heading' },
        h('h2', { id: 'import-heading' }, 'Import a payload file'),
        h('p', { class: 'muted' }, 'When support sends an update by e-mail, import it here. It is stored and applied exactly as if head office had delivered it.'),
        h('div', { class: 'row' }, h('label', { for: 'import-file' }, 'Payload file'), this.fileInput, importButton),
      ),
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'deliveries-heading' },
        h('h2', { id: 'deliveries-heading' }, 'Recent deliveries'),
        h(
          'table',
          { class: 'data', id: 'deliveries-table' },
          h(
            'thead',
            {},
            h('tr', {}, ...['Time', 'Location', 'Update', 'Size', 'Result', 'Payload'].map((t) => h('th', { scope: 'col' }, t))),
          ),
          this.tableBody,
        ),
      ),
    );
  }

  /** Updates the rows in place (keep-place.ts): a new delivery does not move focus, e.g. from a View button. */
  async refresh(): Promise<void> {
    const { deliveries } = await get<{ deliveries: DeliveryRow[] }>('/api/deliveries', { limit: 100 });
    const rows = deliveries.length === 0 ? [h('tr', {}, h('td', { colspan: 6, class: 'empty' }, 'No deliveries yet.'))] : deliveries.map((d) => this.row(d));
    keepPlace(this.tableBody, h('tbody', {}, ...rows));
  }

  private row(d: DeliveryRow): HTMLTableRowElement {
    const resultText =
      RESULT_TEXT[d.result] +
      (d.warnings > 0 ? ` with ${d.warnings} warning${d.warnings === 1 ? '' : 's'} (listed on the location's card under Sync status)` : '') +
      (d.reason && (d.result === 'rejected' || d.result === 'conflict' || d.result === 'waiting') ? ` — ${d.reason}` : '');
    const payloadKind = d.inboxId !== null ? 'inbox' : d.quarantineId !== null ? 'quarantine' : null;
    const payloadId = d.inboxId ?? d.quarantineId;
    return h(
      'tr',
      { 'data-result': d.result, 'data-key': `delivery-${d.id}` },
      h('td', {}, h('time', { datetime: d.receivedAt, title: fullTime(d.receivedAt) }, shortTime(d.receivedAt))),
      h('td', {}, d.locationId === null ? '—' : String(d.locationId)),
      h('td', {}, d.changeSequence === null ? '—' : String(d.changeSequence)),
      h('td', { class: 'num' }, bytes(d.bytes)),
      h('td', {}, h('span', { class: `result result-${d.result}` }, resultText), d.source === 'import' ? h('span', { class: 'muted' }, ' (imported)') : null),
      h(
        'td',
        {},
        payloadKind && payloadId !== null
          ? h('button', { type: 'button', class: 'link', onclick: () => void this.showPayload(payloadKind, payloadId, d), 'aria-label': `View payload of delivery at ${shortTime(d.receivedAt)}` }, 'View')
          : '—',
      ),
    );
  }

  private async showPayload(kind: 'inbox' | 'quarantine', id: number, d: DeliveryRow): Promise<void> {
    try {
      const text = await getText(`/api/payloads/${kind}/${id}`);
      const limit = 512 * 1024;
      // JSON re-indented with every number and string as stored; not JSON (a refused body): as it arrived.
      const shown = text.length > limit ? text.slice(0, limit) : (prettyJson(text) ?? text);
      const title = d.changeSequence === null ? `Payload received ${shortTime(d.receivedAt)}` : `Update ${d.changeSequence} for location ${d.locationId}`;
      textDialog(title, shown, text.length > limit ? `Showing the first ${bytes(limit)} of ${bytes(text.length)}.` : null);
    } catch (err) {
      toast(`Cannot show the payload: ${errorText(err)}`, 'error');
    }
  }

  private async importFile(): Promise<void> {
    const file = this.fileInput.files?.[0];
    if (!file) {
      toast('Choose a payload file first.', 'error');
      this.fileInput.focus();
      return;
    }
    const answer = await confirmDialog({
      title: 'Import this payload?',
      body: [h('p', {}, `${file.name} (${bytes(file.size)}) will be stored and applied like a delivery from head office. The import is recorded in the audit log.`)],
      confirmLabel: 'Import',
    });
    if (!answer.confirmed) return;
    try {
      const result = await send<{ outcome: { decision?: string; envelope?: { ChangeSequence: number } }; applied: { changeSequence: number }[] }>(
        'POST',
        '/api/import',
        await file.arrayBuffer(),
        'application/octet-stream',
      );
      const seq = result.outcome.envelope?.ChangeSequence;
      const applied = result.applied.map((a) => a.changeSequence);
      toast(`Imported update ${seq ?? ''}: ${result.outcome.decision ?? 'stored'}${applied.length ? `; applied ${applied.join(', ')}` : ''}.`);
      this.fileInput.value = '';
    } catch (err) {
      toast(`Import refused: ${errorText(err)}`, 'error');
    }
    this.refreshAll();
  }
}

/**
 * The audit log in a manager's words: who did what and when, one sentence per record. Pure (the window
 * and `pos-sync-agent audit` print the same sentence); unknown actions are shown by their name.
 */

export interface AuditRecord {
  readonly id: number;
  readonly at: string;
  readonly actor: string;
  readonly action: string;
  readonly details: Record<string, unknown>;
}

function text(v: unknown): string {
  return typeof v === 'string' || typeof v === 'number' ? String(v) : '';
}

function update(d: Record<string, unknown>): string {
  const loc = text(d.locationId);
  const seq = text(d.changeSequence);
  return seq ? `update ${seq}${loc ? ` for location ${loc}` : ''}` : 'an update';
}

/** What was done, as a sentence without the person (the person and time are shown beside it). */
export function auditSentence(r: Pick<AuditRecord, 'action' | 'details'>): string {
  const d = r.details;
  switch (r.action) {
    case 'pause':
      return `Paused applying updates${d.reason ? ` — reason: ${text(d.reason)}` : ''}.`;
    case 'resume':
      return `Resumed applying updates${d.reason ? ` — reason: ${text(d.reason)}` : ''}.`;
    case 'force-apply':
      return `Force-applied ${update(d)}${d.reason ? ` — reason: ${text(d.reason)}` : ''}.`;
    case 'acknowledge-warnings':
      return `Marked ${text(d.count) || 'the'} warning${d.count === 1 ? '' : 's'} as seen${d.locationId !== null && d.locationId !== undefined ? ` for location ${text(d.locationId)}` : ''}.`;
    case 'import':
      return d.quarantineId !== undefined
        ? `Imported a file that was refused (kept as quarantine #${text(d.quarantineId)}).`
        : `Imported ${update(d)} (${text(d.decision) || 'stored'}).`;
    case 'resolve-conflict':
      return `Resolved a conflicting redelivery of ${update(d)}.`;
    case 'resolve-conflict-undone':
      return `Undid a conflict resolution of ${update(d)}.`;
    case 'restore':
      return `Restored the data folder from ${text(d.from) || 'a backup'}.`;
    case 'reconcile':
      return `Completed the record of ${update(d)} after a stop (automatic).`;
    case 'secret-set':
      return `Stored a new ${text(d.name) || 'secret'}.`;
    case 'secret-shown':
      return d.name === 'webhook.bearerToken' ? 'Showed the webhook token (to give head office).' : `Showed ${text(d.name) || 'a secret'}.`;
    case 'secret-removed':
      return `Removed ${text(d.name) || 'a secret'}.`;
    case 'restart':
      return `Restarted the agent${d.why ? ` to ${text(d.why)}` : ''}.`;
    case 'login':
      return 'Opened the status window (signed in).';
    case 'login-link':
      return d.rotated === true ? "Replaced the status window's access token (every session ended) and took a login link." : 'Took a one-time login link to the status window.';
    default: {
      const panel = /^panel:([^:]+):(.+)$/.exec(r.action);
      if (panel) return `${panel[2]} (${panel[1]})${d.message ? `: ${text(d.message)}` : ''}.`;
      return `${r.action}.`;
    }
  }
}

/** The person from an actor text: "Maria (status window on till-pc)" -> "Maria". */
export function actorPerson(actor: string): string {
  return actor.replace(/ \((status window|command line|desktop app)[^)]*\)$/, '');
}

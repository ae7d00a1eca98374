/**
 * What to say when updates are set aside as stale behind the applied one (issue 24): head office
 * keeps sending ChangeSequences below the last applied, so the last applied is far ahead of its real
 * chain, typically one that head office never sent. Every later real update is stale too until the
 * till is put back before it. One wording for `status` and the status window.
 */
export interface StaleState {
  readonly lastChangeSequence: number | null;
  readonly lastAppliedAt: string | null;
  /** Updates set aside as stale since the last one was applied (store/read-models.ts). */
  readonly staleSinceApplied?: { readonly count: number; readonly latest: readonly number[] };
}

export function staleAdvice(s: StaleState): string | null {
  const stale = s.staleSinceApplied;
  if (!stale || stale.count === 0 || s.lastChangeSequence === null) return null;
  const which = stale.latest.join(', ');
  return (
    `${stale.count === 1 ? '1 update' : `${stale.count} updates`} received after ChangeSequence ${s.lastChangeSequence} was applied ${stale.count === 1 ? 'was' : 'were'} set aside as stale ` +
    `(ChangeSequence ${which}${stale.count > stale.latest.length ? ', …' : ''}): the till does not get head office's changes. ` +
    `If head office did not send ChangeSequence ${s.lastChangeSequence}, restore the backup taken before ${s.lastAppliedAt ?? 'it was applied'} ` +
    '(pos-sync-agent backup list, then pos-sync-agent restore FILE), then ask head office to send its latest update again; if it did, ask head office why it now sends lower numbers'
  );
}

import { groupDigits } from '../domain/wording';
import type { ApplyProgress } from '../sync/applier';

/** "Applying update 3021:101: 1,200 of 5,000 items (24 %)". */
export function progressText(p: ApplyProgress): string {
  const percent = p.total === 0 ? 100 : Math.floor((p.done * 100) / p.total);
  return `Applying update ${p.locationId}:${p.changeSequence}: ${groupDigits(p.done)} of ${groupDigits(p.total)} items (${percent} %)`;
}

/**
 * One line on a terminal, rewritten in place as an apply progresses; nothing at all when the output is
 * not a terminal (a pipe or a file gets only the final lines).
 */
export class ProgressLine {
  private shown = false;

  constructor(private readonly out: { readonly isTTY?: boolean; write(text: string): unknown }) {}

  get active(): boolean {
    return this.out.isTTY === true;
  }

  update(p: ApplyProgress | null): void {
    if (!this.active || p === null) return;
    this.out.write(`\r${progressText(p)}\x1b[K`);
    this.shown = true;
  }

  /** Clears the line, so the command's own output starts on a clean line. */
  end(): void {
    if (this.shown) this.out.write('\r\x1b[K');
    this.shown = false;
  }
}

/** What `serve` says on the first Ctrl-C: what it waits for, and what a second one does. */
export function stoppingText(applying: ApplyProgress | null): string {
  const waitFor = applying
    ? `Stopping: waiting for the apply of update ${applying.locationId}:${applying.changeSequence} to finish (${groupDigits(applying.done)} of ${groupDigits(applying.total)} items); updates queued after it are applied at the next start.`
    : 'Stopping: closing the webhook receiver, the status window and the data files.';
  return `${waitFor} Press Ctrl-C again to stop at once: an apply under way is then rolled back and done again at the next start; nothing received is lost.`;
}

export const FORCED_STOP_TEXT = 'Stopping at once: the apply under way (if any) is rolled back and applied again when the agent next starts; nothing received is lost.';

/**
 * Sends items in batches at most every `windowMs`: the first item after a quiet spell at once (a lone
 * delivery's cue to the applier is not delayed), the rest of a busy spell together at the end of the
 * window; `urgent` sends at once whatever is waiting. The receiver thread sends its notices to the
 * main thread through it (receiver-worker.ts).
 */
export class NoticeBatcher<T> {
  private readonly waiting: T[] = [];
  private timer: NodeJS.Timeout | null = null;
  private lastSent = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly windowMs: number,
    private readonly send: (batch: T[]) => void,
    private readonly now: () => number = Date.now,
  ) {}

  push(item: T, urgent = false): void {
    this.waiting.push(item);
    if (urgent) return this.flush();
    if (this.timer) return;
    const since = this.now() - this.lastSent;
    if (since >= this.windowMs) this.flush();
    else this.timer = setTimeout(() => this.flush(), this.windowMs - since);
  }

  /** Sends what is waiting now (also before the thread stops). */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.lastSent = this.now();
    if (this.waiting.length > 0) this.send(this.waiting.splice(0));
  }
}

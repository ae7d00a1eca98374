import fs from 'node:fs';

/**
 * Where a publication's peak memory goes, read from outside the agent: its /proc/PID/status, which
 * the kernel fills without stopping the process, so watching does not add to what is watched (a
 * question to the agent, such as its threads' heaps, would run code in it and allocate).
 */

/** A process's resident memory now, split as the kernel counts it (Linux: /proc/PID/status). */
export interface StatusMemory {
  readonly rssBytes: number;
  /** Anonymous memory: V8's heaps, malloc's arenas (SQLite's page caches among them), thread stacks. */
  readonly anonymousBytes: number;
  /** Pages of files (the node binary, its libraries) and of shared memory (SQLite's WAL index). */
  readonly fileBytes: number;
  /** The highest RSS since the process started (VmHWM). */
  readonly highWaterBytes: number;
}

/** Parses /proc/PID/status's memory lines. Pure. */
export function parseStatusMemory(status: string): StatusMemory {
  const kib = (field: string): number => {
    const value = Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
    if (!Number.isFinite(value)) throw new Error(`no ${field} in /proc/PID/status`);
    return value * 1024;
  };
  return { rssBytes: kib('VmRSS'), anonymousBytes: kib('RssAnon'), fileBytes: kib('RssFile') + kib('RssShmem'), highWaterBytes: kib('VmHWM') };
}

export function statusMemory(pid: number): StatusMemory {
  return parseStatusMemory(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
}

/** Whether one of the process's threads has this name now (/proc/PID/task/TID/comm). */
export function hasThread(pid: number, name: string): boolean {
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      if (fs.readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim() === name) return true;
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return false;
}

/** The peak of one publication's receipt and apply, over the idle agent, in parts. */
export interface PeakParts {
  /** VmHWM read as the 200 arrived, over idle: what the receipt raised it to (the apply starts just after). */
  readonly untilAckOverIdleBytes: number;
  /** The sample with the highest RSS, over idle, and how its growth splits. */
  readonly highestSampleOverIdleBytes: number;
  readonly anonymousOverIdleBytes: number;
  readonly fileOverIdleBytes: number;
  /** Whether that sample came after the 200 (during the apply) or before it (during the receipt). */
  readonly highestSampleAfterAck: boolean;
  /** Whether the applier thread was running at that sample, and when the 200 arrived. */
  readonly applierThreadAtHighest: boolean;
  readonly applierThreadAtAck: boolean;
  readonly samples: number;
}

/**
 * Samples `pid`'s memory every `everyMs` from `start()` until `stop()`, keeping the highest RSS.
 * `ack()` marks the 200: VmHWM at that moment, and samples after it count as the apply's.
 */
export class PeakSampler {
  private timer: NodeJS.Timeout | null = null;
  private highest: { memory: StatusMemory; afterAck: boolean; applier: boolean } | null = null;
  private atAck: StatusMemory | null = null;
  private applierAtAck = false;
  private samples = 0;

  constructor(
    private readonly pid: number,
    private readonly idle: StatusMemory,
    private readonly everyMs = 10,
  ) {}

  start(): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), this.everyMs);
    // Never what keeps a process alive (a caller that failed before stop()).
    this.timer.unref();
  }

  ack(): void {
    this.atAck = statusMemory(this.pid);
    this.applierAtAck = hasThread(this.pid, 'applier');
    this.sample();
  }

  private sample(): void {
    let memory: StatusMemory;
    try {
      memory = statusMemory(this.pid);
    } catch {
      return; // The process ended; stop() reports what was seen.
    }
    this.samples += 1;
    if (!this.highest || memory.rssBytes > this.highest.memory.rssBytes) {
      this.highest = { memory, afterAck: this.atAck !== null, applier: hasThread(this.pid, 'applier') };
    }
  }

  stop(): PeakParts {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.sample();
    const highest = this.highest;
    if (!highest || !this.atAck) throw new Error('the peak sampler saw no sample or no 200');
    return {
      untilAckOverIdleBytes: this.atAck.highWaterBytes - this.idle.rssBytes,
      highestSampleOverIdleBytes: highest.memory.rssBytes - this.idle.rssBytes,
      anonymousOverIdleBytes: highest.memory.anonymousBytes - this.idle.anonymousBytes,
      fileOverIdleBytes: highest.memory.fileBytes - this.idle.fileBytes,
      highestSampleAfterAck: highest.afterAck,
      applierThreadAtHighest: highest.applier,
      applierThreadAtAck: this.applierAtAck,
      samples: this.samples,
    };
  }
}

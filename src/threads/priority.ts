import fs from 'node:fs';
import os from 'node:os';

/**
 * The applier's CPU priority (config `sync.applyPriority`, docs/operations.md, "CPU priority").
 *
 * An apply of a large publication keeps one core busy for seconds. On the back-office PC the till (and
 * the POS software that reads pos-sync.db) must not wait behind it: at normal priority the applier
 * competes with a lookup by PLU for the cores (the bench's till lookups during the apply measure it;
 * docs/performance.md). "background" gives the applier the CPU only when nobody else wants it.
 *
 * Linux keeps a nice value per thread, so there only the applier's own thread is lowered: the webhook's
 * thread, which stores deliveries and acknowledges head office, stays at normal priority. Windows and macOS give a
 * priority to the whole process (Node offers nothing per thread there), so the agent's process is
 * lowered: the till and the desktop window (Electron's main process, not lowered) come first, and the
 * agent's threads share what is left, which on an idle back-office PC is all of it.
 */
export type ApplyPriority = 'background' | 'normal';

export type PriorityScope = 'thread' | 'process';

export interface PriorityPlan {
  /** null: nothing to change. */
  readonly scope: PriorityScope | null;
  /** The nice value (Unix) or os.constants.priority value (Windows maps it to a priority class). */
  readonly priority: number;
}

/** Below normal: nice 10 on Unix, BELOW_NORMAL_PRIORITY_CLASS on Windows. */
export const BACKGROUND_PRIORITY = os.constants.priority.PRIORITY_BELOW_NORMAL;

/** What to lower, and to what, for a setting on a platform. Pure. */
export function priorityPlan(setting: ApplyPriority, platform: NodeJS.Platform): PriorityPlan {
  if (setting === 'normal') return { scope: null, priority: os.constants.priority.PRIORITY_NORMAL };
  return { scope: platform === 'linux' ? 'thread' : 'process', priority: BACKGROUND_PRIORITY };
}

/** The calling thread's kernel id on Linux, from /proc/thread-self ("<pid>/task/<tid>"). Pure. */
export function threadIdFromLink(link: string): number | null {
  const match = /^(\d+)\/task\/(\d+)$/.exec(link.trim());
  return match ? Number(match[2]) : null;
}

export type PriorityOutcome =
  | { readonly lowered: false; readonly reason: 'normal' }
  /** Started lower than background already (say under `nice -n 15`, or a Windows "Low" class): left alone. */
  | { readonly lowered: false; readonly reason: 'already-lower'; readonly scope: PriorityScope; readonly id: number; readonly priority: number }
  | { readonly lowered: true; readonly scope: PriorityScope; readonly id: number; readonly priority: number }
  | { readonly lowered: false; readonly reason: 'failed'; readonly scope: PriorityScope; readonly message: string };

export interface PriorityOs {
  readonly platform: NodeJS.Platform;
  readonly threadSelfLink: () => string;
  readonly getPriority: (id: number) => number;
  readonly setPriority: (id: number, priority: number) => void;
}

const realOs: PriorityOs = {
  platform: process.platform,
  threadSelfLink: () => fs.readlinkSync('/proc/thread-self'),
  getPriority: (id) => os.getPriority(id),
  setPriority: (id, priority) => os.setPriority(id, priority),
};

/**
 * Lowers the calling thread (Linux) or its process (elsewhere) as `setting` asks. Only ever lowers:
 * a thread or process that an installer already started below background priority keeps its own
 * (setting it to background would raise it, which also needs a privilege on Unix). Never throws: a
 * priority that cannot be read or changed leaves the applier at the priority it started with, and
 * the outcome says why, for the log.
 */
export function applyPriorityToCurrentThread(setting: ApplyPriority, system: PriorityOs = realOs): PriorityOutcome {
  const plan = priorityPlan(setting, system.platform);
  if (plan.scope === null) return { lowered: false, reason: 'normal' };
  try {
    let id = process.pid;
    if (plan.scope === 'thread') {
      const tid = threadIdFromLink(system.threadSelfLink());
      if (tid === null) throw new Error('/proc/thread-self does not name a thread');
      id = tid;
    }
    // Higher numbers are lower priorities, on Unix (nice) and in Node's Windows mapping alike.
    const current = system.getPriority(id);
    if (current >= plan.priority) return { lowered: false, reason: 'already-lower', scope: plan.scope, id, priority: current };
    system.setPriority(id, plan.priority);
    return { lowered: true, scope: plan.scope, id, priority: plan.priority };
  } catch (err) {
    return { lowered: false, reason: 'failed', scope: plan.scope, message: err instanceof Error ? err.message : String(err) };
  }
}

/** One line for the log. */
export function describePriority(what: string, outcome: PriorityOutcome): string {
  if (!outcome.lowered) {
    switch (outcome.reason) {
      case 'normal':
        return `${what} runs at normal priority (sync.applyPriority is "normal")`;
      case 'already-lower':
        return `${what} keeps the lower priority it started with (its ${outcome.scope} ${outcome.id}, priority ${outcome.priority}; background is ${BACKGROUND_PRIORITY})`;
      case 'failed':
        return `${what} could not be given background priority (its ${outcome.scope}): ${outcome.message}; it keeps the priority it started with`;
    }
  }
  return outcome.scope === 'thread'
    ? `${what} runs at background priority (its thread ${outcome.id}, nice ${outcome.priority}); the receiver stays at normal priority`
    : `${what} runs at background priority (the agent's process ${outcome.id}, priority ${outcome.priority})`;
}

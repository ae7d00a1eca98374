import { workerData } from 'node:worker_threads';
import { describeError } from '../errors';
import { openDatabase, storeFilePath } from '../store/database';
import { configuredTimezone, ensureAllLocationOffsets } from '../till/location-time';
import { applyPriorityToCurrentThread } from '../threads/priority';
import { serveRequests } from '../threads/serve';
import { Applier, type LocationFailure } from './applier';
import { pruneRangeBatch, type RangePruneBatch } from './range-prune';
import type { ApplierEvent, ApplierRequest, ApplierWorkerData, DrainReply, ForceApplyReply } from './applier-protocol';

/**
 * The applier's thread: its own connections to pos-sync.db and agent.db, so the long synchronous
 * work of an apply (parsing a large body, writing its range rows) never runs on the event loop
 * that answers head office and the status window. Requests are handled one at a time, in order.
 */

const data = workerData as ApplierWorkerData;
// First, before any apply: from here on the till's reads and the receiver win the CPU over this thread.
const priority = applyPriorityToCurrentThread(data.priority);
const till = openDatabase(storeFilePath(data.dataDir, 'till'), { kind: 'till' });
const agent = openDatabase(storeFilePath(data.dataDir, 'agent'), { kind: 'agent' });
let emit: (event: ApplierEvent) => void = () => undefined;
const stopFlag = new Int32Array(data.stopFlag);
const applier = new Applier(
  till,
  agent,
  data.policy,
  {
    applied: (update) => emit({ type: 'applied', update }),
    failed: (locationId, inboxId, err) => emit({ type: 'failed', locationId, inboxId, message: describeError(err) }),
    reconciled: (inboxId) => emit({ type: 'reconciled', inboxId }),
    progress: (progress) => emit({ type: 'progress', progress }),
  },
  data.baselineSettleMs,
  (locationId) => configuredTimezone(data.timezones, locationId),
  Date.now,
  data.site,
  () => Atomics.load(stopFlag, 0) === 1,
);
// Offsets reach years ahead and follow the configured timezones: refresh them for every known location
// at start (a location's first apply writes its own).
ensureAllLocationOffsets(till, (locationId) => configuredTimezone(data.timezones, locationId));

/** After each request: the till's counters, and agent.db's WAL checkpointed here rather than on an HTTP loop. */
function housekeeping(): void {
  applier.refreshTillCounters();
  agent.pragma('wal_checkpoint(PASSIVE)');
}

/** Whether this thread has taken over the failures the main thread knew of (once, at its first request). */
let failuresTaken = false;
function takeFailures(failures: readonly LocationFailure[]): void {
  if (failuresTaken) return;
  failuresTaken = true;
  applier.adoptFailures(failures);
}

emit = serveRequests<ApplierRequest, ApplierEvent>((request): DrainReply | ForceApplyReply | RangePruneBatch | null => {
  switch (request.type) {
    case 'drain': {
      takeFailures(request.failures);
      const applied = applier.drain();
      housekeeping();
      return { applied, wakeAt: applier.wakeAt, failures: applier.failureRecords() };
    }
    case 'force-apply': {
      takeFailures(request.failures);
      const forced = applier.forceApply(request.inboxId, request.actor, request.reason);
      const then = applier.drain();
      housekeeping();
      return { forced, then, wakeAt: applier.wakeAt, failures: applier.failureRecords() };
    }
    case 'prune-ranges':
      // One batch per request (retention's loop sends the next), so applies queued meanwhile interleave.
      return pruneRangeBatch(till, request.request);
    case 'close': {
      for (const db of [till, agent]) {
        if (request.optimize) {
          try {
            db.pragma('optimize');
          } catch {
            // Best effort: a failing disk must not stop a shutdown.
          }
        }
        db.close();
      }
      return null;
    }
  }
}).emit;
emit({ type: 'priority', outcome: priority });

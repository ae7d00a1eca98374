import { parentPort, workerData } from 'node:worker_threads';
import { AppError, describeError } from '../errors';
import { openDatabase, storeFilePath } from '../store/database';
import { Applier } from './applier';
import type { ApplierMessage, ApplierRequest, ApplierWorkerData, SerializedError } from './applier-protocol';

/**
 * The applier's thread: its own connections to pos-sync.db and agent.db, so the long synchronous
 * work of an apply (parsing a 43 MB body, writing 200,000 range rows) never runs on the event loop
 * that answers head office and the status window. Requests are handled one at a time, in order.
 */

const port = parentPort;
if (!port) throw new Error('applier-worker must run in a worker thread');
const data = workerData as ApplierWorkerData;

const post = (message: ApplierMessage): void => port.postMessage(message);

const till = openDatabase(storeFilePath(data.dataDir, 'till'), { kind: 'till' });
const agent = openDatabase(storeFilePath(data.dataDir, 'agent'), { kind: 'agent' });
const applier = new Applier(
  till,
  agent,
  data.policy,
  {
    applied: (update) => post({ type: 'applied', update }),
    failed: (locationId, inboxId, err) => post({ type: 'failed', locationId, inboxId, message: describeError(err) }),
    reconciled: (inboxId) => post({ type: 'reconciled', inboxId }),
  },
  data.baselineSettleMs,
);

function serialize(err: unknown): SerializedError {
  if (err instanceof AppError) return { errorId: err.id, status: err.status, message: err.message };
  return { errorId: 'apply_failed', status: 500, message: describeError(err) };
}

/** After each request: the till's counters, and agent.db's WAL checkpointed here rather than on the receiver's loop. */
function housekeeping(): void {
  applier.refreshTillCounters();
  agent.pragma('wal_checkpoint(PASSIVE)');
}

port.on('message', (request: ApplierRequest) => {
  try {
    switch (request.type) {
      case 'drain': {
        const applied = applier.drain();
        housekeeping();
        post({ type: 'drained', id: request.id, applied });
        return;
      }
      case 'force-apply': {
        const forced = applier.forceApply(request.inboxId, request.actor, request.reason);
        const then = applier.drain();
        housekeeping();
        post({ type: 'forced', id: request.id, forced, then });
        return;
      }
      case 'close': {
        for (const db of [till, agent]) {
          try {
            db.pragma('optimize');
          } catch {
            // Best effort: a failing disk must not stop a shutdown.
          }
          db.close();
        }
        post({ type: 'closed', id: request.id });
        port.close();
        return;
      }
    }
  } catch (err) {
    post({ type: 'error', id: request.id, error: serialize(err) });
  }
});

post({ type: 'ready' });

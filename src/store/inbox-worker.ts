import { workerData } from 'node:worker_threads';
import { serveRequests, servePort } from '../threads/serve';
import { openDatabase, storeFilePath } from './database';
import { releaseBody } from './bodies';
import { Inbox, quarantineLimits } from './inbox';
import type { InboxRequest, InboxWorkerData } from './inbox-protocol';

/**
 * The inbox's thread: parses, validates and durably stores each delivery in agent.db (its own
 * connection), so neither JSON.parse of a large body nor its INSERT and fsync runs on the event loop
 * that answers head office (the receiver thread) or on the main thread (the status window, imports). One
 * request at a time, in arrival order, from either.
 */

const data = workerData as InboxWorkerData;
const db = openDatabase(storeFilePath(data.dataDir, 'agent'), { kind: 'agent' });
const inbox = new Inbox(db, quarantineLimits(data.dataDir, data.quarantine));

const asBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** Hands a body to `use`, then frees it: stored (or refused), the bytes are done with here; the applier reads its own copy. */
function withBody<T>(bytes: Uint8Array, use: (raw: Buffer) => T): T {
  const raw = asBuffer(bytes);
  try {
    return use(raw);
  } finally {
    releaseBody(raw);
  }
}

function handle(request: InboxRequest): unknown {
  switch (request.type) {
    case 'receive':
      return withBody(request.delivery.raw, (raw) => inbox.receive({ ...request.delivery, raw }));
    case 'receive-file':
      return inbox.receiveFile(request.delivery);
    case 'quarantine':
      return withBody(request.input.raw, (raw) => inbox.quarantine({ ...request.input, raw }));
    case 'record-refused':
      return inbox.recordRefused(request.input);
    case 'max-page-count':
      return db.pragma(`max_page_count = ${Math.max(1, Math.floor(request.pages))}`, { simple: true });
    case 'close':
      try {
        db.pragma('optimize');
      } catch {
        // Best effort: a failing disk must not stop a shutdown.
      }
      db.close();
      return null;
    case 'attach-port':
      // The receiver thread's requests arrive here directly: its acks never wait for the main thread.
      servePort<InboxRequest>(request.port, handle);
      return null;
  }
}

serveRequests<InboxRequest>(handle);

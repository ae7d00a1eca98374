import { openReadOnly, storeFilePath } from '../../src/store/database';
import { item, price, update } from '../helpers/fixtures';

/** What the body-file fault suites (kill and power loss) share: a large update, its sending, and reading what was kept. */

/** A first update of 600 items for `location`, well over the suites' webhook.fileBodyFromBytes. */
export function largeUpdate(location: number, firstPlu: number, idPrefix: string, pence: number): Buffer {
  const items = Array.from({ length: 600 }, (_, i) => item(String(firstPlu + i), `${idPrefix}-${i}`, [price('2026-12-01', '9999-12-31', 'Eat In', `${pence + (i % 7)}.${String(i % 100).padStart(2, '0')}`)]));
  return Buffer.from(JSON.stringify(update(location, 1, 0, items)));
}

export type PostOutcome = { status: number; json: unknown } | { error: string };

/** POSTs a body; a connection the agent dropped (killed, or failing its writes) is an outcome too. */
export async function post(url: string, body: Buffer, timeoutMs = 30_000): Promise<PostOutcome> {
  try {
    const res = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(timeoutMs) });
    return { status: res.status, json: await res.json() };
  } catch (err) {
    return { error: String(err) };
  }
}

export interface InboxRow {
  location_id: number;
  change_sequence: number;
  state: string;
  body_bytes: number;
  body_sha256: string;
  /** The body file the row names; null for a body kept in agent.db. */
  file: string | null;
}

export function inboxRows(dataDir: string): InboxRow[] {
  const db = openReadOnly(storeFilePath(dataDir, 'agent'));
  try {
    return db
      .prepare<[], InboxRow>('SELECT i.location_id, i.change_sequence, i.state, i.body_bytes, i.body_sha256, f.file FROM inbox i LEFT JOIN inbox_body_files f ON f.inbox_id = i.id ORDER BY i.id')
      .all();
  } finally {
    db.close();
  }
}

/** Prices the till's view shows for `location`. */
export function tillPrices(dataDir: string, location: number): number {
  const db = openReadOnly(storeFilePath(dataDir, 'till'));
  try {
    return db.prepare<[number], { n: number }>('SELECT count(*) AS n FROM pos_prices WHERE location_id = ?').get(location)!.n;
  } finally {
    db.close();
  }
}

import fs from 'node:fs';
import { withReader } from '../../src/dev/child-agent';
import { compareStates, stateFromViews, type AckRecord, type DayState } from '../../src/dev/publisher';
import { databasePath, storeFilePath } from '../../src/store/database';

export function lastSequences(dataDir: string): Map<number, number> {
  if (!fs.existsSync(databasePath(dataDir))) return new Map();
  return withReader(dataDir, (db) => {
    const rows = db.prepare('SELECT location_id, last_change_sequence FROM pos_sync_state').all() as { location_id: number; last_change_sequence: number | null }[];
    return new Map(rows.filter((r) => r.last_change_sequence !== null).map((r) => [r.location_id, r.last_change_sequence as number]));
  });
}

export function pendingUpdates(dataDir: string): number {
  if (!fs.existsSync(storeFilePath(dataDir, 'agent'))) return 0;
  return withReader(dataDir, (db) => (db.prepare("SELECT count(*) AS n FROM inbox WHERE state = 'pending'").get() as { n: number }).n, 'agent');
}

export function reachedExpected(dataDir: string, expected: DayState): boolean {
  const got = lastSequences(dataDir);
  return [...expected.lastChangeSequence].every(([loc, seq]) => got.get(loc) === seq);
}

export interface EndStateReport {
  readonly differences: string[];
  readonly integrity: string;
  readonly missingAcks: AckRecord[];
  readonly inboxStates: Record<string, number>;
  readonly duplicateInboxRows: number;
}

/**
 * The end-of-run checks every fault test makes: POS views equal the reference, every update the agent
 * answered 200 for is in the inbox (same bytes), and SQLite's integrity check passes.
 */
export function checkEndState(dataDir: string, expected: DayState, acked: readonly AckRecord[]): EndStateReport {
  const { differences, integrity: tillIntegrity } = withReader(dataDir, (till) => ({
    differences: compareStates(expected, stateFromViews(till)),
    integrity: (till.pragma('integrity_check') as { integrity_check: string }[]).map((r) => r.integrity_check).join('; '),
  }));
  return withReader(dataDir, (db) => {
    const agentIntegrity = (db.pragma('integrity_check') as { integrity_check: string }[]).map((r) => r.integrity_check).join('; ');
    const integrity = tillIntegrity === agentIntegrity ? tillIntegrity : `till: ${tillIntegrity}; agent: ${agentIntegrity}`;
    const has = db.prepare('SELECT 1 FROM inbox WHERE location_id = ? AND change_sequence = ? AND body_sha256 = ?');
    const missingAcks = acked.filter((a) => !has.get(a.locationId, a.changeSequence, a.sha256));
    const inboxStates = Object.fromEntries(
      (db.prepare('SELECT state, count(*) AS n FROM inbox GROUP BY state').all() as { state: string; n: number }[]).map((r) => [r.state, r.n]),
    );
    const duplicateInboxRows = (
      db.prepare('SELECT count(*) AS n FROM (SELECT 1 FROM inbox GROUP BY location_id, change_sequence HAVING count(*) > 1)').get() as { n: number }
    ).n;
    return { differences, integrity, missingAcks, inboxStates, duplicateInboxRows };
  }, 'agent');
}

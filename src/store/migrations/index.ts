import * as agent001 from './agent/001-core';
import * as agent002 from './agent/002-body-layout';
import * as agent003 from './agent/003-retention-indexes';
import * as agent004 from './agent/004-body-files';
import * as agent005 from './agent/005-deliveries-by-update';
import * as staff001 from './staff/001-cache';
import * as till001 from '../../till/migrations/001-contract';
import * as till002 from '../../till/migrations/002-changes-and-location-today';
import * as till003 from '../../till/migrations/003-today-once-per-location';
import * as till004 from '../../till/migrations/004-location-days';
import * as till005 from '../../till/migrations/005-ranges-by-end-date';

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/**
 * Each of the agent's three files has its own numbered migrations (docs/operations.md, "Data files").
 * Append only; never edit one that has shipped.
 */

/** pos-sync.db: the till's file, the POS contract only. */
export const TILL_MIGRATIONS: readonly Migration[] = [{ version: 1, ...till001 }, { version: 2, ...till002 }, { version: 3, ...till003 }, { version: 4, ...till004 }, { version: 5, ...till005 }];

/** agent.db: inbox, deliveries, quarantine, warnings, audit, operations state. */
export const AGENT_MIGRATIONS: readonly Migration[] = [{ version: 1, ...agent001 }, { version: 2, ...agent002 }, { version: 3, ...agent003 }, { version: 4, ...agent004 }, { version: 5, ...agent005 }];

/** staff.db: the staff cache (personal data). */
export const STAFF_MIGRATIONS: readonly Migration[] = [{ version: 1, ...staff001 }];

/**
 * The migrations 0.1 recorded in its single file (everything in pos-sync.db), by name only: they are
 * never run again. A file that has them is split into the three files once, on the first start of
 * 0.2 (src/store/split.ts), and a 0.1 backup is recognised by them. Their SQL is in the history of
 * src/store/migrations/00*.ts at fe7fdd1, and a file it made is test/fixtures/legacy-0.1/pos-sync.db.
 */
export const LEGACY_SINGLE_FILE_MIGRATIONS: readonly Pick<Migration, 'version' | 'name'>[] = [
  { version: 1, name: 'core' },
  { version: 2, name: 'staff' },
  { version: 3, name: 'ops' },
];

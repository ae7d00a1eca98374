import * as agent001 from './agent/001-core';
import * as legacy001 from './legacy/001-core';
import * as legacy002 from './legacy/002-staff';
import * as legacy003 from './legacy/003-ops';
import * as staff001 from './staff/001-cache';
import * as till001 from './till/001-contract';

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
export const TILL_MIGRATIONS: readonly Migration[] = [{ version: 1, ...till001 }];

/** agent.db: inbox, deliveries, quarantine, warnings, audit, operations state. */
export const AGENT_MIGRATIONS: readonly Migration[] = [{ version: 1, ...agent001 }];

/** staff.db: the staff cache (personal data). */
export const STAFF_MIGRATIONS: readonly Migration[] = [{ version: 1, ...staff001 }];

/**
 * The single-file layout of version 0.1 (everything in pos-sync.db). Never run again: a file with
 * these migrations is split into the three files once, on the first start of 0.2 (src/store/split.ts).
 */
export const LEGACY_SINGLE_FILE_MIGRATIONS: readonly Migration[] = [
  { version: 1, ...legacy001 },
  { version: 2, ...legacy002 },
  { version: 3, ...legacy003 },
];

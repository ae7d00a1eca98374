import { openDatabase, storeFilePath, type Db, type StoreFileKind } from './database';
import { splitLegacyIfNeeded, type SplitReport } from './split';
import { refuseOlderData } from './upgrade';

/** The agent's three connections, one per file (see database.ts). */
export interface StoreConnections {
  /** pos-sync.db, the till's file. Only the applier writes its menu rows. */
  readonly till: Db;
  /** agent.db: inbox, deliveries, quarantine, warnings, audit, operations state. */
  readonly agent: Db;
  /** staff.db: the staff cache. */
  readonly staff: Db;
}

export interface OpenStoreOptions {
  /**
   * Apply missing migrations (the default; with `olderData: 'refuse'` that leaves only new files to
   * migrate); a tool that must not change files passes false.
   */
  readonly migrate?: boolean;
  /**
   * Files an older version left: `upgrade` them (split and migrate: the agent's start, `restore`), or
   * `refuse` the folder (`site_not_upgraded`) before anything is opened, changing nothing: every
   * other command (src/store/upgrade.ts). New or missing files are made either way.
   */
  readonly olderData?: 'upgrade' | 'refuse';
  /** Called when a 0.1 single-file folder was split on this open. */
  readonly onSplit?: (report: SplitReport) => void;
  /** Connection settings per file (the receiver's agent.db connection does not auto-checkpoint). */
  readonly autoCheckpoint?: Partial<Record<StoreFileKind, boolean>>;
}

/**
 * Opens (creating and migrating as needed) the three files of a data folder. A folder written by 0.1
 * (one file) is split first, once (src/store/split.ts). Refuses any file a newer agent wrote, and,
 * with `olderData: 'refuse'`, a folder an older one left.
 */
export function openStore(dataDir: string, options: OpenStoreOptions = {}): StoreConnections {
  if (options.olderData === 'refuse') refuseOlderData(dataDir);
  const migrate = options.migrate ?? true;
  if (migrate) {
    const report = splitLegacyIfNeeded(dataDir);
    if (report) options.onSplit?.(report);
  }
  const opened: Db[] = [];
  const open = (kind: StoreFileKind): Db => {
    const auto = options.autoCheckpoint?.[kind];
    const db = openDatabase(storeFilePath(dataDir, kind), { kind, migrate, ...(auto === undefined ? {} : { autoCheckpoint: auto }) });
    opened.push(db);
    return db;
  };
  try {
    return { till: open('till'), agent: open('agent'), staff: open('staff') };
  } catch (err) {
    for (const db of opened) db.close();
    throw err;
  }
}

export function closeStore(store: StoreConnections, options: { optimize?: boolean } = {}): void {
  for (const db of [store.till, store.agent, store.staff]) {
    if (!db.open) continue;
    if (options.optimize !== false) {
      try {
        // Keeps the query planner's statistics current for the till's lookups (SQLite's advice).
        db.pragma('optimize');
      } catch {
        // Best effort: a failing disk must not stop a shutdown.
      }
    }
    db.close();
  }
}

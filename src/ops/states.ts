/**
 * The state each operations service reports (tunnel, disk, clock, backup, retention): what the status
 * window's panels and banners (panels.ts), `status` and the state files are made from. Types only, and
 * no import of any service, so the services and the panels that describe them both depend on this
 * module and never on each other.
 */
import type { RetentionDayKey } from '../admin/settings';
import type { Config } from '../config/schema';
import type { SkewObservation, TimezoneMismatch } from '../clock';

export type TunnelPhase = 'starting' | 'running' | 'unreachable' | 'restarting' | 'stopped';

export interface TunnelCheck {
  readonly at: string;
  readonly ok: boolean;
  readonly status: number | null;
  readonly ms: number;
  readonly error: string | null;
}

export interface TunnelState {
  readonly phase: TunnelPhase;
  /** Why it is not simply running: the exit, the failed check, the wake-up. */
  readonly reason: string | null;
  readonly publicUrl: string;
  readonly pid: number | null;
  readonly startedAt: string | null;
  readonly restarts: number;
  readonly nextRestartAt: string | null;
  readonly lastExit: { code: number | null; signal: string | null; at: string } | null;
  readonly lastCheck: TunnelCheck | null;
  readonly consecutiveFailedChecks: number;
  readonly lastWakeAt: string | null;
  /** The tunnel program's last output lines, secrets redacted. */
  readonly output: readonly string[];
  readonly updatedAt: string;
  /** Process writing this state (so `status` can tell a stale file). */
  readonly agentPid: number;
}

export type DiskLevel = 'ok' | 'low' | 'critical' | 'unknown';

export interface DiskState {
  readonly level: DiskLevel;
  readonly freeBytes: number | null;
  readonly totalBytes: number | null;
  readonly databaseBytes: number;
  readonly walBytes: number;
  readonly message: string | null;
  readonly checkedAt: string;
}

export interface ClockState {
  readonly machineTimezone: string;
  readonly timezoneMismatches: readonly TimezoneMismatch[];
  readonly observations: readonly SkewObservation[];
  /** Observations showing the system clock off by more than clock.maxSkewSeconds. */
  readonly wrongClock: readonly SkewObservation[];
  /** What the window and `status` show, one sentence each. */
  readonly warnings: readonly string[];
}

export interface BackupFile {
  /** The set's folder (or a 0.1 single file). */
  readonly file: string;
  readonly name: string;
  readonly bytes: number;
  /** When it was taken (from its name). */
  readonly takenAt: string;
  readonly kind: 'set' | 'single-file';
}

export interface BackupState {
  readonly dir: string;
  readonly lastBackup: BackupFile | null;
  readonly nextDueAt: string | null;
  readonly lastError: string | null;
  readonly running: boolean;
}

export interface PruneCounts {
  rawBodies: number;
  conflictBodies: number;
  quarantine: number;
  deliveries: number;
  priceRanges: number;
  availabilityRanges: number;
  /** Inbox rows of finished updates. */
  updates: number;
  /** The till's applied_updates records. */
  appliedRecords: number;
  warnings: number;
  audit: number;
}

export interface PruneReport {
  readonly counts: PruneCounts;
  readonly batches: number;
  /** The longest single transaction, in ms: what a writer could have waited behind. */
  readonly longestBatchMs: number;
  readonly totalMs: number;
  /** Pruned bodies whose files another program held open: left for the next start's sweep. */
  readonly heldBodyFiles: number;
}

export type RetentionDays = Pick<Config['retention'], RetentionDayKey>;

export interface EffectiveRetention {
  readonly days: RetentionDays;
  /** Where each period comes from: the configuration, or the manager's setting in the status window. */
  readonly source: Record<RetentionDayKey, 'config' | 'window'>;
}

export interface RetentionState {
  readonly enabled: boolean;
  /** The periods the next run uses (read from the configuration and the window's settings now). */
  readonly effective: EffectiveRetention;
  /** The window's settings file could not be read: the configured periods are used meanwhile. */
  readonly settingsError: string | null;
  readonly lastRunAt: string | null;
  readonly lastReport: PruneReport | null;
  readonly lastError: string | null;
  readonly running: boolean;
}

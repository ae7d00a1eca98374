/** The JSON the admin API returns (mirrors src/store/queries.ts and src/admin/server.ts). */
import type { OperationsAlert, StatusLocation } from '../../src/admin/summary';
import type { ComingUpReply, DeliveryRow, TillAnswer, UpcomingChange } from '../../src/store/read-models';
import type { RefusalSnapshot } from '../../src/webhook/refusals';

export type { ComingUpReply, DeliveryRow, OperationsAlert, StatusLocation, TillAnswer, UpcomingChange };

export interface StatusResponse {
  readonly generatedAt: string;
  readonly paused: boolean;
  /** Who paused and when (null when never paused). */
  readonly pausedBy?: string | null;
  readonly pausedAt?: string | null;
  readonly gapAlertMinutes: number;
  /** The ` --config FILE` a command needs to reach this agent ('' when none is needed). */
  readonly cliConfigArgument?: string;
  /** sync.baselineSettleSeconds: how long a new location's first deliveries are collected. */
  readonly baselineSettleSeconds: number;
  readonly locations: StatusLocation[];
  /** Refused webhook calls per reason (src/webhook/refusals.ts). */
  readonly refusals?: RefusalSnapshot;
  /** Banners from the operations services (tunnel, disk, clock, backups). */
  readonly alerts: OperationsAlert[];
}

export interface DailyStats {
  readonly timeZone: string;
  readonly days: string[];
  readonly delivered: number[];
  readonly rejected: number[];
  readonly applyMsMean: (number | null)[];
  readonly applyMsMax: (number | null)[];
}

export type RetentionDayKey = 'rawPayloadDays' | 'quarantineDays' | 'rangeDays' | 'deliveryDays';

export interface SettingsResponse {
  readonly settings: { readonly startAtLogin: boolean; readonly retention: Partial<Record<RetentionDayKey, number>> };
  readonly retention: { readonly enabled: boolean; readonly configured: Record<RetentionDayKey, number> };
  readonly settingsFile: string;
  readonly shell: 'browser' | 'electron';
  readonly webhookUrl: string | null;
  readonly webhookUrlIsPublic: boolean;
  readonly localWebhookUrl: string | null;
  readonly dataDir: string;
}

export interface Panel {
  readonly name: string;
  readonly title: string;
  readonly items: { readonly label: string; readonly value: string; readonly level?: 'ok' | 'warn' | 'error' }[];
  readonly actions: { readonly id: string; readonly label: string; readonly confirm: string | null }[];
}

/** The JSON the admin API returns (mirrors src/store/queries.ts and src/admin/server.ts). */
import type { OperationsAlert, StatusLocation } from '../../src/admin/summary';
import type { DeliveryRow, TillAnswer } from '../../src/store/read-models';

export type { DeliveryRow, OperationsAlert, StatusLocation, TillAnswer };

export interface StatusResponse {
  readonly generatedAt: string;
  readonly paused: boolean;
  readonly gapAlertMinutes: number;
  /** sync.baselineSettleSeconds: how long a new location's first deliveries are collected. */
  readonly baselineSettleSeconds: number;
  readonly locations: StatusLocation[];
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

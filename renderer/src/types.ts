/** The JSON the admin API returns (mirrors src/store/queries.ts and src/admin/server.ts). */
import type { OperationsAlert, StatusLocation, StatusReply } from '../../src/admin/summary';
import type { ComingUpReply, DeliveryRow, TillAnswer, UpcomingChange } from '../../src/store/read-models';
import type { WebhookTokenState } from './webhook-token';

export type { ComingUpReply, DeliveryRow, OperationsAlert, StatusLocation, TillAnswer, UpcomingChange };

/** GET /api/status (src/admin/summary.ts). */
export type StatusResponse = StatusReply;

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
  /** Whether the webhook checks a token (revealed by POST /api/webhook-token/reveal), never its value. */
  readonly webhookToken: WebhookTokenState;
  readonly dataDir: string;
}

export interface Panel {
  readonly name: string;
  readonly title: string;
  readonly items: { readonly label: string; readonly value: string; readonly level?: 'ok' | 'warn' | 'error' }[];
  readonly actions: { readonly id: string; readonly label: string; readonly confirm: string | null }[];
}

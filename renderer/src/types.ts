/** The JSON the admin API returns (mirrors src/store/queries.ts and src/admin/server.ts). */
import type { OperationsAlert, StatusLocation } from '../../src/admin/summary';

export type { OperationsAlert, StatusLocation };

export interface StatusResponse {
  readonly generatedAt: string;
  readonly paused: boolean;
  readonly gapAlertMinutes: number;
  readonly locations: StatusLocation[];
  /** Banners from the operations services (tunnel, disk, clock, backups). */
  readonly alerts: OperationsAlert[];
}

export interface DeliveryRow {
  readonly id: number;
  readonly receivedAt: string;
  readonly sender: string | null;
  readonly source: string;
  readonly bytes: number;
  readonly locationId: number | null;
  readonly changeSequence: number | null;
  readonly result: 'applied' | 'waiting' | 'duplicate' | 'conflict' | 'stale' | 'superseded' | 'rejected';
  readonly httpStatus: number;
  readonly reason: string | null;
  readonly inboxId: number | null;
  readonly quarantineId: number | null;
  readonly applyMs: number | null;
}

export interface DailyStats {
  readonly timeZone: string;
  readonly days: string[];
  readonly delivered: number[];
  readonly rejected: number[];
  readonly applyMsMean: (number | null)[];
  readonly applyMsMax: (number | null)[];
}

export interface TillAnswer {
  readonly locationId: number;
  readonly plu: string;
  readonly itemId: string;
  readonly itemName: string;
  readonly itemType: string;
  readonly prices: {
    readonly tariffName: string;
    readonly priceModel: string | null;
    readonly taxCode: string;
    readonly taxRate: number;
    readonly sellPriceMinor: number;
    readonly sellPrice: string;
    readonly currency: string;
    readonly dateFrom: string;
    readonly dateTo: string;
  }[];
  readonly availability: { readonly mealPeriod: string; readonly status: 'AVAILABLE' | 'UNAVAILABLE'; readonly dateFrom: string; readonly dateTo: string }[];
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

import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { AppError } from '../errors';

/**
 * Settings a manager changes from the status window. They live in <dataDir>/ui-settings.json, apart
 * from the agent configuration (which the installer or IT owns and the window never rewrites).
 */
/** Whole days, 1 to 10 years: a manager can shorten or lengthen what is kept, not switch it off. */
const retentionDays = z.number().int().min(1).max(3650);

/** The retention periods a manager may set in the window (the same names as config `retention`). */
export const RETENTION_DAY_KEYS = ['rawPayloadDays', 'quarantineDays', 'rangeDays', 'deliveryDays'] as const;
export type RetentionDayKey = (typeof RETENTION_DAY_KEYS)[number];

/**
 * Retention periods set in the window. A key that is present wins over the configuration's
 * `retention.<key>`; an absent key means "as configured". The retention service reads this file at
 * every run, so a change applies from the next prune (or Prune now) without a restart.
 */
export const RetentionOverridesSchema = z.strictObject({
  rawPayloadDays: retentionDays.optional(),
  quarantineDays: retentionDays.optional(),
  rangeDays: retentionDays.optional(),
  deliveryDays: retentionDays.optional(),
});
export type RetentionOverrides = z.infer<typeof RetentionOverridesSchema>;

export const UiSettingsSchema = z.strictObject({
  /** Start the desktop app when the user logs in (applied by the Electron shell; no effect headless). */
  startAtLogin: z.boolean().default(true),
  retention: RetentionOverridesSchema.default({}),
});

export type UiSettings = z.infer<typeof UiSettingsSchema>;

/**
 * What the window may send: every key optional, nothing else. Retention keys merge one by one; null
 * removes a key's override (back to the configured value).
 */
export const UiSettingsPatchSchema = z.strictObject({
  startAtLogin: z.boolean().optional(),
  retention: z
    .strictObject({
      rawPayloadDays: retentionDays.nullable().optional(),
      quarantineDays: retentionDays.nullable().optional(),
      rangeDays: retentionDays.nullable().optional(),
      deliveryDays: retentionDays.nullable().optional(),
    })
    .optional(),
});

export const UI_SETTINGS_FILE = 'ui-settings.json';

export class UiSettingsStore {
  readonly file: string;
  private current: UiSettings;

  constructor(dataDir: string) {
    this.file = uiSettingsFile(dataDir);
    this.current = this.read();
  }

  private read(): UiSettings {
    return readUiSettingsFile(this.file);
  }

  get(): UiSettings {
    return { ...this.current, retention: { ...this.current.retention } };
  }

  /** Validates, merges and writes atomically (temp file + rename), so a crash never leaves half a file. */
  update(patch: unknown): UiSettings {
    const parsed = UiSettingsPatchSchema.safeParse(patch);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const message = issue?.code === 'unrecognized_keys' ? `unknown setting(s): ${issue.keys.join(', ')}` : `${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`;
      throw new AppError('invalid_settings', 400, message);
    }
    const { retention: retentionPatch, ...rest } = parsed.data;
    const retention: Record<string, number> = { ...this.current.retention };
    for (const [key, value] of Object.entries(retentionPatch ?? {})) {
      if (value === null) delete retention[key];
      else if (value !== undefined) retention[key] = value;
    }
    const next = UiSettingsSchema.parse({ ...this.current, ...rest, retention });
    fs.mkdirSync(path.dirname(this.file), { recursive: true });
    const tmp = `${this.file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
    fs.renameSync(tmp, this.file);
    this.current = next;
    return this.get();
  }
}

/** Reads and validates a manager settings file; defaults when it does not exist. */
export function readUiSettingsFile(file: string): UiSettings {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return UiSettingsSchema.parse({});
    throw err;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new AppError('ui_settings_invalid', 500, `${file} is not valid JSON; fix or delete it`);
  }
  const parsed = UiSettingsSchema.safeParse(json);
  if (!parsed.success) throw new AppError('ui_settings_invalid', 500, `${file}: ${parsed.error.issues[0]?.path.join('.') ?? ''} ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  return parsed.data;
}

/** The manager settings file of a data folder (for readers in other modules, e.g. the retention service). */
export function uiSettingsFile(dataDir: string): string {
  return path.join(dataDir, UI_SETTINGS_FILE);
}

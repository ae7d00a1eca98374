import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { AppError } from '../errors';

/**
 * Settings a manager changes from the status window. They live in <dataDir>/ui-settings.json, apart
 * from the agent configuration (which the installer or IT owns and the window never rewrites).
 */
export const UiSettingsSchema = z.strictObject({
  /** Start the desktop app when the user logs in (applied by the Electron shell; no effect headless). */
  startAtLogin: z.boolean().default(true),
});

export type UiSettings = z.infer<typeof UiSettingsSchema>;

/** What the window may send: every key optional, nothing else. */
export const UiSettingsPatchSchema = UiSettingsSchema.partial();

export const UI_SETTINGS_FILE = 'ui-settings.json';

export class UiSettingsStore {
  readonly file: string;
  private current: UiSettings;

  constructor(dataDir: string) {
    this.file = path.join(dataDir, UI_SETTINGS_FILE);
    this.current = this.read();
  }

  private read(): UiSettings {
    let text: string;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return UiSettingsSchema.parse({});
      throw err;
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new AppError('ui_settings_invalid', 500, `${this.file} is not valid JSON; fix or delete it`);
    }
    const parsed = UiSettingsSchema.safeParse(json);
    if (!parsed.success) throw new AppError('ui_settings_invalid', 500, `${this.file}: ${parsed.error.issues[0]?.path.join('.') ?? ''} ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    return parsed.data;
  }

  get(): UiSettings {
    return { ...this.current };
  }

  /** Validates, merges and writes atomically (temp file + rename), so a crash never leaves half a file. */
  update(patch: unknown): UiSettings {
    const parsed = UiSettingsPatchSchema.safeParse(patch);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const message = issue?.code === 'unrecognized_keys' ? `unknown setting(s): ${issue.keys.join(', ')}` : `${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`;
      throw new AppError('invalid_settings', 400, message);
    }
    const next = UiSettingsSchema.parse({ ...this.current, ...parsed.data });
    fs.mkdirSync(path.dirname(this.file), { recursive: true });
    const tmp = `${this.file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
    fs.renameSync(tmp, this.file);
    this.current = next;
    return { ...next };
  }
}

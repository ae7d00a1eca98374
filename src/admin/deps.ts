import type { Agent } from '../agent';
import type { Logger } from '../log';
import type { MetricsEndpoint } from './routes/metrics';
import type { SecretsBridge } from './routes/secrets';
import type { UiSettings, UiSettingsStore } from './settings';

/** The agent as the admin server uses it (an interface so tests and the Electron shell can see what is used). */
export type AdminAgent = Pick<Agent, 'core' | 'config' | 'isPaused' | 'setPaused' | 'webhook' | 'service' | 'importPayload' | 'forceApply' | 'acknowledgeWarnings' | 'refusals' | 'drainNow' | 'applyProgress' | 'resuming' | 'applyRetries'>;

export interface AdminDeps {
  readonly agent: AdminAgent;
  /** The admin token, or where to get the current one (it can be rotated while the agent runs). */
  readonly token: string | (() => string);
  readonly settings: UiSettingsStore;
  readonly rendererDir: string;
  /** electron: the window runs inside the desktop app (start-at-login applies there). */
  readonly shell: 'browser' | 'electron';
  readonly log: Logger;
  /** Names of services that may add an Operations panel (see extensions.ts). */
  readonly panelServices: readonly string[];
  readonly onSettingsChanged?: (settings: UiSettings) => void;
  /** Desktop app only: secrets set from the window go to the shell's encrypted store (routes/secrets.ts). */
  readonly secrets?: SecretsBridge;
  /** GET /metrics for a Prometheus scraper (routes/metrics.ts); absent: not served. */
  readonly metrics?: MetricsEndpoint;
}

/** The current admin token (a fixed one, or the rotating one's reader). */
export function tokenReader(token: AdminDeps['token']): () => string {
  return typeof token === 'string' ? ((fixed: string) => () => fixed)(token) : token;
}

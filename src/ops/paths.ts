import path from 'node:path';
import type { Config } from '../config/schema';

/** Where the operations features keep their files, all under the data folder unless configured. */

export function backupDir(config: Readonly<Config>): string {
  return config.backup.dir ? path.resolve(config.dataDir, config.backup.dir) : path.join(config.dataDir, 'backups');
}

export function secretsFile(config: Pick<Config, 'dataDir' | 'secrets'>): string {
  return config.secrets.file ? path.resolve(config.dataDir, config.secrets.file) : path.join(config.dataDir, 'secrets.json');
}

export function logDir(config: Readonly<Config>): string {
  return config.log.dir ?? path.join(config.dataDir, 'logs');
}

/** Written by a running agent (see instance.ts). */
export function pidFile(dataDir: string): string {
  return path.join(dataDir, 'agent.pid');
}

/** The tunnel supervisor's last known state, for `status` in another process. */
export function tunnelStateFile(dataDir: string): string {
  return path.join(dataDir, 'tunnel-state.json');
}

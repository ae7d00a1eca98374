import fs from 'node:fs';
import os from 'node:os';
import type { AgentService } from '../agent';
import { AppError } from '../errors';
import { pidFile } from './paths';

export interface InstanceRecord {
  readonly pid: number;
  readonly hostname: string;
  readonly startedAt: string;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else, which still means "running".
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The agent running on this data folder, if any (a pid file whose process is still alive). */
export function runningAgent(dataDir: string): InstanceRecord | null {
  let record: InstanceRecord;
  try {
    record = JSON.parse(fs.readFileSync(pidFile(dataDir), 'utf8')) as InstanceRecord;
  } catch {
    return null;
  }
  if (typeof record.pid !== 'number') return null;
  if (record.hostname !== os.hostname()) return null;
  return isAlive(record.pid) ? record : null;
}

/** Refuses an offline operation (restore, compact) while an agent has the database open. */
export function assertNoRunningAgent(dataDir: string, what: string): void {
  const running = runningAgent(dataDir);
  if (running) {
    throw new AppError(
      'agent_running',
      409,
      `an agent (pid ${running.pid}, started ${running.startedAt}) is running on ${dataDir}: stop it (or quit the status window) before ${what}`,
    );
  }
}

/**
 * Writes <dataDir>/agent.pid while the agent runs, so `restore` and `compact` in another process can
 * tell that the database is in use. A pid left behind by a crash is ignored once that process is gone.
 */
export class InstanceService implements AgentService {
  readonly name = 'instance';
  private file: string | null = null;

  async start(agent: { config: { dataDir: string } }): Promise<void> {
    this.file = pidFile(agent.config.dataDir);
    const record: InstanceRecord = { pid: process.pid, hostname: os.hostname(), startedAt: new Date().toISOString() };
    fs.writeFileSync(this.file, `${JSON.stringify(record)}\n`);
  }

  async stop(): Promise<void> {
    if (!this.file) return;
    try {
      const record = JSON.parse(fs.readFileSync(this.file, 'utf8')) as InstanceRecord;
      if (record.pid === process.pid) fs.rmSync(this.file, { force: true });
    } catch {
      // Already gone.
    }
    this.file = null;
  }
}
